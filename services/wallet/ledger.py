"""The credit ledger: plain async functions over SQL, no NATS.

Every function takes the engine (and whatever else it needs) as arguments and returns
a contract type from :mod:`kalaro.proto.wallet`, or raises
:class:`~kalaro.bus.ServiceError` with a code from :mod:`kalaro.proto.errors`. The
service wires them to subjects; tests call them directly on a real database.

This module is the shell: each operation validates its request, then runs one SQL
transaction that reads through :mod:`~services.wallet.store` /
:mod:`~services.wallet.hand_store`, lets :mod:`~services.wallet.rules` /
:mod:`~services.wallet.outcomes` decide (pure, unit-tested), and writes what they
decided. The operations on hands are in :mod:`~services.wallet.hand_ledger`, re-exported
here.

How exactly-once holds on both SQLite and PostgreSQL:

* Each keyed operation first looks for its stored answer, then *claims* its key before
  it touches any account: it inserts a row under a UNIQUE constraint
  (``wallet_transactions.idempotency_key`` such as ``welcome:<user>`` or
  ``outcome:<hand>``; a hand's row in ``wallet_settlements``), or moves a row out of a
  state with a conditional UPDATE (a hand from ``open`` to ``settled``/``voided``).
  Two racers cannot both claim: on PostgreSQL the
  second waits for the first to commit, then fails with a unique violation or matches
  no row, so :func:`~services.wallet.store.transaction` rolls back and runs the
  operation again, and this time it finds the first one's answer and returns it.
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

import uuid
from typing import Literal

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from kalaro.bus.errors import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.wallet import (
    Adjusted,
    AuditReport,
    Balance,
    History,
    HistoryEntry,
    WelcomeGranted,
)
from services.wallet import hand_store, rules, store
from services.wallet.hand_ledger import apply_outcomes, place_holds, settle, void
from services.wallet.outcomes import cap_payments
from services.wallet.rules import (
    MAX_AMOUNT,
    MAX_AUDIT_HOLDS,
    MAX_CREDIT_REQUEST,
    MAX_GAME,
    MAX_ID,
    MAX_PAGE,
    MAX_REQUEST_KEY,
    MAX_TEXT,
    SYSTEM,
)
from services.wallet.store import transaction

# The hand operations and the rules' limits live in their own modules; callers keep
# importing them from here (``ledger.settle``, ``ledger.cap_payments``).
__all__ = [
    "MAX_AMOUNT",
    "MAX_AUDIT_HOLDS",
    "MAX_CREDIT_REQUEST",
    "MAX_GAME",
    "MAX_ID",
    "MAX_PAGE",
    "MAX_REQUEST_KEY",
    "MAX_TEXT",
    "adjust",
    "apply_outcomes",
    "audit",
    "cap_payments",
    "get_balance",
    "grant_approved",
    "history",
    "place_holds",
    "settle",
    "void",
    "welcome_grant",
]


# --- balance, history, welcome -------------------------------------------------------------


async def get_balance(engine: AsyncEngine, user_id: str) -> Balance:
    """A player's balance, credits held for hands in play, and what is left to hold."""
    rules.check_user(user_id)

    async def body(conn: AsyncConnection) -> Balance:
        return rules.balance_of(user_id, await store.read_account(conn, user_id))

    return await transaction(engine, body)


async def welcome_grant(engine: AsyncEngine, user_id: str, amount: int) -> WelcomeGranted:
    """Grant a new player ``amount`` credits, exactly once per user, ever."""
    rules.check_welcome(user_id, amount)
    key = f"welcome:{user_id}"

    async def body(conn: AsyncConnection) -> WelcomeGranted:
        earlier = await store.transaction_by_key(conn, key)
        if earlier is not None:
            granted = await store.credited_by(conn, earlier)
            balance = rules.balance_of(user_id, await store.read_account(conn, user_id))
            return WelcomeGranted(user_id=user_id, granted=False, amount=granted, balance=balance)
        tx_id = await store.claim(conn, kind="welcome", key=key, actor=SYSTEM, memo="welcome grant")
        balance = await store.transfer_from_house(conn, tx_id, user_id, amount)
        return WelcomeGranted(user_id=user_id, granted=True, amount=amount, balance=balance)

    return await transaction(engine, body)


async def history(
    engine: AsyncEngine, user_id: str, *, limit: int = 50, before: int | None = None
) -> History:
    """A player's ledger entries, newest first; pass ``next_before`` back for the next page."""
    rules.check_history(user_id, limit, before)

    async def body(conn: AsyncConnection) -> History:
        # One extra row says whether there is another page.
        rows = await store.history_rows(conn, user_id, limit + 1, before)
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

    return await transaction(engine, body)


# --- approved grants and admin operations --------------------------------------------------


async def grant_approved(
    engine: AsyncEngine, approval_id: str, user_id: str, amount: int, admin_id: str, memo: str
) -> Adjusted:
    """Credits an admin approved (auth's approval workflow), house → player, exactly once
    per approval: keyed ``credit_request:<approval_id>`` (the key the wallet's own credit
    requests used, so one granted before they moved to auth is never granted again)."""
    rules.check_approved_grant(approval_id, user_id, amount, admin_id, memo)
    key = f"credit_request:{approval_id}"

    async def body(conn: AsyncConnection) -> Adjusted:
        earlier = await store.transaction_by_key(conn, key)
        if earlier is not None:
            balance = rules.balance_of(user_id, await store.read_account(conn, user_id))
            return Adjusted(tx_id=earlier, balance=balance, repeated=True)
        tx_id = await store.claim(
            conn, kind="credit_request", key=key, actor=admin_id, memo=memo or "credits approved"
        )
        balance = await store.transfer_from_house(conn, tx_id, user_id, amount)
        return Adjusted(tx_id=tx_id, balance=balance)

    return await transaction(engine, body)


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
    rules.check_adjustment(admin_id, user_id, amount, reason, kind, request_key)

    # Keyed by admin, so one admin's key can never replay another's adjustment.
    key = f"admin:{admin_id}:{request_key}" if request_key else f"{kind}:{uuid.uuid4().hex}"

    async def body(conn: AsyncConnection) -> Adjusted:
        if request_key:
            earlier = await store.earlier_adjustment(conn, key, user_id)
            if earlier is not None:
                tx_id, made = earlier
                rules.check_repeated_adjustment(tx_id, made, kind, reason, amount)
                balance = rules.balance_of(user_id, await store.read_account(conn, user_id))
                return Adjusted(tx_id=tx_id, balance=balance, repeated=True)
        if await store.read_account(conn, user_id) is None:
            # Every player's account opens with their welcome grant; a grant must never
            # conjure an account for an id nobody signed up with (a typo, a stale link).
            raise ServiceError(codes.NOT_FOUND, f"no player {user_id!r} has a wallet account")
        tx_id = await store.claim(conn, kind=kind, key=key, actor=admin_id, memo=reason)
        balance = await store.transfer_from_house(conn, tx_id, user_id, amount)
        return Adjusted(tx_id=tx_id, balance=balance)

    return await transaction(engine, body)


# --- audit -------------------------------------------------------------------------------------


async def audit(engine: AsyncEngine) -> AuditReport:
    """Check the books: the sum over all accounts is 0, each balance equals its entries'
    sum and each ``held`` its open holds' sum, and no player's available is negative;
    and list the open holds, oldest first (the reconciler's backlog).

    One SQL statement, so PostgreSQL reads it all from a single snapshot.
    """
    return await transaction(engine, hand_store.audit)
