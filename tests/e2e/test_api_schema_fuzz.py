"""Schemathesis over every operation of the live gateway's own OpenAPI document.

Its command line, as a developer runs it, three times: anonymous, as a player and as an
admin; every phase (the document's examples, coverage of each constraint's edges,
random fuzzing, and the stateful phase that follows the links it infers, e.g. a table
created, then sat at) and every check: no 5xx, statuses, content types, headers and
bodies as documented, data the document forbids refused and data it allows accepted
(widened per operation in ``schemathesis.toml``, each with its reason), 405s with
``Allow``, authentication not ignored. Afterwards the books still balance.

A short pass runs in ``make test``; the long one (``deep``) in ``make test-deep``.
The fuzzer has a gateway of its own on the stack's services, with the rate limits off
(a 429 is documented, but the fuzzer should reach the handlers).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kalaro.client import KalaroClient
from tests.e2e.stack import ADMIN_EMAIL, ADMIN_PASSWORD, Stack

CONFIG = Path(__file__).with_name("schemathesis.toml")
ROLES = ("anonymous", "player", "admin")
PHASES = "examples,coverage,fuzzing,stateful"


async def _token(base_url: str, email: str | None = None, password: str = "") -> str:
    client = KalaroClient(base_url)
    try:
        if email is None:
            unique = uuid.uuid4().hex[:10]
            await client.sign_up(f"fuzz-{unique}@example.com", "fuzz passphrase 16", "Fuzz")
        else:
            await client.sign_in(email, password)
        return client.access_token
    finally:
        await client.close()


@pytest.fixture(scope="module")
def fuzz_url(stack: Stack) -> Iterator[str]:
    name = f"fuzz-gateway-{uuid.uuid4().hex[:6]}"
    url = stack.start_gateway(
        name,
        KALARO_REST_USER_RATE="0",
        KALARO_REST_ADDRESS_RATE="0",
        # Each role's run comes from an address of its own (X-Forwarded-For, believed
        # from loopback only): its failed sign-ins lock only that address out, never the
        # test's own sign-ins for the next role's token and the audit.
        KALARO_TRUSTED_PROXIES="127.0.0.1",
    )
    try:
        yield url
    finally:
        stack.stop(name)


def _schemathesis() -> list[str]:
    found = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    assert found, "schemathesis is in requirements-dev.lock: run `make setup`"
    return [found]


def _run(url: str, role: str, examples: int, max_time: int | None) -> tuple[int, str]:
    command = [
        *_schemathesis(), "--config-file", str(CONFIG), "run", f"{url}/schema/openapi.json",
        "--checks", "all",
        "--phases", PHASES,
        "--max-examples", str(examples),
        "--generation-deterministic",  # the same requests every run
        "--workers", "1",
        "--request-timeout", "25",
        "--suppress-health-check", "all",
        "--warnings", "off",
    ]  # fmt: skip
    if max_time is not None:
        command += ["--max-time", str(max_time)]
    command += ["--header", f"X-Forwarded-For: 192.0.2.{1 + ROLES.index(role)}"]
    if role != "anonymous":
        admin = (ADMIN_EMAIL, ADMIN_PASSWORD) if role == "admin" else (None, "")
        token = asyncio.run(_token(url, *admin))
        command += ["--header", f"Authorization: Bearer {token}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600, check=False)
    return done.returncode, done.stdout + done.stderr


def _books_balance(url: str) -> None:
    token = asyncio.run(_token(url, ADMIN_EMAIL, ADMIN_PASSWORD))
    audit = httpx.get(
        f"{url}/api/admin/audit", headers={"Authorization": f"Bearer {token}"}, timeout=15
    ).json()
    assert audit["total"] == 0, audit
    assert audit["mismatched_accounts"] == [] and audit["negative_available"] == [], audit


def _fuzz(url: str, examples: int, max_time: int | None = None) -> None:
    failures = []
    for role in ROLES:
        started = time.monotonic()
        code, output = _run(url, role, examples, max_time)
        summary = output[output.rfind("SUMMARY") :] if "SUMMARY" in output else output[-3000:]
        print(f"\n--- schemathesis as {role}: exit {code} in {time.monotonic() - started:.0f}s")
        print(summary[-2500:])
        tested = re.search(r"Tested: (\d+)", output)
        assert tested and int(tested.group(1)) >= 40, f"too few operations tested:\n{summary}"
        if code != 0:
            start = output.find("FAILURES")
            failures.append(f"as {role}:\n{output[start if start >= 0 else 0 :][:20000]}")
    _books_balance(url)
    assert not failures, "\n\n".join(failures)


@pytest.mark.timeout(600)
def test_every_operation_answers_as_documented(fuzz_url: str) -> None:
    """The short pass (``make test``): a few examples an operation, every phase."""
    _fuzz(fuzz_url, examples=3)


@pytest.mark.deep
@pytest.mark.timeout(3 * 3600)
def test_every_operation_answers_as_documented_long(fuzz_url: str) -> None:
    """The long pass (``make test-deep``): many examples, long stateful runs."""
    _fuzz(fuzz_url, examples=300, max_time=600)
