"""The one approval workflow: what players ask of admins (host access, credits), one
table (``auth_approvals``), one state machine (:mod:`services.auth.approval_states`),
one audit trail (``auth_approval_events``: who moved it where, when, why).

Why here, in auth: auth knows who is an admin and owns the roles that host access
grants, so an approval of host access changes the role in the deciding transaction
(``pending → approved → applied`` at once). Credits are the wallet's: an approval of
credits commits ``approved`` first, then asks the wallet for the grant, a ledger
transaction keyed by the approval id (``wallet.approved_grant``), and records
``applied`` with its transaction id. If the wallet is down or slow the approval stays
``approved``; :func:`apply_owed` applies it later, after the next decision and every
:data:`APPLY_EVERY_SECONDS` (bootstrap's loop). A repeat of the grant moves nothing, so
the retry is exactly once.

The audit is the trail table, written in the transaction of each move; the wallet's
ledger keeps its own record of the grant (actor: the admin who approved, memo: their
reason). The wallet's ``audit`` endpoint checks the books, not decisions.

The admin check is made here as well as in the gateway: a request on the bus from
anywhere else must not be able to grant roles or credits.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

import msgspec
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.approvals import (
    Approval,
    ApprovalEvent,
    ApprovalList,
    ApprovalStatus,
    ApprovalTrail,
    DecideApproval,
    GetApprovalTrail,
    ListApprovals,
    RequestApproval,
    WithdrawApproval,
)
from kalaro.proto.wallet import GrantApproved
from services.auth import approval_states as states
from services.auth import approval_store as approvals
from services.auth import rules, store
from services.auth.deps import AuthDeps
from services.auth.records import ApprovalRecord

log = logging.getLogger("services.auth")

#: How often the bootstrap's loop applies approvals still owed (the wallet was down).
APPLY_EVERY_SECONDS = 15.0
#: At most this many are applied per pass (the rest on the next).
APPLY_BATCH = 50
#: The actor in the audit trail of a move no person made (applying a grant).
SYSTEM = "system"


def view(record: ApprovalRecord) -> Approval:
    def when(ms: int | None) -> str | None:
        return None if ms is None else rules.iso(ms)

    return Approval(
        approval_id=record.approval_id,
        kind=record.kind,
        user_id=record.user_id,
        display_name=record.display_name,
        amount=record.amount,
        note=record.note,
        status=record.status,
        created_at=rules.iso(record.created_at),
        decided_by=record.decided_by,
        decided_at=when(record.decided_at),
        reason=record.reason,
        applied_at=when(record.applied_at),
        tx_id=record.tx_id,
    )


async def request_approval(req: RequestApproval, deps: AuthDeps) -> Approval:
    """A player asks. Asking for host access again while one is pending returns it."""
    note = rules.clean_note(req.note)
    states.check_request(req.kind, req.amount)
    record = ApprovalRecord(
        approval_id=uuid.uuid4().hex,
        kind=req.kind,
        user_id=req.user_id,
        display_name="",
        amount=req.amount,
        note=note,
        status="pending",
        created_at=deps.now_ms(),
    )
    try:
        async with deps.engine.begin() as conn:
            account = await store.account_by_id(conn, req.user_id)
            if req.kind == "host_access":
                rules.require_may_request_host(account)
                existing = await approvals.pending_host_access(conn, req.user_id)
                if existing is not None:
                    return view(existing)
            elif account is None:
                raise ServiceError(codes.NOT_FOUND, "no such user")
            await approvals.insert(conn, record)
            row = await approvals.approval(conn, record.approval_id)
            assert row is not None  # inserted just now, in this transaction
            return view(row)
    except IntegrityError:
        # Raced with the same user's other host request (one pending each): return it.
        async with deps.engine.connect() as conn:
            existing = await approvals.pending_host_access(conn, req.user_id)
        if existing is None:
            raise
        return view(existing)


async def list_approvals(req: ListApprovals, deps: AuthDeps) -> ApprovalList:
    """Pending ones oldest first (a queue); otherwise newest first (history)."""
    rules.check_list_page(req.limit, req.offset)
    async with deps.engine.connect() as conn:
        rows = await approvals.page(
            conn,
            kind=req.kind,
            status=req.status,
            user_id=req.user_id,
            limit=req.limit,
            offset=req.offset,
        )
    return ApprovalList(approvals=tuple(view(row) for row in rows))


async def approval_trail(req: GetApprovalTrail, deps: AuthDeps) -> ApprovalTrail:
    """One request with its audit trail (admins): every move, who, when, why."""
    async with deps.engine.connect() as conn:
        admin = await store.account_by_id(conn, req.admin_id)
        rules.require_admin(admin, "only an admin can read the audit trail")
        record = await approvals.approval(conn, req.approval_id)
        if record is None:
            raise ServiceError(codes.NOT_FOUND, "no such request")
        trail = await approvals.events(conn, req.approval_id)
    return ApprovalTrail(
        approval=view(record),
        events=tuple(
            ApprovalEvent(seq=seq, status=status, actor=actor, at=rules.iso(at), reason=reason)
            for seq, status, actor, at, reason in trail
        ),
    )


async def withdraw_approval(req: WithdrawApproval, deps: AuthDeps) -> Approval:
    """The requester takes back a request nobody has decided yet."""
    async with deps.engine.begin() as conn:
        current = await approvals.approval(conn, req.approval_id, lock=True)
        if current is None:
            raise ServiceError(codes.NOT_FOUND, "no such request of yours")
        states.require_requester(current.user_id, req.user_id)
        after = states.transition(current.status, "withdraw")
        await _move(conn, current, after, actor=req.user_id, now_ms=deps.now_ms())
        row = await approvals.approval(conn, req.approval_id)
    assert row is not None
    log.info("approval %s withdrawn by %s", req.approval_id, req.user_id)
    return view(row)


async def decide_approval(req: DecideApproval, deps: AuthDeps) -> Approval:
    """An admin approves or declines a pending request, with a reason. Host access is
    granted in the same transaction; credits are then granted by the wallet (and, if it
    cannot be reached, later: see the module's docstring)."""
    reason = rules.clean_note(req.reason, "reasons")
    action = states.decision(req.approve)
    async with deps.engine.begin() as conn:
        admin = await store.account_by_id(conn, req.admin_id)
        rules.require_admin(admin, "only an admin can decide requests")
        current = await approvals.approval(conn, req.approval_id, lock=True)
        if current is None:
            raise ServiceError(codes.NOT_FOUND, "no such request")
        after = states.transition(current.status, action)
        now = deps.now_ms()
        current = await _move(conn, current, after, actor=req.admin_id, now_ms=now, reason=reason)
        if after == "approved" and current.kind == "host_access":
            user = await store.account_by_id(conn, current.user_id, lock=True)
            if user is None:
                raise ServiceError(codes.NOT_FOUND, "the requester has no account any more")
            await store.update_account(
                conn, current.user_id, roles=rules.with_roles(user.roles, "host")
            )
            applied = states.transition(after, "apply")
            await _move(conn, current, applied, actor=req.admin_id, now_ms=now)
    log.info("approval %s %s by %s", req.approval_id, after, req.admin_id)
    # This one's grant first, then any the wallet owes from before.
    await apply_owed(deps, first=req.approval_id)
    async with deps.engine.connect() as conn:
        row = await approvals.approval(conn, req.approval_id)
    assert row is not None
    return view(row)


async def apply_owed(deps: AuthDeps, *, first: str | None = None) -> int:
    """Ask the wallet for every approved credit grant not yet applied (``first`` before
    the rest); record each it made. Returns how many were applied; one that fails stays
    owed for the next pass."""
    if deps.grant_credits is None:
        return 0
    async with deps.engine.connect() as conn:
        owed = await approvals.owed(conn, APPLY_BATCH)
    owed.sort(key=lambda r: r.approval_id != first)
    done = 0
    for record in owed:
        try:
            granted = await deps.grant_credits(
                GrantApproved(
                    approval_id=record.approval_id,
                    user_id=record.user_id,
                    amount=record.amount,
                    admin_id=record.decided_by or SYSTEM,
                    memo=record.reason or f"credit request approved: {record.note}"[:500],
                )
            )
        except ServiceError as exc:
            log.warning("approval %s not applied yet: %s", record.approval_id, exc)
            if exc.code == codes.UNAVAILABLE:
                break  # the wallet is down: the rest would wait as long
            continue
        except Exception:
            # The decision is committed whatever happens here (NATS closing, say).
            log.warning("approval %s not applied yet", record.approval_id, exc_info=True)
            break
        async with deps.engine.begin() as conn:
            current = await approvals.approval(conn, record.approval_id, lock=True)
            if current is not None and states.needs_applying(current.kind, current.status):
                applied = states.transition(current.status, "apply")
                await _move(
                    conn, current, applied, actor=SYSTEM, now_ms=deps.now_ms(), tx_id=granted.tx_id
                )
                done += 1
    return done


async def apply_loop(deps: AuthDeps, every: float = APPLY_EVERY_SECONDS) -> None:
    """Bootstrap's background task: apply what is owed, now and then, until cancelled."""
    while True:
        try:
            await apply_owed(deps)
        except Exception:
            log.exception("applying owed approvals failed; trying again later")
        await asyncio.sleep(every)


async def _move(
    conn: AsyncConnection,
    current: ApprovalRecord,
    after: ApprovalStatus,
    *,
    actor: str,
    now_ms: int,
    reason: str = "",
    tx_id: int | None = None,
) -> ApprovalRecord:
    """Move and audit; the record as it is now. The row is locked, so another replica
    moving it between read and write means a bug; refuse rather than move it twice."""
    if not await approvals.move(
        conn, current, after, actor=actor, now_ms=now_ms, reason=reason, tx_id=tx_id
    ):
        raise ServiceError(codes.CONFLICT, "this request changed meanwhile; look again")
    return msgspec.structs.replace(current, status=after)
