"""A real gateway for integration tests: uvicorn configured as in production
(``server_config``), the session's NATS and Redis, the real lobby, and the auth
service's key set stood in by a key made here (so tests can sign tokens)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from litestar import Litestar
from nats.aio.client import Client as NATS

from kalaro.bus import Service
from kalaro.bus.redislink import RedisLink
from kalaro.devstack import NatsServer, free_port, wait_for_port
from kalaro.proto import endpoints
from kalaro.proto.auth import GetPublicKeys, PublicKeys
from kalaro.settings import Settings, load_settings
from kalaro.tokens import ALGORITHM, issue_access_token, key_id, public_jwks
from services.gateway.__main__ import server_config
from services.gateway.app import create_app
from services.lobby.bootstrap import build_service
from services.lobby.tables import Lobby
from tests.integration.lobby.harness import Clock

ISSUER = "kalaro-gateway-test"
AUDIENCE = "kalaro-clients-gateway-test"


@dataclass
class World:
    nc: NATS
    key: Ed25519PrivateKey
    unique: str
    url: str

    def token(self, name: str, *roles: str) -> str:
        return issue_access_token(
            self.key, key_id(self.key), f"{name}-{self.unique}", ("player", *roles), name,
            ISSUER, AUDIENCE, 300,
        )  # fmt: skip

    def headers(self, name: str, *roles: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token(name, *roles)}"}


@asynccontextmanager
async def signing_keys(nc: NATS) -> AsyncIterator[Ed25519PrivateKey]:
    """A key the tests sign access tokens with, published as the auth service would."""
    key = Ed25519PrivateKey.generate()
    keys = Service("gateway-test-auth-keys")

    async def public_keys(_: GetPublicKeys) -> PublicKeys:
        return PublicKeys(
            keys=tuple(public_jwks(key)), issuer=ISSUER, audience=AUDIENCE, algorithms=(ALGORITHM,)
        )

    keys.add(endpoints.AUTH_PUBLIC_KEYS, public_keys)
    await keys.start(nc)
    try:
        yield key
    finally:
        await keys.stop()


@asynccontextmanager
async def serving(
    nc: NATS, settings: Settings, log_level: str = "info"
) -> AsyncIterator[tuple[Litestar, str]]:
    """A gateway app under uvicorn on a free port: the app and its ``host:port``."""
    app = create_app(settings, nc)
    port = free_port()
    config = server_config(
        app, settings, host="127.0.0.1", port=port, log_level=log_level, lifespan="on"
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        await asyncio.to_thread(wait_for_port, port)
        yield app, f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


@asynccontextmanager
async def world_of(
    nc: NATS, redis: RedisLink, nats_server: NatsServer, unique: str, **settings: Any
) -> AsyncIterator[World]:
    core = Lobby(nc, redis, prefix=f"test:{unique}:lobby:", clock=Clock())
    lobby_service = build_service(core)
    async with signing_keys(nc) as key:
        await lobby_service.start(nc)
        try:
            gateway_settings = load_settings({}, nats_url=nats_server.url, **settings)
            async with serving(nc, gateway_settings) as (_, address):
                yield World(nc, key, unique, address)
        finally:
            await lobby_service.stop()
