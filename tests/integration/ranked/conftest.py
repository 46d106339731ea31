"""Fixtures for the ranked service's integration tests: a migrated database per test
(SQLite, and PostgreSQL when reachable), and this test's own consumer name, record
subjects and Redis namespace (the session shares one nats-server and redis-server)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest
from nats.aio.client import Client as NATS
from nats.js.errors import NotFoundError
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus.jetstream import ensure_stream
from kalaro.proto import subjects
from kalaro.settings import Settings, load_settings
from kalaro.sql import create_engine
from services.ranked.schema import migrate_ranked


@pytest.fixture
def settings(database_url: str) -> Settings:
    return load_settings({}, database_url=database_url)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(database_url)
    await migrate_ranked(engine)
    yield engine
    await engine.dispose()


@pytest.fixture
async def names(nc: NATS, unique: str) -> AsyncIterator[dict[str, str]]:
    """The consumer's durable name, its filter (hand ids ``<unique>.<n>``), the Redis
    namespace: this test's alone. The RECORDS stream exists (as the engines ensure it)."""
    await ensure_stream(nc.jetstream(), subjects.RECORDS_STREAM)
    found = {
        "durable": f"ranked-{unique}",
        "subject": subjects.hand_record(f"{unique}.*"),
        "namespace": f"{unique}:",
    }
    yield found
    with contextlib.suppress(NotFoundError):
        await nc.jetstream().delete_consumer(subjects.RECORDS_STREAM, found["durable"])
