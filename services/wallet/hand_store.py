"""The hands' SQL: a hand's row in ``wallet_settlements`` and its holds, the writes of
placing holds, settling and voiding, and the audit of the books.

Each hand has one row in ``wallet_settlements``: inserted ``open`` with its holds,
then moved to ``settled`` or ``voided`` by a conditional UPDATE (``WHERE status =
'open'``). That row is the claim every operation on the hand takes before touching an
account, so a void racing the holds, or a settle racing a void, can never both apply.
As in :mod:`services.wallet.store`, every function runs inside the operation's one
transaction and decides nothing about money.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from kalaro.proto.wallet import AuditReport, HoldRequest, OpenHold, Payment, Settlement
from services.wallet import outcomes
from services.wallet.outcomes import Hand, Hold, SettlePlan
from services.wallet.rules import MAX_AUDIT_HOLDS, MAX_TEXT, SYSTEM, Account, short_hold
from services.wallet.schema import HOUSE, accounts, entries, holds, settlements, transactions
from services.wallet.store import LostRace, change_accounts, now


async def load_hand(conn: AsyncConnection, hand_id: str) -> Hand | None:
    """The hand's row and its holds, in one round trip (settle is the hot path)."""
    return (await load_hands(conn, (hand_id,))).get(hand_id)


async def load_hands(conn: AsyncConnection, hand_ids: Iterable[str]) -> dict[str, Hand]:
    """Each known hand's row and holds, for any number of hands in one round trip."""
    wanted = sorted(set(hand_ids))
    rows = (
        await conn.execute(
            select(
                settlements.c.hand_id,
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
            .where(
                settlements.c.hand_id == wanted[0]
                if len(wanted) == 1
                else settlements.c.hand_id.in_(wanted)
            )
            .order_by(holds.c.id)
        )
    ).all()
    grouped: dict[str, list[Any]] = {}
    for row in rows:
        grouped.setdefault(row.hand_id, []).append(row)
    found = {}
    for hand_id, hand_rows in grouped.items():
        first = hand_rows[0]
        answer = None
        if first.status != "open":
            answer = Settlement(
                hand_id=hand_id,
                status=first.status,
                payments=outcomes.decode_payments(first.payments),
                tx_id=first.tx_id,
            )
        placed = tuple(
            Hold(id=r.hold_id, owner=r.owner, account_id=r.account_id, amount=r.amount)
            for r in hand_rows
            if r.hold_id is not None
        )
        found[hand_id] = Hand(
            status=first.status,
            table_id=first.table_id,
            requested=outcomes.decode_payments(first.requested),
            answer=answer,
            holds=placed,
        )
    return found


# --- holds ---------------------------------------------------------------------------------


async def open_hand(conn: AsyncConnection, hand_id: str, table_id: str, game: str, at: str) -> None:
    """The claim on the hand (primary key): a racing PlaceHolds or VoidHand for it
    waits here, then fails and retries into finding the hand."""
    await conn.execute(
        insert(settlements).values(
            hand_id=hand_id,
            table_id=table_id,
            status="open",
            requested="[]",
            payments="[]",
            created_at=at,
            game=game,
        )
    )


async def hold(
    conn: AsyncConnection,
    table_id: str,
    hand_id: str,
    requests: Sequence[HoldRequest],
    found: Mapping[str, Account],
    at: str,
) -> None:
    """Add each request to its (locked, checked) account's ``held`` and record the holds."""
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
            raise short_hold(hand_id, r.user_id)
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
                "created_at": at,
                "updated_at": at,
            }
            for r in requests
        ],
    )


# --- settle and void -----------------------------------------------------------------------


async def close_hand(
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
            requested=outcomes.encode_payments(requested),
            payments=outcomes.encode_payments(applied),
            tx_id=tx_id,
        )
    )
    if result.rowcount != 1:
        # A concurrent settle or void committed first; the next pass sees its outcome.
        raise LostRace(hand_id)


async def write_settlements(
    conn: AsyncConnection, plans: Sequence[SettlePlan]
) -> dict[str, Settlement]:
    """Write checked settlements of distinct hands with one statement per table touched.

    Claims first (the UNIQUE ``outcome:<hand>`` keys: a concurrent settle or void of any
    of these hands makes the whole transaction fail and the ledger's transaction run it
    again), then the hands' rows, entries, accounts (one UPDATE per account, in id
    order, summed over the hands) and holds.
    """
    at = now()
    claimed = await conn.execute(
        insert(transactions).returning(
            transactions.c.id, transactions.c.hand_id, sort_by_parameter_order=True
        ),
        [
            {
                "kind": "settlement",
                "idempotency_key": outcomes.outcome_key(plan.hand_id),
                "actor": SYSTEM,
                "memo": plan.memo[:MAX_TEXT],
                "hand_id": plan.hand_id,
                "created_at": at,
            }
            for plan in plans
        ],
    )
    tx_ids: dict[str, int] = {row.hand_id: row.id for row in claimed}
    closed = await conn.execute(
        update(settlements)
        .where(settlements.c.hand_id == bindparam("_hand"), settlements.c.status == "open")
        .values(
            status="settled",
            requested=bindparam("_requested"),
            payments=bindparam("_payments"),
            tx_id=bindparam("_tx"),
        ),
        [
            {
                "_hand": plan.hand_id,
                "_requested": outcomes.encode_payments(plan.requested),
                "_payments": outcomes.encode_payments(plan.applied),
                "_tx": tx_ids[plan.hand_id],
            }
            for plan in plans
        ],
    )
    if closed.rowcount not in (-1, len(plans)):  # (-1: the driver does not count batches)
        raise LostRace(",".join(p.hand_id for p in plans))
    writes = outcomes.settlement_writes(plans, tx_ids)
    if writes.entries:
        await conn.execute(insert(entries), writes.entries)
    await change_accounts(conn, writes.deltas, writes.releases)
    if writes.holds:
        await conn.execute(
            update(holds)
            .where(holds.c.id == bindparam("_hold"))
            .values(status=bindparam("_status"), captured=bindparam("_captured"), updated_at=at),
            writes.holds,
        )
    return {
        plan.hand_id: Settlement(
            hand_id=plan.hand_id,
            status="settled",
            payments=plan.applied,
            tx_id=tx_ids[plan.hand_id],
        )
        for plan in plans
    }


async def void_tombstone(conn: AsyncConnection, hand_id: str, table_id: str, tx_id: int) -> None:
    """A voided hand that never had holds; a racing PlaceHolds collides on its key."""
    await conn.execute(
        insert(settlements).values(
            hand_id=hand_id,
            table_id=table_id,
            status="voided",
            requested="[]",
            payments="[]",
            tx_id=tx_id,
            created_at=now(),
        )
    )


async def release_holds(conn: AsyncConnection, hand_id: str) -> None:
    await conn.execute(
        update(holds).where(holds.c.hand_id == hand_id).values(status="released", updated_at=now())
    )


# --- audit -------------------------------------------------------------------------------------


async def audit(conn: AsyncConnection) -> AuditReport:
    """The books as one SQL snapshot; see :func:`services.wallet.ledger.audit`."""
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
