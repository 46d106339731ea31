"""The hand-history contract (tests/contracts/history_store.py) on the in-memory twin."""

from __future__ import annotations

import pytest

from services.history.memory import MemoryHandHistory
from tests.contracts.history_store import *  # noqa: F403


@pytest.fixture
def hands() -> MemoryHandHistory:
    return MemoryHandHistory()
