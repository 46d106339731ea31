"""The hand-history contract (tests/contracts/history_store.py) on SQL (SQLite, and
PostgreSQL when reachable): the same test body the unit tier runs on the twin."""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from services.history.handlers import HistoryDeps, history_deps
from services.history.store import SqlHandHistory
from tests.contracts.history_store import *  # noqa: F403


@pytest.fixture
def hands(engine: AsyncEngine) -> SqlHandHistory:
    return SqlHandHistory(engine)


@pytest.fixture
def history(engine: AsyncEngine) -> HistoryDeps:
    return history_deps(engine)
