"""The ledger's SQL: transactions and retries, accounts, claims and postings, and the
reads and writes of welcome grants, history, approved grants, adjustments and the audit.

Every function here runs inside the one transaction :func:`transaction` opened for an
operation of :mod:`services.wallet.ledger`; none decides anything about money (that is
:mod:`services.wallet.rules` and :mod:`services.wallet.outcomes`). The hands' rows and
holds are in :mod:`services.wallet.hand_store`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from kalaro.proto.wallet import Balance
from services.wallet import rules
from services.wallet.rules import MAX_TEXT, Account
from services.wallet.schema import HOUSE, accounts, entries, transactions

log = logging.getLogger("kalaro.wallet.ledger")

# Operations are retried after a lost race on a unique key, a deadlock or a
# serialization failure; a handful of attempts is plenty (a lost race resolves on the
# second pass), and the bound keeps a persistent fault from spinning forever.
_ATTEMPTS = 6
_RETRYABLE_SQLSTATES = frozenset({"40001", "40P01"})  # serialization_failure, deadlock

T = TypeVar("T")


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


# --- transactions and retries ----------------------------------------------------------


class LostRace(Exception):
    """A conditional claim matched nothing: a concurrent operation got there first."""


def _sqlstate(exc: DBAPIError) -> str | None:
    state = getattr(exc.orig, "sqlstate", None)
    return state if isinstance(state, str) else None


def _is_unique_violation(exc: IntegrityError) -> bool:
    # PostgreSQL says 23505; SQLite names the constraint kind in the message.
    return _sqlstate(exc) == "23505" or "UNIQUE constraint failed" in str(exc.orig)


# SQLite admits one writer at a time, and every transaction here begins IMMEDIATE, so
# concurrent requests would otherwise wait in SQLite's busy handler, which polls with
# sleeps of up to 100 ms. Queueing them on a lock per engine instead hands the database
# over as soon as it is free. (Other processes on the same file still meet the busy
# timeout, which is the best SQLite offers.)
_sqlite_queues: weakref.WeakKeyDictionary[AsyncEngine, asyncio.Lock] = weakref.WeakKeyDictionary()


def _queue(engine: AsyncEngine) -> contextlib.AbstractAsyncContextManager[object]:
    if engine.dialect.name != "sqlite":
        return contextlib.nullcontext()
    lock = _sqlite_queues.get(engine)
    if lock is None:
        lock = _sqlite_queues[engine] = asyncio.Lock()
    return lock


async def transaction(engine: AsyncEngine, body: Callable[[AsyncConnection], Awaitable[T]]) -> T:
    """Run ``body`` in one SQL transaction, again after a lost race (bounded).

    A :class:`ServiceError` raised by ``body`` rolls everything back and reaches the
    caller unchanged: nothing of a refused operation is ever written.
    """
    for attempt in range(1, _ATTEMPTS + 1):
        try:
            async with _queue(engine), engine.begin() as conn:
                return await body(conn)
        except LostRace:
            if attempt == _ATTEMPTS:
                raise
            log.debug("lost a race on a conditional claim, retrying (attempt %d)", attempt)
        except IntegrityError as exc:
            # A concurrent request claimed the same key first and has committed; the next
            # pass finds its answer. Any other violation (a CHECK) is a bug: fail loudly.
            if attempt == _ATTEMPTS or not _is_unique_violation(exc):
                raise
            log.debug("lost a race on a unique key, retrying (attempt %d)", attempt)
        except DBAPIError as exc:
            if attempt == _ATTEMPTS or _sqlstate(exc) not in _RETRYABLE_SQLSTATES:
                raise
            log.info("transaction rolled back by the database (%s), retrying", _sqlstate(exc))
            await asyncio.sleep(random.uniform(0, 0.005 * 2**attempt))
    raise AssertionError("unreachable")  # the loop either returns or raises


def _insert_ignore(conn: AsyncConnection, table: Any) -> Any:
    """``INSERT ... ON CONFLICT DO NOTHING`` in the connection's dialect."""
    if conn.dialect.name == "postgresql":
        return pg_dialect.insert(table).on_conflict_do_nothing()
    return sqlite_dialect.insert(table).on_conflict_do_nothing()


# --- accounts ----------------------------------------------------------------------------

_ACCOUNT_COLUMNS = (accounts.c.id, accounts.c.owner, accounts.c.balance, accounts.c.held)


def _account(row: Any) -> Account:
    return Account(id=row.id, owner=row.owner, balance=row.balance, held=row.held)


async def lock_accounts(conn: AsyncConnection, owners: Iterable[str]) -> dict[str, Account]:
    """Lock the accounts of ``owners`` that exist, in id order (no deadlocks on PG)."""
    rows = await conn.execute(
        select(*_ACCOUNT_COLUMNS)
        .where(accounts.c.owner.in_(sorted(set(owners))))
        .order_by(accounts.c.id)
        # FOR NO KEY UPDATE, not FOR UPDATE: the latter also blocks the KEY SHARE locks
        # PostgreSQL's foreign-key checks take when entries and holds are inserted, and
        # those come in payment order, not id order, so racing hands could deadlock.
        .with_for_update(key_share=True)
    )
    return {r.owner: _account(r) for r in rows}


async def _open_accounts(conn: AsyncConnection, owners: Sequence[str]) -> dict[str, Account]:
    """Lock the accounts of ``owners``, creating the missing ones (lazily, on first use)."""
    found = await lock_accounts(conn, owners)
    missing = [o for o in dict.fromkeys(owners) if o not in found]
    if missing:
        stamp = now()
        await conn.execute(
            _insert_ignore(conn, accounts),
            [{"owner": o, "balance": 0, "held": 0, "created_at": stamp} for o in missing],
        )
        found = await lock_accounts(conn, owners)
    return found


async def read_account(conn: AsyncConnection, owner: str) -> Account | None:
    row = (await conn.execute(select(*_ACCOUNT_COLUMNS).where(accounts.c.owner == owner))).first()
    return None if row is None else _account(row)


async def claim(
    conn: AsyncConnection,
    *,
    kind: str,
    key: str,
    actor: str,
    memo: str,
    hand_id: str | None = None,
) -> int:
    """Insert the transaction row; its UNIQUE idempotency key is what makes it once-only."""
    result = await conn.execute(
        insert(transactions)
        .values(
            kind=kind,
            idempotency_key=key,
            actor=actor,
            memo=memo[:MAX_TEXT],
            hand_id=hand_id,
            created_at=now(),
        )
        .returning(transactions.c.id)
    )
    tx_id: int = result.scalar_one()
    return tx_id


async def post(
    conn: AsyncConnection,
    tx_id: int,
    moves: Mapping[int, int],
    releases: Mapping[int, int] | None = None,
) -> None:
    """Write a transaction's entries and apply them (and released holds) to the accounts.

    ``moves`` maps account id to amount and must sum to zero: that is double entry.
    ``releases`` maps account id to credits no longer held.
    """
    if sum(moves.values()) != 0:
        raise ValueError(f"transaction {tx_id} does not balance: {dict(moves)}")
    releases = releases or {}
    lines = [{"tx_id": tx_id, "account_id": a, "amount": x} for a, x in moves.items() if x]
    if lines:
        await conn.execute(insert(entries), lines)
    await change_accounts(conn, moves, releases)


async def change_accounts(
    conn: AsyncConnection, deltas: Mapping[int, int], releases: Mapping[int, int]
) -> None:
    """Add ``deltas`` to balances and take ``releases`` off holds, in one statement."""
    # Sorted by id: PostgreSQL takes the row locks in this order, as everyone else does.
    changes = [
        {"_id": a, "_delta": deltas.get(a, 0), "_release": releases.get(a, 0)}
        for a in sorted(set(deltas) | set(releases))
        if deltas.get(a, 0) or releases.get(a, 0)
    ]
    if changes:
        await conn.execute(
            update(accounts)
            .where(accounts.c.id == bindparam("_id"))
            .values(
                balance=accounts.c.balance + bindparam("_delta"),
                held=accounts.c.held - bindparam("_release"),
            ),
            changes,
        )


async def transfer_from_house(
    conn: AsyncConnection, tx_id: int, user_id: str, amount: int
) -> Balance:
    """Move ``amount`` from the house to ``user_id`` (see :func:`rules.transfer_from_house`)."""
    # Both accounts are locked by one ordered statement: locking the player first and
    # the house after would deadlock against a grant that locks them in id order.
    found = await _open_accounts(conn, [HOUSE, user_id])
    house, user = found[HOUSE], found[user_id]
    balance = rules.transfer_from_house(user, user_id, amount)
    await post(conn, tx_id, {house.id: -amount, user.id: amount})
    return balance


# --- welcome, history, adjustments ---------------------------------------------------------


async def transaction_by_key(conn: AsyncConnection, key: str) -> int | None:
    tx_id: int | None = await conn.scalar(
        select(transactions.c.id).where(transactions.c.idempotency_key == key)
    )
    return tx_id


async def credited_by(conn: AsyncConnection, tx_id: int) -> int:
    """What a transaction credited, summed over its positive entries."""
    granted = await conn.scalar(
        select(func.coalesce(func.sum(entries.c.amount), 0)).where(
            entries.c.tx_id == tx_id, entries.c.amount > 0
        )
    )
    return int(granted or 0)


async def history_rows(
    conn: AsyncConnection, user_id: str, limit: int, before: int | None
) -> Sequence[Any]:
    """Up to ``limit`` entries of the player before entry ``before``, newest first."""
    query = (
        select(
            entries.c.id,
            entries.c.tx_id,
            transactions.c.kind,
            entries.c.amount,
            transactions.c.memo,
            transactions.c.created_at,
        )
        .join(transactions, transactions.c.id == entries.c.tx_id)
        .join(accounts, accounts.c.id == entries.c.account_id)
        .where(accounts.c.owner == user_id)
        .order_by(entries.c.id.desc())
        .limit(limit)
    )
    if before is not None:
        query = query.where(entries.c.id < before)
    return (await conn.execute(query)).all()


async def earlier_adjustment(
    conn: AsyncConnection, key: str, user_id: str
) -> tuple[int, tuple[str, str, int | None]] | None:
    """The transaction an admin's request key already made, if any: its id, and its
    kind, memo and what it moved for ``user_id``."""
    earlier = (
        await conn.execute(
            select(transactions.c.id, transactions.c.kind, transactions.c.memo).where(
                transactions.c.idempotency_key == key
            )
        )
    ).first()
    if earlier is None:
        return None
    moved = await conn.scalar(
        select(entries.c.amount)
        .join(accounts, accounts.c.id == entries.c.account_id)
        .where(entries.c.tx_id == earlier.id, accounts.c.owner == user_id)
    )
    return earlier.id, (earlier.kind, earlier.memo, moved)
