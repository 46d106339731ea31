"""The table-records contract (tests/contracts/table_store.py) on Redis: the test body
the unit tier runs on the twin, here under a key prefix of its own."""

from __future__ import annotations

import pytest

from kalaro.bus.redislink import RedisLink
from services.lobby.store import TableStore
from tests.contracts.table_store import *  # noqa: F403


@pytest.fixture
def tables(redis: RedisLink, unique: str) -> TableStore:
    return TableStore(redis, f"test:{unique}:lobby:")
