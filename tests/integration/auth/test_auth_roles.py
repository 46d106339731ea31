"""Roles: the first admin (settings or CLI). Host access is asked for and granted through
the approval workflow: test_auth_approvals.py."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import pytest

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.auth import (
    SignIn,
    TokenPair,
)
from services.auth.accounts import ensure_admin
from tests.integration.auth.harness import PASSWORD, AuthHarness

ROOT = Path(__file__).resolve().parents[3]


async def _admin(auth: AuthHarness) -> str:
    account = await ensure_admin(auth.deps.engine, auth.deps.passwords, auth.email("admin"))
    return account.user_id


async def test_admin_from_settings_is_created_once_and_never_overwritten(
    auth: AuthHarness,
) -> None:
    email = auth.email("boss")
    with pytest.raises(ServiceError) as weak:
        await ensure_admin(auth.deps.engine, auth.deps.passwords, email, password="password")
    assert weak.value.code == codes.WEAK_PASSWORD
    first = await ensure_admin(
        auth.deps.engine, auth.deps.passwords, email, password="Boss-Pass-2024"
    )
    assert first.created and first.generated_password is None
    # A restart with another configured password keeps the one in use.
    again = await ensure_admin(
        auth.deps.engine, auth.deps.passwords, email, password="Changed-In-Env-9"
    )
    assert (again.user_id, again.created) == (first.user_id, False)
    pair = await auth.call(
        subjects.AUTH_SIGN_IN, SignIn(email=email, password="Boss-Pass-2024"), TokenPair
    )
    assert pair.user.roles == ("player", "host", "admin")


async def _create_admin_cli(database_url: str, *args: str) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KALARO_")}
    env.pop("DATABASE_URL", None)
    env["KALARO_DATABASE_URL"] = database_url
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.auth",
        "create-admin",
        *args,
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode or 0, out.decode(), err.decode()


async def test_create_admin_cli_generates_a_password_that_signs_in(
    auth: AuthHarness, database_url: str
) -> None:
    email = auth.email("first-admin")
    code, out, err = await _create_admin_cli(database_url, "--email", email, "--name", "Ate Admin")
    assert code == 0, err
    assert f"admin created: {email}" in out
    found = re.search(r"^password: (\S+)$", out, re.MULTILINE)
    assert found, out
    password = found.group(1)
    assert len(password) >= 20
    pair = await auth.call(subjects.AUTH_SIGN_IN, SignIn(email=email, password=password), TokenPair)
    assert pair.user.roles == ("player", "host", "admin")
    assert pair.user.display_name == "Ate Admin"

    # Promoting an existing player keeps their password (nothing printed).
    player = auth.email()
    await auth.sign_up(player)
    code, out, err = await _create_admin_cli(database_url, "--email", player)
    assert code == 0, err
    assert "password: unchanged" in out
    promoted = await auth.call(
        subjects.AUTH_SIGN_IN, SignIn(email=player, password=PASSWORD), TokenPair
    )
    assert "admin" in promoted.user.roles
