"""The ranked store's contract (tests/contracts/ranked_store.py) on the in-memory twin."""

from __future__ import annotations

import pytest

from services.ranked.memory import MemoryRankedStore
from tests.contracts.ranked_store import *  # noqa: F403


@pytest.fixture
def store() -> MemoryRankedStore:
    return MemoryRankedStore()
