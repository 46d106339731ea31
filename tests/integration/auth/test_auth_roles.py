"""Roles: host requests decided by admins, and the first admin (settings or CLI)."""

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
    DecideHostRequest,
    GetProfile,
    GetPublicKeys,
    HostRequest,
    HostRequestList,
    ListHostRequests,
    PublicKeys,
    Refresh,
    RequestHost,
    SignIn,
    TokenPair,
    UserProfile,
)
from kalaro.tokens import verify_access_token
from services.auth.accounts import ensure_admin
from tests.integration.auth.harness import PASSWORD, AuthHarness

ROOT = Path(__file__).resolve().parents[3]


async def _admin(auth: AuthHarness) -> str:
    account = await ensure_admin(auth.deps.engine, auth.deps.passwords, auth.email("admin"))
    return account.user_id


async def test_host_request_approved_by_an_admin(auth: AuthHarness) -> None:
    admin_id = await _admin(auth)
    player = await auth.sign_up(name="Aling Nena")
    user_id = player.user.user_id

    asked = await auth.call(
        subjects.AUTH_REQUEST_HOST,
        RequestHost(user_id=user_id, note=" I run Friday games "),
        HostRequest,
    )
    assert (asked.status, asked.note, asked.display_name) == (
        "pending",
        "I run Friday games",
        "Aling Nena",
    )
    again = await auth.call(subjects.AUTH_REQUEST_HOST, RequestHost(user_id=user_id), HostRequest)
    assert again.request_id == asked.request_id  # asking twice: the same request

    pending = await auth.call(subjects.AUTH_LIST_HOST_REQUESTS, ListHostRequests(), HostRequestList)
    assert [r.request_id for r in pending.requests] == [asked.request_id]

    # A player cannot decide, not even their own request.
    err = await auth.refused(
        subjects.AUTH_DECIDE_HOST_REQUEST,
        DecideHostRequest(request_id=asked.request_id, admin_id=user_id, approve=True),
        HostRequest,
    )
    assert err.code == codes.FORBIDDEN
    err = await auth.refused(
        subjects.AUTH_DECIDE_HOST_REQUEST,
        DecideHostRequest(request_id=asked.request_id, admin_id="no-such-admin", approve=True),
        HostRequest,
    )
    assert err.code == codes.FORBIDDEN
    profile = await auth.call(subjects.AUTH_PROFILE, GetProfile(user_id=user_id), UserProfile)
    assert profile.roles == ("player",)

    decided = await auth.call(
        subjects.AUTH_DECIDE_HOST_REQUEST,
        DecideHostRequest(
            request_id=asked.request_id, admin_id=admin_id, approve=True, reason="welcome"
        ),
        HostRequest,
    )
    assert (decided.status, decided.decided_by, decided.reason) == ("approved", admin_id, "welcome")
    assert decided.decided_at is not None
    profile = await auth.call(subjects.AUTH_PROFILE, GetProfile(user_id=user_id), UserProfile)
    assert profile.roles == ("player", "host")

    # The next refresh carries the new role in the access token.
    keys = await auth.call(subjects.AUTH_PUBLIC_KEYS, GetPublicKeys(), PublicKeys)
    fresh = await auth.call(
        subjects.AUTH_REFRESH, Refresh(refresh_token=player.refresh_token), TokenPair
    )
    claims = verify_access_token(fresh.access_token, list(keys.keys), keys.issuer, keys.audience)
    assert claims.roles == ("player", "host")

    err = await auth.refused(
        subjects.AUTH_DECIDE_HOST_REQUEST,
        DecideHostRequest(request_id=asked.request_id, admin_id=admin_id, approve=False),
        HostRequest,
    )
    assert err.code == codes.ALREADY_DECIDED
    err = await auth.refused(subjects.AUTH_REQUEST_HOST, RequestHost(user_id=user_id), HostRequest)
    assert err.code == codes.CONFLICT
    history = await auth.call(
        subjects.AUTH_LIST_HOST_REQUESTS, ListHostRequests(status="approved"), HostRequestList
    )
    assert [r.request_id for r in history.requests] == [asked.request_id]
    assert (
        await auth.call(subjects.AUTH_LIST_HOST_REQUESTS, ListHostRequests(), HostRequestList)
    ).requests == ()


async def test_rejected_request_leaves_roles_and_allows_asking_again(auth: AuthHarness) -> None:
    admin_id = await _admin(auth)
    player = await auth.sign_up()
    user_id = player.user.user_id
    asked = await auth.call(subjects.AUTH_REQUEST_HOST, RequestHost(user_id=user_id), HostRequest)
    rejected = await auth.call(
        subjects.AUTH_DECIDE_HOST_REQUEST,
        DecideHostRequest(
            request_id=asked.request_id, admin_id=admin_id, approve=False, reason="not yet"
        ),
        HostRequest,
    )
    assert (rejected.status, rejected.reason) == ("rejected", "not yet")
    profile = await auth.call(subjects.AUTH_PROFILE, GetProfile(user_id=user_id), UserProfile)
    assert profile.roles == ("player",)
    again = await auth.call(subjects.AUTH_REQUEST_HOST, RequestHost(user_id=user_id), HostRequest)
    assert again.request_id != asked.request_id and again.status == "pending"
    err = await auth.refused(
        subjects.AUTH_DECIDE_HOST_REQUEST,
        DecideHostRequest(request_id="no-such-request", admin_id=admin_id, approve=True),
        HostRequest,
    )
    assert err.code == codes.NOT_FOUND
    err = await auth.refused(subjects.AUTH_REQUEST_HOST, RequestHost(user_id="nobody"), HostRequest)
    assert err.code == codes.NOT_FOUND


async def test_racing_host_requests_make_one(auth: AuthHarness) -> None:
    player = await auth.sign_up()
    replies = await asyncio.gather(
        *(
            auth.call(
                subjects.AUTH_REQUEST_HOST, RequestHost(user_id=player.user.user_id), HostRequest
            )
            for _ in range(5)
        )
    )
    assert len({r.request_id for r in replies}) == 1
    assert await auth.count("auth_host_requests") == 1


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
