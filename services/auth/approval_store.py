"""The approval workflow's SQL (``auth_approvals`` and its audit trail
``auth_approval_events``), over a connection the caller opened: the caller owns the
transaction, so a transition and its audit row commit together. No rules here: which
move is legal is :mod:`services.auth.approval_states`'.
"""

from __future__ import annotations

from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from kalaro.proto.approvals import ApprovalKind, ApprovalStatus
from services.auth.records import ApprovalRecord
from services.auth.schema import approval_events, approvals, users


def _query() -> sa.Select[Any]:
    # Credit requests moved from the wallet may name someone without an account here.
    return sa.select(approvals, users.c.display_name).outerjoin(
        users, users.c.id == approvals.c.user_id
    )


def _record(row: Any) -> ApprovalRecord:
    return ApprovalRecord(
        approval_id=row.id,
        kind=cast(ApprovalKind, row.kind),
        user_id=row.user_id,
        display_name=row.display_name or "",
        amount=row.amount,
        note=row.note,
        status=cast(ApprovalStatus, row.status),
        created_at=row.created_at,
        decided_by=row.decided_by,
        decided_at=row.decided_at,
        reason=row.reason,
        applied_at=row.applied_at,
        tx_id=row.tx_id,
    )


async def approval(
    conn: AsyncConnection, approval_id: str, *, lock: bool = False
) -> ApprovalRecord | None:
    """One request; ``lock`` row-locks it on PostgreSQL (before a transition)."""
    query = _query().where(approvals.c.id == approval_id)
    if lock:
        query = query.with_for_update(of=approvals)
    row = (await conn.execute(query)).first()
    return None if row is None else _record(row)


async def pending_host_access(conn: AsyncConnection, user_id: str) -> ApprovalRecord | None:
    query = _query().where(
        approvals.c.user_id == user_id,
        approvals.c.kind == "host_access",
        approvals.c.status == "pending",
    )
    row = (await conn.execute(query)).first()
    return None if row is None else _record(row)


async def insert(conn: AsyncConnection, record: ApprovalRecord) -> None:
    """A new pending request and its first audit row; a second pending host-access
    request for the user raises ``IntegrityError`` (a partial unique index)."""
    await conn.execute(
        approvals.insert().values(
            id=record.approval_id,
            kind=record.kind,
            user_id=record.user_id,
            amount=record.amount,
            note=record.note,
            status=record.status,
            created_at=record.created_at,
        )
    )
    await _audit(conn, record.approval_id, record.status, record.user_id, record.created_at, "")


async def move(
    conn: AsyncConnection,
    current: ApprovalRecord,
    status: ApprovalStatus,
    *,
    actor: str,
    now_ms: int,
    reason: str = "",
    tx_id: int | None = None,
) -> bool:
    """Compare-and-set ``current`` → ``status`` (the columns that state records) and audit
    it; False when someone else moved it first."""
    values: dict[str, Any] = {"status": status}
    if status in ("approved", "declined"):
        values |= {"decided_by": actor, "decided_at": now_ms, "reason": reason}
    if status == "applied":
        values |= {"applied_at": now_ms, "tx_id": tx_id}
    moved = await conn.execute(
        approvals.update()
        .where(approvals.c.id == current.approval_id, approvals.c.status == current.status)
        .values(values)
    )
    if moved.rowcount != 1:
        return False
    await _audit(conn, current.approval_id, status, actor, now_ms, reason)
    return True


async def _audit(
    conn: AsyncConnection, approval_id: str, status: str, actor: str, at: int, reason: str
) -> None:
    seq = await conn.scalar(
        sa.select(sa.func.coalesce(sa.func.max(approval_events.c.seq), 0)).where(
            approval_events.c.approval_id == approval_id
        )
    )
    await conn.execute(
        approval_events.insert().values(
            approval_id=approval_id,
            seq=int(seq or 0) + 1,
            status=status,
            actor=actor,
            at=at,
            reason=reason,
        )
    )


async def events(
    conn: AsyncConnection, approval_id: str
) -> list[tuple[int, ApprovalStatus, str, int, str]]:
    """A request's audit trail in order: (seq, status, actor, at, reason)."""
    rows = await conn.execute(
        sa.select(
            approval_events.c.seq,
            approval_events.c.status,
            approval_events.c.actor,
            approval_events.c.at,
            approval_events.c.reason,
        )
        .where(approval_events.c.approval_id == approval_id)
        .order_by(approval_events.c.seq)
    )
    return [(r.seq, cast(ApprovalStatus, r.status), r.actor, r.at, r.reason) for r in rows]


async def page(
    conn: AsyncConnection,
    *,
    kind: ApprovalKind | None,
    status: ApprovalStatus | None,
    user_id: str | None,
    limit: int,
    offset: int,
) -> list[ApprovalRecord]:
    """Pending requests oldest first (a queue); otherwise newest first (history)."""
    query = _query()
    if kind is not None:
        query = query.where(approvals.c.kind == kind)
    if status is not None:
        query = query.where(approvals.c.status == status)
    if user_id is not None:
        query = query.where(approvals.c.user_id == user_id)
    if status == "pending":
        query = query.order_by(approvals.c.created_at, approvals.c.id)
    else:
        query = query.order_by(approvals.c.created_at.desc(), approvals.c.id)
    rows = (await conn.execute(query.limit(limit).offset(offset))).all()
    return [_record(row) for row in rows]


async def owed(conn: AsyncConnection, limit: int) -> list[ApprovalRecord]:
    """Approved credit requests not yet applied, oldest decision first."""
    query = (
        _query()
        .where(approvals.c.kind == "credits", approvals.c.status == "approved")
        .order_by(approvals.c.decided_at, approvals.c.id)
        .limit(limit)
    )
    return [_record(row) for row in (await conn.execute(query)).all()]
