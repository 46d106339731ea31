"""The hand-history contract (tests/contracts/history_store.py) on the in-memory twin."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from services.history.handlers import HistoryDeps
from services.history.memory import MemoryHandHistory
from tests.contracts.history_store import *  # noqa: F403


@pytest.fixture
def hands() -> MemoryHandHistory:
    return MemoryHandHistory()


@pytest.fixture
async def history(hands: MemoryHandHistory) -> AsyncIterator[HistoryDeps]:
    # The reads never touch SQL (export and stats do): an engine that never connects.
    engine = create_async_engine("sqlite+aiosqlite://")
    yield HistoryDeps(hands=hands, engine=engine)
    await engine.dispose()
