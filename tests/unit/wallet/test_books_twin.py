"""The books contract (tests/contracts/ledger_store.py) on the in-memory twin, which
also keeps the books balanced (every movement sums to zero)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from kalaro.settings import load_settings
from services.wallet.handlers import WalletDeps
from services.wallet.memory import MemoryBooks
from tests.contracts.ledger_store import *  # noqa: F403


@pytest.fixture
def ledger() -> Iterator[MemoryBooks]:
    books = MemoryBooks()
    yield books
    assert books.total() == 0


@pytest.fixture
async def wallet(ledger: MemoryBooks) -> AsyncIterator[WalletDeps]:
    # These handlers use only the books; the hand operations' engine never connects.
    engine = create_async_engine("sqlite+aiosqlite://")
    yield WalletDeps(engine=engine, settings=load_settings({}, welcome_grant=300), books=ledger)
    await engine.dispose()
