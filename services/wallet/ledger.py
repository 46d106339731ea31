"""The credit ledger: plain async functions over SQL, no NATS.

Every function takes the engine (and whatever else it needs) as arguments and returns
a contract type from :mod:`kalaro.proto.wallet`, or raises
:class:`~kalaro.bus.ServiceError` with a code from :mod:`kalaro.proto.errors`. The
service wires them to subjects; tests call them directly on a real database.

How exactly-once holds on both SQLite and PostgreSQL:

* Each keyed operation first looks for its stored answer, then *claims* its key before
  it touches any account: it inserts a row under a UNIQUE constraint
  (``wallet_transactions.idempotency_key`` such as ``welcome:<user>`` or
  ``outcome:<hand>``; a hand's row in ``wallet_settlements``), or moves a row out of a
  state with a conditional UPDATE (a hand from ``open`` to ``settled``/``voided``, a
  credit request from ``pending``). Two racers cannot both claim: on PostgreSQL the
  second waits for the first to commit, then fails with a unique violation or matches
  no row, so :func:`_transaction` rolls back and runs the operation again, and this
  time it finds the first one's answer and returns it.
* Accounts are locked in one order (by id), with ``SELECT ... FOR NO KEY UPDATE`` where
  an operation reads a balance before deciding, and UPDATEs sorted by id elsewhere, so
  PostgreSQL does not deadlock on them; a hold is added by a conditional UPDATE
  (``... WHERE balance - held >= :x``) as a second guard. Should PostgreSQL still
  report a deadlock or a serialization failure, the operation is retried (bounded).
* On SQLite every transaction starts with ``BEGIN IMMEDIATE`` (see :mod:`kalaro.sql`),
  so writers are serialised, and in one process they queue on a lock rather than in
  SQLite's busy handler.
* CHECK constraints on accounts make a negative available balance impossible even if
  all of the above had a bug.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import uuid
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

import msgspec
from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from kalaro.bus.errors import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.wallet import (
    Adjusted,
    AuditReport,
    Balance,
    CreditRequest,
    CreditRequestList,
    History,
    HistoryEntry,
    HoldRequest,
    HoldsPlaced,
    OpenHold,
    Payment,
    RequestStatus,
    Settlement,
    WelcomeGranted,
)
from services.wallet.schema import (
    HOUSE,
    accounts,
    credit_requests,
    entries,
    holds,
    settlements,
    transactions,
)

log = logging.getLogger("kalaro.wallet.ledger")

MAX_CREDIT_REQUEST = 1_000_000
# Ceiling for any single amount (hold, payment, admin grant): far below anything that
# could overflow a BIGINT when summed, far above any real table stake.
MAX_AMOUNT = 1_000_000_000
MAX_PAGE = 200
MAX_ID = 128
MAX_TEXT = 500
MAX_REQUEST_KEY = 64  # an admin client's retry key (a UUID is 36)
MAX_GAME = 32
MAX_AUDIT_HOLDS = 100  # open holds listed by the audit, oldest first

# Operations are retried after a lost race on a unique key, a deadlock or a
# serialization failure; a handful of attempts is plenty (a lost race resolves on the
# second pass), and the bound keeps a persistent fault from spinning forever.
_ATTEMPTS = 6
_RETRYABLE_SQLSTATES = frozenset({"40001", "40P01"})  # serialization_failure, deadlock

_SYSTEM = "system"

T = TypeVar("T")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


# --- validation ----------------------------------------------------------------------


def _bad(message: str) -> ServiceError:
    return ServiceError(codes.BAD_REQUEST, message)


def _check_id(value: str, field: str) -> None:
    if not value or len(value) > MAX_ID:
        raise _bad(f"{field} must be 1 to {MAX_ID} characters")


def _check_user(value: str, field: str = "user_id") -> None:
    _check_id(value, field)
    if value.startswith("@"):
        raise _bad(f"{field} may not start with '@' (reserved for the house)")


def _check_text(value: str, field: str, *, required: bool = False) -> None:
    if len(value) > MAX_TEXT:
        raise _bad(f"{field} must be at most {MAX_TEXT} characters")
    if required and not value.strip():
        raise _bad(f"{field} is required")


def _check_page(limit: int, offset: int = 0) -> None:
    if not 1 <= limit <= MAX_PAGE:
        raise _bad(f"limit must be between 1 and {MAX_PAGE}, got {limit}")
    if offset < 0:
        raise _bad(f"offset must not be negative, got {offset}")


def _check_payments(payments: Sequence[Payment]) -> None:
    seen: set[str] = set()
    for payment in payments:
        _check_user(payment.user_id, "payments.user_id")
        if payment.user_id in seen:
            raise _bad(f"{payment.user_id} appears twice in payments (they must be net)")
        seen.add(payment.user_id)
        if abs(payment.amount) > MAX_AMOUNT:
            raise _bad(f"payment of {payment.amount} for {payment.user_id} is out of range")
    total = sum(p.amount for p in payments)
    if total != 0:
        raise _bad(f"payments must sum to zero, they sum to {total}")


# --- transactions and retries ----------------------------------------------------------


class _LostRace(Exception):
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


async def _transaction(engine: AsyncEngine, body: Callable[[AsyncConnection], Awaitable[T]]) -> T:
    """Run ``body`` in one SQL transaction, again after a lost race (bounded).

    A :class:`ServiceError` raised by ``body`` rolls everything back and reaches the
    caller unchanged: nothing of a refused operation is ever written.
    """
    for attempt in range(1, _ATTEMPTS + 1):
        try:
            async with _queue(engine), engine.begin() as conn:
                return await body(conn)
        except _LostRace:
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


@dataclass(frozen=True)
class _Account:
    id: int
    owner: str
    balance: int
    held: int

    @property
    def available(self) -> int:
        return self.balance - self.held


def _balance_of(user_id: str, account: _Account | None) -> Balance:
    if account is None:
        return Balance(user_id=user_id, balance=0, held=0, available=0)
    return Balance(
        user_id=user_id, balance=account.balance, held=account.held, available=account.available
    )


_ACCOUNT_COLUMNS = (accounts.c.id, accounts.c.owner, accounts.c.balance, accounts.c.held)


async def _lock_accounts(conn: AsyncConnection, owners: Iterable[str]) -> dict[str, _Account]:
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
    return {r.owner: _Account(r.id, r.owner, r.balance, r.held) for r in rows}


async def _open_accounts(conn: AsyncConnection, owners: Sequence[str]) -> dict[str, _Account]:
    """Lock the accounts of ``owners``, creating the missing ones (lazily, on first use)."""
    found = await _lock_accounts(conn, owners)
    missing = [o for o in dict.fromkeys(owners) if o not in found]
    if missing:
        now = _now()
        await conn.execute(
            _insert_ignore(conn, accounts),
            [{"owner": o, "balance": 0, "held": 0, "created_at": now} for o in missing],
        )
        found = await _lock_accounts(conn, owners)
    return found


async def _claim(
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
            created_at=_now(),
        )
        .returning(transactions.c.id)
    )
    tx_id: int = result.scalar_one()
    return tx_id


async def _post(
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
    # Sorted by id: PostgreSQL takes the row locks in this order, as everyone else does.
    changes = [
        {"_id": a, "_delta": moves.get(a, 0), "_release": releases.get(a, 0)}
        for a in sorted(set(moves) | set(releases))
        if moves.get(a, 0) or releases.get(a, 0)
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


async def _read_account(conn: AsyncConnection, owner: str) -> _Account | None:
    row = (await conn.execute(select(*_ACCOUNT_COLUMNS).where(accounts.c.owner == owner))).first()
    return None if row is None else _Account(row.id, row.owner, row.balance, row.held)


async def _transfer_from_house(
    conn: AsyncConnection, tx_id: int, user_id: str, amount: int
) -> Balance:
    """Move ``amount`` from the house to ``user_id``; a negative amount goes back to the
    house, but never more than the player has available (``insufficient_funds``)."""
    # Both accounts are locked by one ordered statement: locking the player first and
    # the house after would deadlock against a grant that locks them in id order.
    found = await _open_accounts(conn, [HOUSE, user_id])
    house, user = found[HOUSE], found[user_id]
    if user.available + amount < 0:
        raise ServiceError(
            codes.INSUFFICIENT_FUNDS,
            f"cannot take {-amount} from {user_id}: only {user.available} available",
        )
    await _post(conn, tx_id, {house.id: -amount, user.id: amount})
    return Balance(
        user_id=user_id,
        balance=user.balance + amount,
        held=user.held,
        available=user.available + amount,
    )


# --- balance, history, welcome -------------------------------------------------------------


async def get_balance(engine: AsyncEngine, user_id: str) -> Balance:
    """A player's balance, credits held for hands in play, and what is left to hold."""
    _check_user(user_id)

    async def body(conn: AsyncConnection) -> Balance:
        return _balance_of(user_id, await _read_account(conn, user_id))

    return await _transaction(engine, body)


async def welcome_grant(engine: AsyncEngine, user_id: str, amount: int) -> WelcomeGranted:
    """Grant a new player ``amount`` credits, exactly once per user, ever."""
    _check_user(user_id)
    if not 0 <= amount <= MAX_AMOUNT:
        raise ValueError(f"welcome grant must be between 0 and {MAX_AMOUNT}, not {amount}")
    key = f"welcome:{user_id}"

    async def body(conn: AsyncConnection) -> WelcomeGranted:
        earlier = await conn.scalar(
            select(transactions.c.id).where(transactions.c.idempotency_key == key)
        )
        if earlier is not None:
            granted = await conn.scalar(
                select(func.coalesce(func.sum(entries.c.amount), 0)).where(
                    entries.c.tx_id == earlier, entries.c.amount > 0
                )
            )
            balance = _balance_of(user_id, await _read_account(conn, user_id))
            return WelcomeGranted(user_id, granted=False, amount=int(granted or 0), balance=balance)
        tx_id = await _claim(conn, kind="welcome", key=key, actor=_SYSTEM, memo="welcome grant")
        balance = await _transfer_from_house(conn, tx_id, user_id, amount)
        return WelcomeGranted(user_id, granted=True, amount=amount, balance=balance)

    return await _transaction(engine, body)


async def history(
    engine: AsyncEngine, user_id: str, *, limit: int = 50, before: int | None = None
) -> History:
    """A player's ledger entries, newest first; pass ``next_before`` back for the next page."""
    _check_user(user_id)
    _check_page(limit)
    if before is not None and before < 1:
        raise _bad(f"before must be a positive entry id, got {before}")
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
        .limit(limit + 1)  # one extra row says whether there is another page
    )
    if before is not None:
        query = query.where(entries.c.id < before)

    async def body(conn: AsyncConnection) -> History:
        rows = (await conn.execute(query)).all()
        page = tuple(
            HistoryEntry(
                entry_id=r.id,
                tx_id=r.tx_id,
                kind=r.kind,
                amount=r.amount,
                memo=r.memo,
                created_at=r.created_at,
            )
            for r in rows[:limit]
        )
        more = len(rows) > limit
        return History(entries=page, next_before=page[-1].entry_id if more else None)

    return await _transaction(engine, body)


# --- credit requests and admin operations --------------------------------------------------


def _credit_request(row: Any) -> CreditRequest:
    return CreditRequest(
        request_id=row.request_id,
        user_id=row.user_id,
        amount=row.amount,
        note=row.note,
        status=row.status,
        created_at=row.created_at,
        decided_by=row.decided_by,
        decided_at=row.decided_at,
        reason=row.reason,
    )


async def request_credits(
    engine: AsyncEngine, user_id: str, amount: int, note: str = ""
) -> CreditRequest:
    """A player asks for credits; an admin decides later."""
    _check_user(user_id)
    if not 0 < amount <= MAX_CREDIT_REQUEST:
        raise _bad(f"amount must be between 1 and {MAX_CREDIT_REQUEST}, got {amount}")
    _check_text(note, "note")
    values = {
        "request_id": uuid.uuid4().hex,
        "user_id": user_id,
        "amount": amount,
        "note": note,
        "status": "pending",
        "created_at": _now(),
        "reason": "",
    }

    async def body(conn: AsyncConnection) -> CreditRequest:
        row = (
            await conn.execute(insert(credit_requests).values(**values).returning(credit_requests))
        ).one()
        return _credit_request(row)

    return await _transaction(engine, body)


async def list_credit_requests(
    engine: AsyncEngine,
    *,
    status: RequestStatus | None = "pending",
    user_id: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> CreditRequestList:
    """Credit requests, oldest first (the order an admin works through them)."""
    _check_page(limit, offset)
    query = select(credit_requests)
    if status is not None:
        query = query.where(credit_requests.c.status == status)
    if user_id is not None:
        query = query.where(credit_requests.c.user_id == user_id)
    query = (
        query.order_by(credit_requests.c.created_at, credit_requests.c.request_id)
        .limit(limit)
        .offset(offset)
    )

    async def body(conn: AsyncConnection) -> CreditRequestList:
        rows = (await conn.execute(query)).all()
        return CreditRequestList(requests=tuple(_credit_request(r) for r in rows))

    return await _transaction(engine, body)


async def decide_credit_request(
    engine: AsyncEngine, request_id: str, admin_id: str, *, approve: bool, reason: str = ""
) -> CreditRequest:
    """Approve (credits move house → player) or reject a pending request, exactly once."""
    _check_id(request_id, "request_id")
    _check_user(admin_id, "admin_id")
    _check_text(reason, "reason")

    async def body(conn: AsyncConnection) -> CreditRequest:
        # The conditional UPDATE is the claim: on PostgreSQL a racing decision waits for
        # the row lock, then re-checks ``status = 'pending'`` and matches nothing.
        row = (
            await conn.execute(
                update(credit_requests)
                .where(
                    credit_requests.c.request_id == request_id,
                    credit_requests.c.status == "pending",
                )
                .values(
                    status="approved" if approve else "rejected",
                    decided_by=admin_id,
                    decided_at=_now(),
                    reason=reason,
                )
                .returning(credit_requests)
            )
        ).first()
        if row is None:
            earlier = (
                await conn.execute(
                    select(credit_requests).where(credit_requests.c.request_id == request_id)
                )
            ).first()
            if earlier is None:
                raise ServiceError(codes.NOT_FOUND, f"no credit request {request_id}")
            raise ServiceError(
                codes.ALREADY_DECIDED,
                f"credit request {request_id} was already {earlier.status} "
                f"by {earlier.decided_by} at {earlier.decided_at}",
            )
        if approve:
            memo = reason or f"credit request approved: {row.note}"
            tx_id = await _claim(
                conn,
                kind="credit_request",
                key=f"credit_request:{request_id}",
                actor=admin_id,
                memo=memo,
            )
            await _transfer_from_house(conn, tx_id, row.user_id, row.amount)
            await conn.execute(
                update(credit_requests)
                .where(credit_requests.c.request_id == request_id)
                .values(tx_id=tx_id)
            )
        return _credit_request(row)

    return await _transaction(engine, body)


async def adjust(
    engine: AsyncEngine,
    admin_id: str,
    user_id: str,
    amount: int,
    reason: str,
    kind: Literal["grant", "adjust"] = "grant",
    *,
    request_key: str = "",
) -> Adjusted:
    """An admin's grant (amount > 0) or correction (either sign), recorded with who and why.

    A correction may take credits back, but never more than the player has available:
    credits held for a hand in play stay held. The player must have an account (opened
    by their welcome grant), else ``not_found`` and nothing changes.

    With a ``request_key`` it happens once per admin and key: a repeat (the admin's
    client retrying after a timeout) answers with the first transaction and moves
    nothing; the same key for a different adjustment is a ``conflict``.
    """
    _check_user(admin_id, "admin_id")
    if len(request_key) > MAX_REQUEST_KEY or not request_key.isascii():
        raise _bad(f"request_key must be at most {MAX_REQUEST_KEY} ASCII characters")
    _check_user(user_id)
    _check_text(reason, "reason", required=True)
    if kind == "grant" and amount <= 0:
        raise _bad(f"a grant must be positive, got {amount} (use kind 'adjust' to take back)")
    if kind == "adjust" and amount == 0:
        raise _bad("an adjustment must not be zero")
    if kind not in ("grant", "adjust"):
        raise _bad(f"kind must be 'grant' or 'adjust', got {kind!r}")
    if abs(amount) > MAX_AMOUNT:
        raise _bad(f"amount must be at most {MAX_AMOUNT} either way, got {amount}")

    # Keyed by admin, so one admin's key can never replay another's adjustment.
    key = f"admin:{admin_id}:{request_key}" if request_key else f"{kind}:{uuid.uuid4().hex}"

    async def body(conn: AsyncConnection) -> Adjusted:
        if request_key:
            earlier = await _earlier_adjustment(conn, key, user_id, amount, reason, kind)
            if earlier is not None:
                balance = _balance_of(user_id, await _read_account(conn, user_id))
                return Adjusted(tx_id=earlier, balance=balance, repeated=True)
        if await _read_account(conn, user_id) is None:
            # Every player's account opens with their welcome grant; a grant must never
            # conjure an account for an id nobody signed up with (a typo, a stale link).
            raise ServiceError(codes.NOT_FOUND, f"no player {user_id!r} has a wallet account")
        tx_id = await _claim(conn, kind=kind, key=key, actor=admin_id, memo=reason)
        balance = await _transfer_from_house(conn, tx_id, user_id, amount)
        return Adjusted(tx_id=tx_id, balance=balance)

    return await _transaction(engine, body)


async def _earlier_adjustment(
    conn: AsyncConnection, key: str, user_id: str, amount: int, reason: str, kind: str
) -> int | None:
    """The transaction an admin's request key already made, if any; it must be this one."""
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
    if (earlier.kind, earlier.memo, moved) != (kind, reason[:MAX_TEXT], amount):
        raise ServiceError(
            codes.CONFLICT,
            f"request key already used for another adjustment (transaction {earlier.id})",
        )
    tx_id: int = earlier.id
    return tx_id


# --- holds, settlement, void -----------------------------------------------------------------
#
# Each hand has one row in ``wallet_settlements``: inserted ``open`` with its holds,
# then moved to ``settled`` or ``voided`` by a conditional UPDATE (``WHERE status =
# 'open'``). That row is the claim every operation on the hand takes before touching an
# account, so a void racing the holds, or a settle racing a void, can never both apply.


@dataclass(frozen=True)
class _Hold:
    id: int
    owner: str
    account_id: int
    amount: int


_payments_json = msgspec.json.Decoder(tuple[Payment, ...])


def _outcome_key(hand_id: str) -> str:
    """The one idempotency key of a hand's outcome, settlement or void alike: the
    database itself refuses a second outcome for a hand (with the hand's row below)."""
    return f"outcome:{hand_id}"


def _encode_payments(payments: Iterable[Payment]) -> str:
    return msgspec.json.encode(tuple(payments)).decode()


@dataclass(frozen=True)
class _Hand:
    status: str  # open, settled, voided
    table_id: str
    requested: tuple[Payment, ...]
    answer: Settlement | None  # the stored answer once settled or voided
    holds: tuple[_Hold, ...]  # in the order they were placed


async def _hand(conn: AsyncConnection, hand_id: str) -> _Hand | None:
    """The hand's row and its holds, in one round trip (settle is the hot path)."""
    rows = (
        await conn.execute(
            select(
                settlements.c.status,
                settlements.c.table_id,
                settlements.c.requested,
                settlements.c.payments,
                settlements.c.tx_id,
                holds.c.id.label("hold_id"),
                accounts.c.owner,
                holds.c.account_id,
                holds.c.amount,
            )
            .select_from(
                settlements.outerjoin(holds, holds.c.hand_id == settlements.c.hand_id).outerjoin(
                    accounts, accounts.c.id == holds.c.account_id
                )
            )
            .where(settlements.c.hand_id == hand_id)
            .order_by(holds.c.id)
        )
    ).all()
    if not rows:
        return None
    first = rows[0]
    answer = None
    if first.status != "open":
        answer = Settlement(
            hand_id=hand_id,
            status=first.status,
            payments=_payments_json.decode(first.payments),
            tx_id=first.tx_id,
        )
    placed = tuple(
        _Hold(r.hold_id, r.owner, r.account_id, r.amount) for r in rows if r.hold_id is not None
    )
    return _Hand(
        first.status, first.table_id, _payments_json.decode(first.requested), answer, placed
    )


async def _close_hand(
    conn: AsyncConnection,
    hand_id: str,
    status: Literal["settled", "voided"],
    tx_id: int,
    requested: Iterable[Payment] = (),
    applied: Iterable[Payment] = (),
) -> None:
    """Move the hand from ``open`` to its outcome: the claim on the hand's outcome."""
    result = await conn.execute(
        update(settlements)
        .where(settlements.c.hand_id == hand_id, settlements.c.status == "open")
        .values(
            status=status,
            requested=_encode_payments(requested),
            payments=_encode_payments(applied),
            tx_id=tx_id,
        )
    )
    if result.rowcount != 1:
        # A concurrent settle or void committed first; the next pass sees its outcome.
        raise _LostRace(hand_id)


def _net(payments: Iterable[Payment]) -> list[tuple[str, int]]:
    return sorted((p.user_id, p.amount) for p in payments)


async def place_holds(
    engine: AsyncEngine,
    table_id: str,
    hand_id: str,
    requests: Sequence[HoldRequest],
    game: str = "",
) -> HoldsPlaced:
    """Hold credits on every seated player for one hand: all of them, or none.

    A hold never exceeds the player's available balance (balance minus holds). If anyone
    is short, nothing is held and the error names everyone who is. Repeating the call
    for a hand whose holds are in place returns those holds and changes nothing; a hand
    already settled or voided is a ``conflict`` (its holds are gone, and handing them
    back as if placed would let a hand start unbacked).
    """
    _check_id(table_id, "table_id")
    _check_id(hand_id, "hand_id")
    if len(game) > MAX_GAME:
        raise _bad(f"game must be at most {MAX_GAME} characters")
    if not requests:
        raise _bad("holds must name at least one player")
    seen: set[str] = set()
    for r in requests:
        _check_user(r.user_id, "holds.user_id")
        if r.user_id in seen:
            raise _bad(f"{r.user_id} appears twice in holds")
        seen.add(r.user_id)
        if not 0 < r.amount <= MAX_AMOUNT:
            raise _bad(f"hold for {r.user_id} must be between 1 and {MAX_AMOUNT}, got {r.amount}")

    async def body(conn: AsyncConnection) -> HoldsPlaced:
        hand = await _hand(conn, hand_id)
        if hand is not None:
            if hand.status != "open":
                raise ServiceError(codes.CONFLICT, f"hand {hand_id} is already {hand.status}")
            return HoldsPlaced(hand_id, tuple(HoldRequest(h.owner, h.amount) for h in hand.holds))
        now = _now()
        # The claim on the hand (primary key): a racing PlaceHolds or VoidHand for it
        # waits here, then fails and retries into the branch above.
        await conn.execute(
            insert(settlements).values(
                hand_id=hand_id,
                table_id=table_id,
                status="open",
                requested="[]",
                payments="[]",
                created_at=now,
                game=game,
            )
        )
        await _claim(
            conn,
            kind="holds",
            key=f"holds:{hand_id}",
            actor=_SYSTEM,
            memo=f"holds for hand {hand_id} at table {table_id}",
            hand_id=hand_id,
        )
        found = await _lock_accounts(conn, (r.user_id for r in requests))
        short = []
        for r in requests:
            account = found.get(r.user_id)
            available = account.available if account else 0
            if available < r.amount:
                short.append(f"{r.user_id} (available {available}, needs {r.amount})")
        if short:
            raise ServiceError(
                codes.INSUFFICIENT_FUNDS,
                f"cannot hold for hand {hand_id}, not enough available: {', '.join(short)}",
            )
        for r in sorted(requests, key=lambda r: found[r.user_id].id):
            # Already checked under the row lock; the condition is the second guard.
            held = await conn.execute(
                update(accounts)
                .where(
                    accounts.c.id == found[r.user_id].id,
                    accounts.c.balance - accounts.c.held >= r.amount,
                )
                .values(held=accounts.c.held + r.amount)
            )
            if held.rowcount != 1:
                raise ServiceError(
                    codes.INSUFFICIENT_FUNDS,
                    f"cannot hold for hand {hand_id}, not enough available: {r.user_id}",
                )
        await conn.execute(
            insert(holds),
            [
                {
                    "hand_id": hand_id,
                    "table_id": table_id,
                    "account_id": found[r.user_id].id,
                    "amount": r.amount,
                    "captured": 0,
                    "status": "held",
                    "created_at": now,
                    "updated_at": now,
                }
                for r in requests
            ],
        )
        return HoldsPlaced(hand_id, tuple(requests))

    return await _transaction(engine, body)


def cap_payments(payments: Sequence[Payment], held: Mapping[str, int]) -> tuple[Payment, ...]:
    """Payments as applied: no loser pays more than their hold on the hand.

    The engines' maximum-loss rule should make an over-ask impossible, but the wallet
    does not rely on it. A loser asked for more than they hold pays exactly their hold;
    the winners' receipts then shrink so the hand still sums to zero. The shortfall is
    shared in proportion to what each winner was owed, by the largest remainder method:
    each winner first gets ``floor(owed * paid / owed_total)``, then the credits still
    to hand out go one each to the winners with the largest remainders (earlier in
    ``payments`` first on ties). No winner ever gets more than they were owed, and
    payments that need no capping come back unchanged.
    """
    paid = {p.user_id: min(-p.amount, held.get(p.user_id, 0)) for p in payments if p.amount < 0}
    paid_total = sum(paid.values())
    owed = {p.user_id: p.amount for p in payments if p.amount > 0}
    owed_total = sum(owed.values())
    received = dict(owed)
    if paid_total != owed_total:
        shares = {u: divmod(a * paid_total, owed_total) for u, a in owed.items()}
        received = {u: q for u, (q, _r) in shares.items()}
        left = paid_total - sum(received.values())
        # sorted() is stable: among equal remainders, earlier winners come first.
        for user in sorted(owed, key=lambda u: -shares[u][1])[:left]:
            received[user] += 1
    return tuple(
        Payment(p.user_id, -paid[p.user_id] if p.amount < 0 else received.get(p.user_id, 0))
        for p in payments
    )


async def settle(
    engine: AsyncEngine, hand_id: str, payments: Sequence[Payment], table_id: str = ""
) -> Settlement:
    """Apply a finished hand in ONE transaction: capture holds, move credits, release the rest.

    Keyed by hand id: a repeat returns the stored answer and changes nothing; settling a
    voided hand, or re-settling with different payments, is a ``conflict``. Every player
    in ``payments`` must hold credits on this hand (they are the seated players), and
    ``payments`` must sum to zero, else ``bad_request``. A loser pays at most their hold
    (see :func:`cap_payments`). Players who hold credits on the hand but appear in no
    payment just get their hold back.
    """
    _check_id(hand_id, "hand_id")
    _check_payments(payments)

    async def body(conn: AsyncConnection) -> Settlement:
        hand = await _hand(conn, hand_id)
        if hand is None:
            raise _bad(f"hand {hand_id} has no holds to settle")
        if hand.answer is not None:
            if hand.status != "settled":
                log.error(
                    "hand %s: settlement refused: the hand was voided (transaction %s); "
                    "one outcome per hand",
                    hand_id,
                    hand.answer.tx_id,
                )
                raise ServiceError(codes.CONFLICT, f"hand {hand_id} was voided; cannot settle it")
            if _net(hand.requested) != _net(payments):
                log.error(
                    "hand %s: settlement refused: settled before with other payments", hand_id
                )
                raise ServiceError(
                    codes.CONFLICT, f"hand {hand_id} was already settled with other payments"
                )
            return hand.answer
        seated = hand.holds
        by_owner = {h.owner: h for h in seated}
        unseated = [p.user_id for p in payments if p.user_id not in by_owner]
        if unseated:
            raise _bad(f"no hold on hand {hand_id} for: {', '.join(unseated)}")
        applied = cap_payments(payments, {h.owner: h.amount for h in seated})
        if applied != tuple(payments):
            log.warning("hand %s: payments capped at holds: %s -> %s", hand_id, payments, applied)
        tx_id = await _claim(
            conn,
            kind="settlement",
            key=_outcome_key(hand_id),
            actor=_SYSTEM,
            memo=f"hand {hand_id} at table {table_id or hand.table_id}",
            hand_id=hand_id,
        )
        await _close_hand(conn, hand_id, "settled", tx_id, payments, applied)
        moves = {by_owner[p.user_id].account_id: p.amount for p in applied}
        await _post(conn, tx_id, moves, {h.account_id: h.amount for h in seated})
        captured = {p.user_id: -p.amount for p in applied if p.amount < 0}
        await conn.execute(
            update(holds)
            .where(holds.c.id == bindparam("_hold"))
            .values(
                status=bindparam("_status"),
                captured=bindparam("_captured"),
                updated_at=_now(),
            ),
            [
                {
                    "_hold": h.id,
                    "_status": "captured" if captured.get(h.owner) else "released",
                    "_captured": captured.get(h.owner, 0),
                }
                for h in seated
            ],
        )
        return Settlement(hand_id=hand_id, status="settled", payments=applied, tx_id=tx_id)

    return await _transaction(engine, body)


async def void(
    engine: AsyncEngine,
    hand_id: str,
    table_id: str = "",
    *,
    why: str = "",
    actor: str = _SYSTEM,
) -> Settlement:
    """Release every hold of a cancelled hand; no credits move.

    Voiding a hand that has no holds (yet) still records it, so holds that arrive late
    for it are refused rather than stranded. A repeat returns the stored answer; a
    settled hand cannot be voided (``conflict``). ``why`` and ``actor`` are recorded on
    the transaction (the reconciler says why it released a hold nobody decided).
    """
    _check_id(hand_id, "hand_id")

    async def body(conn: AsyncConnection) -> Settlement:
        hand = await _hand(conn, hand_id)
        if hand is not None and hand.answer is not None:
            if hand.status != "voided":
                log.error(
                    "hand %s: void refused: the hand was settled (transaction %s); "
                    "one outcome per hand",
                    hand_id,
                    hand.answer.tx_id,
                )
                raise ServiceError(codes.CONFLICT, f"hand {hand_id} was settled; cannot void it")
            return hand.answer
        table = table_id or (hand.table_id if hand else "")
        tx_id = await _claim(
            conn,
            kind="void",
            key=_outcome_key(hand_id),
            actor=actor,
            memo=f"hand {hand_id} at table {table} voided" + (f": {why}" if why else ""),
            hand_id=hand_id,
        )
        if hand is None:
            # A tombstone; a racing PlaceHolds for the hand collides on its primary key.
            await conn.execute(
                insert(settlements).values(
                    hand_id=hand_id,
                    table_id=table,
                    status="voided",
                    requested="[]",
                    payments="[]",
                    tx_id=tx_id,
                    created_at=_now(),
                )
            )
            return Settlement(hand_id=hand_id, status="voided", payments=(), tx_id=tx_id)
        await _close_hand(conn, hand_id, "voided", tx_id)
        await _post(conn, tx_id, {}, {h.account_id: h.amount for h in hand.holds})
        await conn.execute(
            update(holds)
            .where(holds.c.hand_id == hand_id)
            .values(status="released", updated_at=_now())
        )
        return Settlement(hand_id=hand_id, status="voided", payments=(), tx_id=tx_id)

    return await _transaction(engine, body)


# --- audit -------------------------------------------------------------------------------------


async def audit(engine: AsyncEngine) -> AuditReport:
    """Check the books: the sum over all accounts is 0, each balance equals its entries'
    sum and each ``held`` its open holds' sum, and no player's available is negative;
    and list the open holds, oldest first (the reconciler's backlog).

    One SQL statement, so PostgreSQL reads it all from a single snapshot.
    """
    entry_sum = (
        select(func.coalesce(func.sum(entries.c.amount), 0))
        .where(entries.c.account_id == accounts.c.id)
        .scalar_subquery()
    )
    hold_sum = (
        select(func.coalesce(func.sum(holds.c.amount), 0))
        .where(holds.c.account_id == accounts.c.id, holds.c.status == "held")
        .scalar_subquery()
    )
    query = select(
        accounts.c.owner,
        accounts.c.balance,
        accounts.c.held,
        entry_sum.label("entry_sum"),
        hold_sum.label("hold_sum"),
    ).order_by(accounts.c.id)

    open_holds = (
        select(
            holds.c.hand_id, holds.c.table_id, accounts.c.owner, holds.c.amount, holds.c.created_at
        )
        .join(accounts, accounts.c.id == holds.c.account_id)
        .where(holds.c.status == "held")
        .order_by(holds.c.created_at, holds.c.id)
        .limit(MAX_AUDIT_HOLDS)
    )
    open_count = select(func.count()).select_from(holds).where(holds.c.status == "held")

    async def body(conn: AsyncConnection) -> AuditReport:
        rows = (await conn.execute(query)).all()
        held = [
            OpenHold(
                hand_id=h.hand_id,
                table_id=h.table_id,
                user_id=h.owner,
                amount=h.amount,
                placed_at=h.created_at,
            )
            for h in (await conn.execute(open_holds)).all()
        ]
        return AuditReport(
            open_holds=tuple(held),
            open_hold_count=int(await conn.scalar(open_count) or 0),
            total=sum(int(r.balance) for r in rows),
            accounts=len(rows),
            mismatched_accounts=tuple(
                r.owner
                for r in rows
                if int(r.balance) != int(r.entry_sum) or int(r.held) != int(r.hold_sum)
            ),
            negative_available=tuple(
                r.owner for r in rows if r.owner != HOUSE and r.balance - r.held < 0
            ),
        )

    return await _transaction(engine, body)
