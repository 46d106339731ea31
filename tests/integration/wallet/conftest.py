"""Fixtures for the wallet's integration tests: a migrated database and the service on NATS.

``engine`` is a fresh, migrated database per test, on SQLite and on PostgreSQL when one
is reachable (see ``database_url`` in ``tests/conftest.py``). ``wallet`` serves the
wallet's subjects on the test's NATS connection and stops them afterwards, so tests
talk to it exactly as the gateway and the lobby do: through ``kalaro.bus.request``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from nats.aio.client import Client as NATS
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.settings import Settings, load_settings
from kalaro.sql import create_engine
from services.wallet.bootstrap import build_service
from services.wallet.handlers import wallet_deps
from services.wallet.schema import migrate_wallet
from tests.integration.wallet.wallet_helpers import WELCOME, Wallet


@pytest.fixture
def settings(database_url: str) -> Settings:
    return load_settings({}, database_url=database_url, welcome_grant=WELCOME)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(database_url)
    await migrate_wallet(engine)
    yield engine
    await engine.dispose()


@pytest.fixture
async def wallet(nc: NATS, engine: AsyncEngine, settings: Settings) -> AsyncIterator[Wallet]:
    service = build_service(wallet_deps(engine, settings))
    await service.start(nc)
    yield Wallet(nc, engine)
    await service.stop()
