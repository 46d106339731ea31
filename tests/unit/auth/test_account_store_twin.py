"""The accounts contract (tests/contracts/accounts_store.py) on the in-memory twin."""

from __future__ import annotations

import pytest

from services.auth.account_store import MemoryAccountStore
from tests.contracts.accounts_store import *  # noqa: F403


@pytest.fixture
def accounts() -> MemoryAccountStore:
    return MemoryAccountStore()
