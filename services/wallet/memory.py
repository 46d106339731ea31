"""The wallet's in-memory twin of :class:`~services.wallet.books.Books`, for the unit
tier: the same pure rules (:mod:`services.wallet.rules`) over dicts instead of SQL rows,
double-entry all the same (every movement a transaction of entries summing to zero).
Not for production: nothing lasts past the process."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.wallet import Adjusted, Balance, History, HistoryEntry, WelcomeGranted
from services.wallet import rules
from services.wallet.books import Books, SqlBooks
from services.wallet.rules import SYSTEM
from services.wallet.schema import HOUSE


@dataclass(frozen=True)
class _Transaction:
    id: int
    kind: str
    key: str
    actor: str
    memo: str
    created_at: str


@dataclass(frozen=True)
class _Entry:
    id: int
    tx_id: int
    owner: str
    amount: int


class MemoryBooks:
    """Accounts (opened by their first credit), transactions keyed once-only, entries."""

    def __init__(self) -> None:
        self._accounts: dict[str, rules.Account] = {}
        self._transactions: dict[str, _Transaction] = {}  # by idempotency key
        self._entries: list[_Entry] = []

    def total(self) -> int:
        """The sum over every account, the house's included: always 0."""
        return sum(a.balance for a in self._accounts.values())

    async def get_balance(self, user_id: str) -> Balance:
        rules.check_user(user_id)
        return rules.balance_of(user_id, self._accounts.get(user_id))

    async def welcome_grant(self, user_id: str, amount: int) -> WelcomeGranted:
        rules.check_welcome(user_id, amount)
        earlier = self._transactions.get(f"welcome:{user_id}")
        if earlier is not None:
            granted = sum(e.amount for e in self._entries if e.tx_id == earlier.id and e.amount > 0)
            balance = rules.balance_of(user_id, self._accounts.get(user_id))
            return WelcomeGranted(user_id=user_id, granted=False, amount=granted, balance=balance)
        tx = self._claim("welcome", f"welcome:{user_id}", SYSTEM, "welcome grant")
        balance = self._transfer_from_house(tx, user_id, amount)
        return WelcomeGranted(user_id=user_id, granted=True, amount=amount, balance=balance)

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
        rules.check_adjustment(admin_id, user_id, amount, reason, kind, request_key)
        key = f"admin:{admin_id}:{request_key}" if request_key else f"{kind}:{uuid.uuid4().hex}"
        earlier = self._transactions.get(key)
        if earlier is not None:
            moved = next(
                (e.amount for e in self._entries if e.tx_id == earlier.id and e.owner == user_id),
                None,
            )
            rules.check_repeated_adjustment(
                earlier.id, (earlier.kind, earlier.memo, moved), kind, reason, amount
            )
            balance = rules.balance_of(user_id, self._accounts.get(user_id))
            return Adjusted(tx_id=earlier.id, balance=balance, repeated=True)
        if user_id not in self._accounts:
            raise ServiceError(codes.NOT_FOUND, f"no player {user_id!r} has a wallet account")
        # Checked before the transaction exists, as SQL's rollback would leave nothing.
        rules.transfer_from_house(self._accounts[user_id], user_id, amount)
        tx = self._claim(kind, key, admin_id, reason)
        return Adjusted(tx_id=tx.id, balance=self._transfer_from_house(tx, user_id, amount))

    async def history(self, user_id: str, *, limit: int = 50, before: int | None = None) -> History:
        rules.check_history(user_id, limit, before)
        by_id = {t.id: t for t in self._transactions.values()}
        mine = [
            e
            for e in reversed(self._entries)
            if e.owner == user_id and (before is None or e.id < before)
        ]
        page = tuple(
            HistoryEntry(
                entry_id=e.id,
                tx_id=e.tx_id,
                kind=by_id[e.tx_id].kind,
                amount=e.amount,
                memo=by_id[e.tx_id].memo,
                created_at=by_id[e.tx_id].created_at,
            )
            for e in mine[:limit]
        )
        more = len(mine) > limit
        return History(entries=page, next_before=page[-1].entry_id if more else None)

    def _claim(self, kind: str, key: str, actor: str, memo: str) -> _Transaction:
        tx = _Transaction(
            id=len(self._transactions) + 1,
            kind=kind,
            key=key,
            actor=actor,
            memo=memo[: rules.MAX_TEXT],
            created_at=datetime.now(UTC).isoformat(timespec="microseconds"),
        )
        self._transactions[key] = tx
        return tx

    def _open(self, owner: str) -> rules.Account:
        if owner not in self._accounts:
            self._accounts[owner] = rules.Account(
                id=len(self._accounts) + 1, owner=owner, balance=0, held=0
            )
        return self._accounts[owner]

    def _transfer_from_house(self, tx: _Transaction, user_id: str, amount: int) -> Balance:
        house, user = self._open(HOUSE), self._open(user_id)
        balance = rules.transfer_from_house(user, user_id, amount)
        for account, moved in ((house, -amount), (user, amount)):
            self._entries.append(
                _Entry(id=len(self._entries) + 1, tx_id=tx.id, owner=account.owner, amount=moved)
            )
            self._accounts[account.owner] = rules.Account(
                id=account.id,
                owner=account.owner,
                balance=account.balance + moved,
                held=account.held,
            )
        return balance


if TYPE_CHECKING:  # mypy holds both to the port's interface
    _twin: type[Books] = MemoryBooks
    _real: type[Books] = SqlBooks
