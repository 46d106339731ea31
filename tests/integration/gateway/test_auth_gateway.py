"""Sign-in and sessions through a real gateway (uvicorn, configured as in production by
``services.gateway.__main__.server_config``) in front of the real auth service, on the
session's NATS and Redis and a SQLite database.

The auth service here allows 3 failures per account and address and 5 per address.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import uvicorn
from nats.aio.client import Client as NATS

from kalaro.bus.redislink import RedisLink
from kalaro.devstack import NatsServer, RedisServer, free_port, wait_for_port
from kalaro.settings import Settings, load_settings
from kalaro.sql import create_engine, migrate
from services.auth.schema import COMPONENT, MIGRATIONS
from services.auth.service import bootstrap, build_service
from services.gateway.__main__ import server_config
from services.gateway.app import create_app

PASSWORD = "Kulay-Ube-42"


def stack_settings(
    nats: NatsServer, redis: RedisServer, tmp_path: Path, **more: object
) -> Settings:
    return load_settings(
        {},
        nats_url=nats.url,
        redis_url=redis.url,
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'kalaro.db'}",
        var_dir=str(tmp_path),
        jwt_private_key_file=str(tmp_path / "keys" / "jwt-ed25519.pem"),
        access_token_seconds=300,
        throttle_max_failures=3,
        throttle_address_max_failures=5,
        throttle_window_seconds=60,
        **more,
    )


@asynccontextmanager
async def gateway(nc: NATS, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    port = free_port()
    app = create_app(settings, nc)
    config: uvicorn.Config = server_config(
        app, settings, host="127.0.0.1", port=port, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        await asyncio.to_thread(wait_for_port, port)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            yield http
    finally:
        server.should_exit = True
        await task


@dataclass
class Stack:
    settings: Settings
    unique: str
    # The same auth service behind two gateways: one trusts no proxy (the default), the
    # other trusts 127.0.0.1, where the test's requests come from.
    direct: httpx.AsyncClient
    proxied: httpx.AsyncClient

    async def sign_up(self, name: str) -> tuple[str, dict[str, object]]:
        email = f"{name}.{self.unique}@example.com"
        r = await self.direct.post(
            "/api/auth/sign-up", json={"email": email, "password": PASSWORD, "display_name": name}
        )
        assert r.status_code == 201, r.text
        return email, r.json()


@pytest.fixture
async def stack(
    nc: NATS,
    redis: RedisLink,
    nats_server: NatsServer,
    redis_server: RedisServer,
    tmp_path: Path,
    unique: str,
) -> AsyncIterator[Stack]:
    settings = stack_settings(nats_server, redis_server, tmp_path)
    engine = create_engine(settings.database_url)
    await migrate(engine, COMPONENT, MIGRATIONS)
    deps = await bootstrap(
        settings, engine=engine, redis=redis, nc=nc, throttle_prefix=f"test:{unique}:throttle:"
    )
    service = build_service(deps)
    await service.start(nc)
    proxied_settings = stack_settings(
        nats_server, redis_server, tmp_path, trusted_proxies=("127.0.0.1/32",)
    )
    try:
        async with (
            gateway(nc, settings) as direct,
            gateway(nc, proxied_settings) as proxied,
        ):
            yield Stack(settings, unique, direct, proxied)
    finally:
        await service.stop()
        await engine.dispose()


def sign_in(
    http: httpx.AsyncClient, email: str, password: str, forwarded: str | None = None
) -> object:
    headers = {"X-Forwarded-For": forwarded} if forwarded is not None else {}
    return http.post(
        "/api/auth/sign-in", json={"email": email, "password": password}, headers=headers
    )


async def test_forwarded_for_is_ignored_from_an_untrusted_peer(stack: Stack) -> None:
    email, _ = await stack.sign_up("ana")
    # A rotating header does not make each guess come from a fresh address.
    for i in range(3):
        r = await sign_in(stack.direct, email, f"wrong-guess-{i}", f"198.51.100.{i}")
        assert r.status_code == 401, r.text
    r = await sign_in(stack.direct, email, PASSWORD, "198.51.100.99")
    assert r.status_code == 429, r.text
    assert "this account from your network address" in r.json()["error"]["message"]


async def test_forwarded_for_is_honoured_from_a_trusted_proxy(stack: Stack) -> None:
    email, _ = await stack.sign_up("ben")
    for i in range(3):
        r = await sign_in(stack.proxied, email, f"wrong-guess-{i}", "198.51.100.1")
        assert r.status_code == 401, r.text
    # The guesser's address is throttled for this account, whatever it puts in front of
    # the address our proxy appended...
    r = await sign_in(stack.proxied, email, PASSWORD, "203.0.113.5, 198.51.100.1")
    assert r.status_code == 429, r.text
    # ...while the owner, behind the same proxy from another address, signs in.
    r = await sign_in(stack.proxied, email, PASSWORD, "198.51.100.2")
    assert r.status_code == 200, r.text
