"""The accounts contract (tests/contracts/accounts_store.py) on SQL (SQLite, and
PostgreSQL when reachable): the test body the unit tier runs on the twin."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from kalaro.sql import create_engine
from services.auth.account_store import SqlAccountStore
from services.auth.schema import migrate_auth
from tests.contracts.accounts_store import *  # noqa: F403


@pytest.fixture
async def accounts(database_url: str) -> AsyncIterator[SqlAccountStore]:
    engine = create_engine(database_url)
    await migrate_auth(engine)
    yield SqlAccountStore(engine)
    await engine.dispose()
