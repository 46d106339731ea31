"""Messages of the one approval workflow (subjects ``auth.approvals.*``).

What admins approve — host access, credits — is one kind of record, an
:class:`Approval`, moved by one state machine (``services/auth/approval_states.py``):

    pending ─approve→ approved ─apply→ applied
    pending ─decline→ declined
    pending ─withdraw→ withdrawn        (by the requester)

``approved`` without ``applied`` is an approval whose effect (the wallet's grant) has
not happened yet; the auth service applies it again until it has. Times are ISO-8601 UTC.
"""

from __future__ import annotations

from typing import Literal

import msgspec

ApprovalKind = Literal["host_access", "credits"]
ApprovalStatus = Literal["pending", "approved", "applied", "declined", "withdrawn"]


class Approval(msgspec.Struct, frozen=True, kw_only=True):
    approval_id: str
    kind: ApprovalKind
    user_id: str  # who asked
    display_name: str  # theirs, when they have an account ("" otherwise)
    amount: int  # credits asked for; 0 for host access
    note: str
    status: ApprovalStatus
    created_at: str
    decided_by: str | None = None
    decided_at: str | None = None
    reason: str = ""
    applied_at: str | None = None
    tx_id: int | None = None  # the wallet's ledger transaction of an applied credit grant


class ApprovalList(msgspec.Struct, frozen=True, kw_only=True):
    approvals: tuple[Approval, ...]


class ApprovalEvent(msgspec.Struct, frozen=True, kw_only=True):
    """One move of a request, as audited: the state entered, by whom, when, why."""

    seq: int
    status: ApprovalStatus
    actor: str  # the requester, an admin, or "system" (a grant applied by the retry)
    at: str
    reason: str = ""


class GetApprovalTrail(msgspec.Struct, frozen=True, kw_only=True):
    approval_id: str
    admin_id: str  # admins only


class ApprovalTrail(msgspec.Struct, frozen=True, kw_only=True):
    approval: Approval
    events: tuple[ApprovalEvent, ...]  # oldest first


class RequestApproval(msgspec.Struct, frozen=True, kw_only=True):
    """A player asks: for host access (no amount), or for ``amount`` credits."""

    user_id: str
    kind: ApprovalKind
    amount: int = 0
    note: str = ""


class ListApprovals(msgspec.Struct, frozen=True, kw_only=True):
    """Pending ones oldest first (a queue); otherwise newest first (history)."""

    kind: ApprovalKind | None = None
    status: ApprovalStatus | None = "pending"
    user_id: str | None = None  # one requester's (a player's own list)
    limit: int = 50
    offset: int = 0


class DecideApproval(msgspec.Struct, frozen=True, kw_only=True):
    approval_id: str
    admin_id: str
    approve: bool
    reason: str = ""


class WithdrawApproval(msgspec.Struct, frozen=True, kw_only=True):
    approval_id: str
    user_id: str  # must be the requester
