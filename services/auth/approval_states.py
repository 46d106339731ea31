"""The approval workflow's state machine, pure: what may happen to a request in which
state, and the clear refusal for everything else.

    pending ─approve→ approved ─apply→ applied
    pending ─decline→ declined
    pending ─withdraw→ withdrawn   (only the requester)

Why ``approved`` and ``applied`` are two states: approving credits is the admin's
decision, granting them is the wallet's ledger transaction, and the wallet may be down
when the admin decides. The decision is kept (``approved``) and applied later, exactly
once (the wallet keys the grant by the approval id); host access is applied in the
deciding transaction, so it passes through ``approved`` at once. Every other move is
refused: a second decision (``already_decided``), a withdrawal after the decision, an
apply before approval or a second apply (``illegal_transition``).

Imports nothing heavy (no SQL, no NATS): the unit tests walk every pair of state and
action.
"""

from __future__ import annotations

from typing import Literal

from kalaro.errors import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.approvals import ApprovalKind, ApprovalStatus

Action = Literal["approve", "decline", "withdraw", "apply"]

STATUSES: tuple[ApprovalStatus, ...] = ("pending", "approved", "applied", "declined", "withdrawn")
ACTIONS: tuple[Action, ...] = ("approve", "decline", "withdraw", "apply")

#: Every legal move; anything not here is refused.
TRANSITIONS: dict[tuple[ApprovalStatus, Action], ApprovalStatus] = {
    ("pending", "approve"): "approved",
    ("pending", "decline"): "declined",
    ("pending", "withdraw"): "withdrawn",
    ("approved", "apply"): "applied",
}

#: States nothing leaves.
FINAL: frozenset[ApprovalStatus] = frozenset({"applied", "declined", "withdrawn"})

MAX_CREDITS = 1_000_000  # one request; an admin grants more with /api/admin/grants


def transition(status: ApprovalStatus, action: Action) -> ApprovalStatus:
    """The state ``action`` moves a request in ``status`` to, or a refusal that says why."""
    after = TRANSITIONS.get((status, action))
    if after is not None:
        return after
    if action in ("approve", "decline") and status != "pending":
        raise ServiceError(codes.ALREADY_DECIDED, f"this request was already {status}")
    if action == "withdraw":
        raise ServiceError(
            codes.ILLEGAL_TRANSITION,
            f"only a pending request can be withdrawn; this one is {status}",
        )
    raise ServiceError(
        codes.ILLEGAL_TRANSITION, f"only an approved request is applied; this one is {status}"
    )


def decision(approve: bool) -> Action:
    return "approve" if approve else "decline"


def check_request(kind: ApprovalKind, amount: int) -> None:
    """What a request must carry: credits an amount in range, host access none."""
    if kind == "credits" and not 0 < amount <= MAX_CREDITS:
        raise ServiceError(
            codes.BAD_REQUEST, f"amount must be between 1 and {MAX_CREDITS}, got {amount}"
        )
    if kind == "host_access" and amount != 0:
        raise ServiceError(codes.BAD_REQUEST, "a host access request carries no amount")


def require_requester(requester: str, user_id: str) -> None:
    """Only who asked may withdraw (as not found: others learn nothing of it)."""
    if requester != user_id:
        raise ServiceError(codes.NOT_FOUND, "no such request of yours")


def needs_applying(kind: ApprovalKind, status: ApprovalStatus) -> bool:
    """An approval whose effect is still owed: the retry loop's work."""
    return kind == "credits" and status == "approved"
