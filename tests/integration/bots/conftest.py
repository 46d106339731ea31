"""Fixtures for the bots' integration tests: the auth service (for bot accounts).

The engine workers the bots play against are started by the tests themselves (see
``test_bot_player``); the auth service here is the real one on real NATS, Redis and SQL
(SQLite, and PostgreSQL when reachable), with its own database per test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from nats.aio.client import Client as NATS

from kalaro.bus.redislink import RedisLink
from kalaro.sql import create_engine
from services.auth.accounts import AuthDeps
from services.auth.bootstrap import build_deps, build_service
from services.auth.schema import migrate_auth
from tests.integration.auth.harness import auth_settings


@asynccontextmanager
async def auth_service(
    nc: NATS, redis: RedisLink, database_url: str, tmp_path: Path, unique: str
) -> AsyncIterator[AuthDeps]:
    """The auth service (queue group ``auth``) running on its own database, while open."""
    jwks = tmp_path / "google-jwks.json"
    jwks.write_text('{"keys": []}')
    settings = auth_settings(database_url, tmp_path, jwks)
    engine = create_engine(database_url)
    await migrate_auth(engine)
    deps = await build_deps(
        settings, engine=engine, redis=redis, nc=nc, throttle_prefix=f"test:{unique}:throttle:"
    )
    service = build_service(deps)
    await service.start(nc)
    try:
        yield deps
    finally:
        await service.stop()
        await engine.dispose()


@pytest.fixture
async def auth(
    nc: NATS, redis: RedisLink, database_url: str, tmp_path: Path, unique: str
) -> AsyncIterator[AuthDeps]:
    """A running auth service (queue group ``auth``); yields its dependencies."""
    async with auth_service(nc, redis, database_url, tmp_path, unique) as deps:
        yield deps
