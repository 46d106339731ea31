"""Fixtures for the history service's integration tests: a migrated database per test
(SQLite, and PostgreSQL when reachable), consumer names and a Redis namespace of the
test's own (the session shares one nats-server and one redis-server)."""

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
from services.history.schema import migrate_history


@pytest.fixture
def settings(database_url: str) -> Settings:
    return load_settings({}, database_url=database_url)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(database_url)
    await migrate_history(engine)
    yield engine
    await engine.dispose()


@pytest.fixture
async def names(nc: NATS, unique: str) -> AsyncIterator[dict[str, str]]:
    """The consumer's durable name, its filter (hand ids ``<unique>.<n>``), the Redis
    namespace: this test's alone. The RECORDS stream exists (as the engines ensure it)."""
    await ensure_stream(nc.jetstream(), subjects.RECORDS_STREAM)
    found = {
        "durable": f"history-{unique}",
        "subject": subjects.hand_record(f"{unique}.*"),
        "namespace": f"{unique}:",
    }
    yield found
    with contextlib.suppress(NotFoundError):
        await nc.jetstream().delete_consumer(subjects.RECORDS_STREAM, found["durable"])
