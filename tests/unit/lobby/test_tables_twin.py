"""The table-records contract (tests/contracts/table_store.py) on the in-memory twin."""

from __future__ import annotations

import pytest

from services.lobby.memory import MemoryTables
from tests.contracts.table_store import *  # noqa: F403


@pytest.fixture
def tables() -> MemoryTables:
    return MemoryTables()
