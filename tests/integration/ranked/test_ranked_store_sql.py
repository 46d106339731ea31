"""The ranked store's contract (tests/contracts/ranked_store.py) on SQL (SQLite, and
PostgreSQL when reachable)."""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from services.ranked.store import SqlRankedStore
from tests.contracts.ranked_store import *  # noqa: F403


@pytest.fixture
def store(engine: AsyncEngine) -> SqlRankedStore:
    return SqlRankedStore(engine)
