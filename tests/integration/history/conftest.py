"""Fixtures for the history service's integration tests: a migrated database per test
(SQLite, and PostgreSQL when reachable), consumer names and a Redis namespace of the
test's own (the session shares one nats-server and one redis-server)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from nats.aio.client import Client as NATS
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.settings import Settings, load_settings
from services.history.schema import migrate_history
from tests.integration.records_consumer import consumer_names, migrated_engine


@pytest.fixture
def settings(database_url: str) -> Settings:
    return load_settings({}, database_url=database_url)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    async for engine in migrated_engine(database_url, migrate_history):
        yield engine


@pytest.fixture
async def names(nc: NATS, unique: str) -> AsyncIterator[dict[str, str]]:
    async for found in consumer_names(nc, unique, "history"):
        yield found
