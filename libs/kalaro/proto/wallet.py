"""Messages of the wallet service (subjects ``wallet.*`` and the RESULTS stream).

Amounts are whole credits. ``user_id`` names a player's account; the house account,
which issues every credit, is internal to the wallet. Hands are identified by
``hand_id`` (unique across tables); holds, settlements and voids are keyed by it,
which is what makes a repeated settlement change nothing.
"""

from __future__ import annotations

from typing import Literal

import msgspec


class Balance(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str
    balance: int
    held: int
    available: int


class WelcomeGrant(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str


class WelcomeGranted(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str
    granted: bool  # False when this user already had theirs
    amount: int
    balance: Balance


class GetBalance(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str


class GetHistory(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str
    limit: int = 50
    before: int | None = None  # cursor: entries with id below this


class HistoryEntry(msgspec.Struct, frozen=True, kw_only=True):
    entry_id: int
    tx_id: int
    kind: str  # welcome, grant, adjust, credit_request, settlement
    amount: int
    memo: str
    created_at: str


class History(msgspec.Struct, frozen=True, kw_only=True):
    entries: tuple[HistoryEntry, ...]
    next_before: int | None = None


class GrantApproved(msgspec.Struct, frozen=True, kw_only=True):
    """Internal (auth → wallet): credits an admin approved, granted house → player as one
    ledger transaction keyed ``credit_request:<approval_id>``, so it happens exactly
    once however often auth asks (a retry after the wallet was down)."""

    approval_id: str
    user_id: str
    amount: int
    admin_id: str  # who approved: the transaction's actor
    memo: str = ""


class Adjust(msgspec.Struct, frozen=True, kw_only=True):
    """An admin's grant (amount > 0) or correction (either sign), always with a reason.

    ``request_key`` (optional, chosen by the admin's client) makes a retry safe: the
    same admin sending the same key again gets the first answer back, and nothing moves
    twice. Without one, each request is its own adjustment.
    """

    admin_id: str
    user_id: str
    amount: int
    reason: str
    kind: Literal["grant", "adjust"] = "grant"
    request_key: str = ""


class Adjusted(msgspec.Struct, frozen=True, kw_only=True):
    tx_id: int
    balance: Balance
    repeated: bool = False  # True: this request key was already applied; nothing moved now


class HoldRequest(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str
    amount: int


class PlaceHolds(msgspec.Struct, frozen=True, kw_only=True):
    """Hold credits on every seated player for one hand: all or nothing."""

    table_id: str
    hand_id: str
    holds: tuple[HoldRequest, ...]
    game: str = ""  # whose engine decides the hand (the reconciler asks it)


class HoldsPlaced(msgspec.Struct, frozen=True, kw_only=True):
    hand_id: str
    holds: tuple[HoldRequest, ...]


class Payment(msgspec.Struct, frozen=True, kw_only=True):
    """Net credits for one player in one hand: negative pays, positive receives."""

    user_id: str
    amount: int


class SettleHand(msgspec.Struct, frozen=True, tag="settle", kw_only=True):
    """Apply a finished hand: capture holds, move credits, release the rest."""

    hand_id: str
    payments: tuple[Payment, ...]
    table_id: str = ""


class VoidHand(msgspec.Struct, frozen=True, tag="void", kw_only=True):
    """A cancelled hand: release its holds, move nothing."""

    hand_id: str
    table_id: str = ""


# What engines publish on the RESULTS stream (subject ``results.hand.<hand_id>``).
HandOutcome = SettleHand | VoidHand


class Settlement(msgspec.Struct, frozen=True, kw_only=True):
    """The answer to a settle or void; a repeat returns the same answer."""

    hand_id: str
    status: Literal["settled", "voided"]
    payments: tuple[Payment, ...]  # as applied (after capping at holds)
    tx_id: int | None = None


class Audit(msgspec.Struct, frozen=True, kw_only=True):
    """Ask the wallet to check its own books."""


class OpenHold(msgspec.Struct, frozen=True, kw_only=True):
    """Credits held for a hand that has no outcome yet."""

    hand_id: str
    table_id: str
    user_id: str
    amount: int
    placed_at: str  # ISO-8601 UTC: how long it has waited for its hand's outcome


class AuditReport(msgspec.Struct, frozen=True, kw_only=True):
    total: int  # sum over all accounts, house included: always 0
    accounts: int
    mismatched_accounts: tuple[str, ...]  # balance != sum of its entries
    negative_available: tuple[str, ...]
    open_holds: tuple[OpenHold, ...] = ()  # oldest first (at most 100)
    open_hold_count: int = 0  # all of them
