"""Sign-in throttling through two real gateways (uvicorn, as in production) in front of
two auth replicas, all on the session's NATS and Redis: the limits are Redis's, so
they hold whichever gateway and replica an attempt reaches.

Here new devices slow down after 3 failures on an account (waits 1 s, then 2 s) and
need an emailed code after 5; an address may fail 30 times. Every client genuinely
comes from 127.0.0.1, as players behind one carrier address would.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from email import message_from_bytes
from email.policy import default
from pathlib import Path
from typing import Any

import httpx
import pytest
from nats.aio.client import Client as NATS

from kalaro.bus.redislink import RedisLink
from kalaro.bus.runner import connect
from kalaro.devstack import NatsServer, RedisServer
from kalaro.settings import Settings
from kalaro.sql import create_engine
from services.auth.bootstrap import build_deps, build_service
from services.auth.schema import migrate_auth
from tests.integration.gateway.test_auth_gateway import PASSWORD, gateway, stack_settings

LIMITS: dict[str, Any] = {
    "throttle_max_failures": 3,
    "throttle_max_delay_seconds": 2,
    "throttle_account_max_failures": 5,
    "throttle_address_max_failures": 30,
}


@dataclass
class Two:
    settings: Settings
    unique: str
    urls: tuple[str, str]  # gateway A, gateway B
    exits: AsyncExitStack

    async def client(self, which: int, device: str = "") -> httpx.AsyncClient:
        """A new browser (its own cookie jar) on gateway ``which``."""
        cookies = {"kalaro_device": device} if device else None
        http = httpx.AsyncClient(base_url=self.urls[which], timeout=20, cookies=cookies)
        return await self.exits.enter_async_context(http)

    def email(self, name: str) -> str:
        return f"{name}.{self.unique}@example.com"

    def code(self, email: str) -> str:
        """The one-time code in the latest code mail to ``email``."""
        codes = []
        for path in sorted(Path(self.settings.var_dir, "mail").glob("*.eml")):
            msg: Any = message_from_bytes(path.read_bytes(), policy=default)
            if msg["To"] == email and "sign-in code" in msg["Subject"]:
                codes.append(re.findall(r"^ {4}(\d{6})$", msg.get_content(), re.M)[0])
        assert codes, "no code was mailed"
        return codes[-1]


@pytest.fixture
async def own_nc(nats_server: NatsServer) -> AsyncIterator[NATS]:
    """A connection of this module's own: its services and gateways come and go on it,
    and leave the session's connection as they found it."""
    client = await connect(nats_server.url, "tests-sign-in-throttle")
    yield client
    await client.drain()


@pytest.fixture
async def two(
    own_nc: NATS,
    redis: RedisLink,
    nats_server: NatsServer,
    redis_server: RedisServer,
    tmp_path: Path,
    unique: str,
) -> AsyncIterator[Two]:
    nc = own_nc
    settings = stack_settings(nats_server, redis_server, tmp_path, **LIMITS)
    engine = create_engine(settings.database_url)
    await migrate_auth(engine)
    services = []
    for _ in range(2):  # two replicas, one Redis: neither keeps a limit of its own
        deps = await build_deps(
            settings, engine=engine, redis=redis, nc=nc, throttle_prefix=f"test:{unique}:t:"
        )
        services.append(build_service(deps))
        await services[-1].start(nc)
    try:
        async with (
            AsyncExitStack() as exits,
            gateway(nc, settings) as a,
            gateway(nc, settings) as b,
        ):
            yield Two(settings, unique, (str(a.base_url), str(b.base_url)), exits)
    finally:
        for service in services:
            await service.stop()
        await engine.dispose()


async def sign_up(http: httpx.AsyncClient, email: str) -> None:
    body = {"email": email, "password": PASSWORD, "display_name": "Ana"}
    r = await http.post("/api/auth/sign-up", json=body)
    assert r.status_code == 202, r.text


def sign_in(http: httpx.AsyncClient, email: str, password: str = PASSWORD, **more: str) -> Any:
    return http.post("/api/auth/sign-in", json={"email": email, "password": password, **more})


def refused(r: httpx.Response, status: int, code: str) -> None:
    assert (r.status_code, r.json()["error"]["code"]) == (status, code), r.text


async def test_owner_device_signs_in_during_an_attack_across_gateways(two: Two) -> None:
    email = two.email("owner")
    owner = await two.client(0)
    await sign_up(owner, email)
    r = await sign_in(owner, email)
    assert r.status_code == 200, r.text
    set_cookie = r.headers["set-cookie"].lower()
    assert "kalaro_device=" in set_cookie and "httponly" in set_cookie
    assert "path=/api/auth" in set_cookie and "samesite=lax" in set_cookie
    assert "kalaro_device" not in r.text  # the page's script never sees it
    device = owner.cookies["kalaro_device"]
    owner_on_b = await two.client(1, device)
    guessers = (await two.client(0), await two.client(1))

    for i in range(3):  # alternating gateways: the count is one
        r = await sign_in(guessers[i % 2], email, f"Wrong-guess-{i}")
        refused(r, 401, "invalid_credentials")
    for guesser in guessers:
        r = await sign_in(guesser, email)  # even the right password waits, on both
        refused(r, 429, "throttled")
        assert r.headers["retry-after"] == "1"
    assert (await sign_in(owner_on_b, email)).status_code == 200

    await asyncio.sleep(1.05)
    refused(await sign_in(guessers[1], email, "Wrong-guess-3"), 401, "invalid_credentials")
    r = await sign_in(guessers[0], email, "Wrong-guess-4")
    refused(r, 429, "throttled")
    assert r.headers["retry-after"] == "2"  # the wait grew, and it is the real one
    await asyncio.sleep(2.05)
    refused(await sign_in(guessers[0], email, "Wrong-guess-5"), 401, "invalid_credentials")

    # Past 5 failures: a new device needs the emailed code; the owner's does not.
    refused(await sign_in(guessers[0], email, "Wrong-guess-6"), 401, "code_required")
    assert (await sign_in(owner_on_b, email)).status_code == 200
    assert (await sign_in(owner, email)).status_code == 200
    phone = await two.client(1)
    refused(await sign_in(phone, email), 401, "code_required")
    r = await sign_in(phone, email, code=two.code(email))
    assert r.status_code == 200, r.text
    assert phone.cookies["kalaro_device"]  # a known device from now on


async def test_twenty_concurrent_sign_ins_from_one_address(two: Two) -> None:
    emails = [two.email(f"cgnat{i}") for i in range(20)]
    setup = await two.client(0)
    await asyncio.gather(*(sign_up(setup, e) for e in emails))
    for i in range(10):  # others' failures from the same address change nothing
        r = await sign_in(setup, two.email(f"ghost{i}"), "Wrong-guess")
        refused(r, 401, "invalid_credentials")
    browsers = [await two.client(i % 2) for i in range(20)]
    answers = await asyncio.gather(*(sign_in(b, e) for b, e in zip(browsers, emails, strict=True)))
    assert [r.status_code for r in answers] == [200] * 20, [r.text for r in answers]


async def test_every_429_has_retry_after_and_probes_are_never_limited(
    own_nc: NATS, nats_server: NatsServer, redis_server: RedisServer, tmp_path: Path
) -> None:
    """The per-process request bucket (a first line against floods) answers 429 with
    the real wait; health probes and scrapes pass however often they come."""
    settings = stack_settings(
        nats_server, redis_server, tmp_path, rest_address_rate=0.25, rest_address_burst=3
    )
    async with gateway(own_nc, settings) as http:
        statuses = [(await http.get("/api/config")).status_code for _ in range(3)]
        assert statuses == [200] * 3
        r = await http.get("/api/config")
        refused(r, 429, "throttled")
        assert 1 <= int(r.headers["retry-after"]) <= 4
        for path in ("/healthz", "/readyz", "/metrics"):
            for _ in range(10):
                assert (await http.get(path)).status_code == 200, path
