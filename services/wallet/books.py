"""The players' books as the wallet's handlers see them: balances, the welcome grant,
admins' adjustments and each player's entries. :class:`Books` is the port;
:class:`SqlBooks` keeps them in the SQL ledger (:mod:`services.wallet.ledger`), and
:class:`services.wallet.memory.MemoryBooks` in memory, for the unit tier. Both pass
the same tests (tests/contracts/ledger_store.py).

Holds and hand settlements stay SQL-only (:mod:`services.wallet.hand_ledger`): they are
batched in one transaction per fetch, which a twin would not tell us anything about.
"""

from __future__ import annotations

from typing import Literal, Protocol

from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.proto.wallet import Adjusted, Balance, History, WelcomeGranted
from services.wallet import ledger


class Books(Protocol):
    async def get_balance(self, user_id: str) -> Balance: ...

    async def welcome_grant(self, user_id: str, amount: int) -> WelcomeGranted: ...

    async def adjust(
        self,
        admin_id: str,
        user_id: str,
        amount: int,
        reason: str,
        kind: Literal["grant", "adjust"] = "grant",
        *,
        request_key: str = "",
    ) -> Adjusted: ...

    async def history(
        self, user_id: str, *, limit: int = 50, before: int | None = None
    ) -> History: ...


class SqlBooks:
    """:class:`Books` in the SQL ledger: each call one transaction."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def get_balance(self, user_id: str) -> Balance:
        return await ledger.get_balance(self.engine, user_id)

    async def welcome_grant(self, user_id: str, amount: int) -> WelcomeGranted:
        return await ledger.welcome_grant(self.engine, user_id, amount)

    async def adjust(
        self,
        admin_id: str,
        user_id: str,
        amount: int,
        reason: str,
        kind: Literal["grant", "adjust"] = "grant",
        *,
        request_key: str = "",
    ) -> Adjusted:
        return await ledger.adjust(
            self.engine, admin_id, user_id, amount, reason, kind, request_key=request_key
        )

    async def history(self, user_id: str, *, limit: int = 50, before: int | None = None) -> History:
        return await ledger.history(self.engine, user_id, limit=limit, before=before)
