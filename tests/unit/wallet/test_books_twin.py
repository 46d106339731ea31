"""The books contract (tests/contracts/ledger_store.py) on the in-memory twin, which
also keeps the books balanced (every movement sums to zero)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from services.wallet.memory import MemoryBooks
from tests.contracts.ledger_store import *  # noqa: F403


@pytest.fixture
def ledger() -> Iterator[MemoryBooks]:
    books = MemoryBooks()
    yield books
    assert books.total() == 0
