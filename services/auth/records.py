"""The auth service's rows as plain values: what :mod:`services.auth.store` reads out of
SQL and what the pure rules in :mod:`services.auth.rules` decide on.

Times are epoch milliseconds, as stored. Token records hold the sha256 of a token,
never the token itself.
"""

from __future__ import annotations

import msgspec

from kalaro.proto.approvals import ApprovalKind, ApprovalStatus
from kalaro.proto.auth import Role


class Account(msgspec.Struct, frozen=True, kw_only=True):
    """One row of ``auth_users``, roles already parsed into canonical order."""

    user_id: str
    email: str
    display_name: str
    # None for accounts that only ever signed in with Google.
    password_hash: str | None
    google_sub: str | None
    roles: tuple[Role, ...]
    created_at: int
    email_verified: bool


class EmailToken(msgspec.Struct, frozen=True, kw_only=True):
    """A single-use verification link."""

    token_hash: str
    user_id: str
    expires_at: int
    used_at: int | None


class RefreshToken(msgspec.Struct, frozen=True, kw_only=True):
    """One refresh token of a session family."""

    token_hash: str
    family_id: str
    user_id: str
    expires_at: int
    used_at: int | None
    revoked_at: int | None


class ApprovalRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A request an admin decides (``auth_approvals``), the requester's name joined in."""

    approval_id: str
    kind: ApprovalKind
    user_id: str
    display_name: str
    amount: int
    note: str
    status: ApprovalStatus
    created_at: int
    decided_by: str | None = None
    decided_at: int | None = None
    reason: str = ""
    applied_at: int | None = None
    tx_id: int | None = None
