"""The books contract (tests/contracts/ledger_store.py) on the SQL ledger (SQLite, and
PostgreSQL when reachable): the test body the unit tier runs on the twin."""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.settings import Settings
from services.wallet.books import SqlBooks
from services.wallet.handlers import WalletDeps, wallet_deps
from tests.contracts.ledger_store import *  # noqa: F403


@pytest.fixture
def ledger(engine: AsyncEngine) -> SqlBooks:
    return SqlBooks(engine)


@pytest.fixture
def wallet(engine: AsyncEngine, settings: Settings) -> WalletDeps:
    return wallet_deps(engine, settings)
