"""Sign-in and sessions through a real gateway (uvicorn, configured as in production by
``services.gateway.__main__.server_config``) in front of the real auth service, on the
session's NATS and Redis and a SQLite database.

The auth service here slows new devices down after 3 failures on an account and
refuses an address after 5 failures.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
import websockets
from nats.aio.client import Client as NATS
from websockets.asyncio.client import ClientConnection

from kalaro.bus.redislink import RedisLink
from kalaro.devstack import NatsServer, RedisServer, free_port, wait_for_port
from kalaro.settings import Settings, load_settings
from kalaro.sql import create_engine
from services.auth.bootstrap import build_deps, build_service
from services.auth.schema import migrate_auth
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
        **{
            "throttle_max_failures": 3,
            "throttle_address_max_failures": 5,
            "throttle_window_seconds": 60,
            **more,
        },
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

    def ws_url(self) -> str:
        return str(self.direct.base_url).replace("http://", "ws://").rstrip("/") + "/ws"

    async def socket(self, access_token: str) -> ClientConnection:
        """A /ws opened with this token (its first frame: a welcome, or the refusal)."""
        return await websockets.connect(
            self.ws_url(), additional_headers={"Authorization": f"Bearer {access_token}"}
        )

    async def sign_up(self, name: str) -> tuple[str, dict[str, Any]]:
        email = f"{name}.{self.unique}@example.com"
        r = await self.direct.post(
            "/api/auth/sign-up", json={"email": email, "password": PASSWORD, "display_name": name}
        )
        assert (r.status_code, r.json()) == (202, {"status": "check_email"}), r.text
        r = await self.direct.post("/api/auth/sign-in", json={"email": email, "password": PASSWORD})
        assert r.status_code == 200, r.text
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
    await migrate_auth(engine)
    deps = await build_deps(
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
) -> Any:
    headers = {"X-Forwarded-For": forwarded} if forwarded is not None else {}
    return http.post(
        "/api/auth/sign-in", json={"email": email, "password": password}, headers=headers
    )


async def test_forwarded_for_is_ignored_from_an_untrusted_peer(stack: Stack) -> None:
    email, _ = await stack.sign_up("ana")
    stack.direct.cookies.clear()  # a new device: its known-device cookie would spare it
    # A rotating header does not make each guess come from a fresh address: the
    # failures (at accounts that do not exist) all count on the socket's address.
    for i in range(5):
        r = await sign_in(stack.direct, f"ghost{i}.{stack.unique}@example.com", "wrong-guess")
        assert r.status_code == 401, r.text
    r = await sign_in(stack.direct, email, PASSWORD, "198.51.100.99")
    assert r.status_code == 429, r.text
    assert "your network address" in r.json()["error"]["message"]
    assert 1 <= int(r.headers["retry-after"]) <= 60


async def test_forwarded_for_is_honoured_from_a_trusted_proxy(stack: Stack) -> None:
    email, _ = await stack.sign_up("ben")  # signed up on the other gateway: no cookie here
    for i in range(5):
        ghost = f"ghost{i}.{stack.unique}@example.com"
        r = await sign_in(stack.proxied, ghost, "wrong-guess", "198.51.100.1")
        assert r.status_code == 401, r.text
    # The guesser's address is throttled, whatever it puts in front of the address our
    # proxy appended...
    r = await sign_in(stack.proxied, email, PASSWORD, "203.0.113.5, 198.51.100.1")
    assert r.status_code == 429, r.text
    assert int(r.headers["retry-after"]) >= 1
    # ...while the owner, behind the same proxy from another address, signs in.
    r = await sign_in(stack.proxied, email, PASSWORD, "198.51.100.2")
    assert r.status_code == 200, r.text


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def closed_with(ws: ClientConnection) -> int | None:
    """Read until the socket closes; its close code."""
    try:
        async with asyncio.timeout(5):
            async for _ in ws:
                pass
    except websockets.ConnectionClosed:
        pass
    return ws.close_code


async def test_sign_out_ends_the_session_at_once(stack: Stack) -> None:
    _, pair = await stack.sign_up("cruz")
    access = pair["access_token"]
    me = await stack.direct.get("/api/me", headers=bearer(access))
    assert me.status_code == 200, me.text
    open_socket = await stack.socket(access)
    assert "welcome" in str(await asyncio.wait_for(open_socket.recv(), 5))

    out = await stack.direct.post(
        "/api/auth/sign-out", json={"refresh_token": pair["refresh_token"]}
    )
    assert out.status_code == 200 and out.json() == {"signed_out": True}

    # At once, on every gateway: REST refuses the access token...
    for http in (stack.direct, stack.proxied):
        me = await http.get("/api/me", headers=bearer(access))
        assert me.status_code == 401, me.text
        assert me.json()["error"]["code"] == "invalid_token"
    # ...the socket that was open is closed...
    assert await closed_with(open_socket) == 4401
    # ...and a new one is refused.
    refused = await stack.socket(access)
    assert "invalid_token" in str(await asyncio.wait_for(refused.recv(), 5))
    assert await closed_with(refused) == 4401


async def test_refresh_reuse_ends_the_family_at_once(stack: Stack) -> None:
    email, first = await stack.sign_up("dela")
    rotated = await stack.direct.post(
        "/api/auth/refresh", json={"refresh_token": first["refresh_token"]}
    )
    assert rotated.status_code == 200, rotated.text
    second = rotated.json()
    # Another sign-in is another session, which the reuse must not end.
    other = (await sign_in(stack.direct, email, PASSWORD)).json()
    for token in (first["access_token"], second["access_token"], other["access_token"]):
        assert (await stack.direct.get("/api/me", headers=bearer(token))).status_code == 200

    reused = await stack.direct.post(
        "/api/auth/refresh", json={"refresh_token": first["refresh_token"]}
    )
    assert reused.status_code == 401 and reused.json()["error"]["code"] == "refresh_token_reused"

    for token in (first["access_token"], second["access_token"]):
        me = await stack.direct.get("/api/me", headers=bearer(token))
        assert me.status_code == 401, me.text
        refused = await stack.socket(token)
        assert await closed_with(refused) == 4401
    assert (
        await stack.direct.get("/api/me", headers=bearer(other["access_token"]))
    ).status_code == 200
