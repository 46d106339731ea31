"""Messages of the ranked service (issue 34): ratings, leaderboards, the quick-play
queue, fair play and the admins' actions on accounts.

The gateway forwards the REST routes of ``services/gateway/routes_ranked.py`` here; the
lobby asks :class:`GetStanding` before it lets an account sit (a frozen one may not).
Addresses and devices reach the service as :class:`SeenFrom` notes (fire and forget):
the gateway sends one on every password sign-in, and a queue join carries its address.
"""

from __future__ import annotations

from typing import Literal

import msgspec

#: ``week``: players rated in the last 7 days, by their current rating; ``all``: everyone.
Period = Literal["week", "all"]
QueueState = Literal["waiting", "seated", "idle"]
AdminActionName = Literal["warn", "bar-ranked", "unbar-ranked", "freeze", "unfreeze"]


# --- ratings ------------------------------------------------------------------------
class GetRatings(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str


class GameRating(msgspec.Struct, frozen=True, kw_only=True):
    """One game's rating of one player (a newcomer's when they have no rated hand)."""

    game: str
    rating: int  # the shown, conservative number (services.ranked.ratings.shown_rating)
    mu: float  # the skill we believe
    sigma: float  # how unsure we are of it (the uncertainty)
    tier: str
    hands: int  # rated hands
    last_change: int  # signed change of ``rating`` at the last rated hand


class Ratings(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str
    games: tuple[GameRating, ...]  # every ranked game, in the registry's order


# --- leaderboards -------------------------------------------------------------------
class GetLeaderboard(msgspec.Struct, frozen=True, kw_only=True):
    game: str
    period: Period = "all"
    caller_id: str = ""  # whose own place to count (empty: none)


class LeaderboardRow(msgspec.Struct, frozen=True, kw_only=True):
    rank: int  # from 1
    user_id: str
    display_name: str
    rating: int
    tier: str
    hands: int


class Leaderboard(msgspec.Struct, frozen=True, kw_only=True):
    game: str
    period: Period
    top: tuple[LeaderboardRow, ...]  # at most 100, best first
    me: LeaderboardRow | None = None  # the caller's row, wherever it is (None: unrated)


# --- the queue ----------------------------------------------------------------------
class JoinQueue(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str
    game: str
    bet: int
    address: str = ""  # the client's address as the gateway derived it


class LeaveQueue(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str


class GetQueueStatus(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str


class QueueStatus(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """``waiting`` (with ``waited_s``), ``seated`` (with ``table_id``) or ``idle``."""

    status: QueueState
    game: str | None = None
    bet: int | None = None
    waited_s: float | None = None
    table_id: str | None = None


class SeenFrom(msgspec.Struct, frozen=True, kw_only=True):
    """An account was used from this address and/or device (kept 24 h, for the
    matcher, which never seats two accounts sharing one, and for fair play)."""

    user_id: str
    address: str = ""
    device_id: str = ""


# --- standing, fair play, admin actions ---------------------------------------------
class GetStanding(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str


class Standing(msgspec.Struct, frozen=True, kw_only=True):
    """What admins decided about an account. ``frozen``: it may not sit or queue;
    ``barred``: it may not queue for ranked tables."""

    user_id: str
    frozen: bool = False
    barred: bool = False
    warnings: int = 0


class AdminAct(msgspec.Struct, frozen=True, kw_only=True):
    admin_id: str
    user_id: str
    action: AdminActionName
    reason: str


class AuditEntry(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str
    action: AdminActionName
    reason: str
    admin_id: str
    at_ms: int


class AdminActed(msgspec.Struct, frozen=True, kw_only=True):
    standing: Standing
    audit: AuditEntry


class GetFairPlay(msgspec.Struct, frozen=True, kw_only=True):
    admin_id: str
    game: str | None = None
    days: int = 30  # how far back the hands are read


class FairPlayFinding(msgspec.Struct, frozen=True, kw_only=True):
    """Where an admin should look (``services.ranked.fairplay``): accounts that sit
    together far more often than chance (``sit_together``), credit flowing mostly one
    way between two (``one_way_credit``), accounts seen from one address or device in
    the last 24 h (``shared_address``, ``shared_device``). ``hand_ids``: the evidence."""

    kind: str
    accounts: tuple[str, ...]
    score: float  # larger is more suspicious, comparable within one kind
    detail: str
    hand_ids: tuple[str, ...]


class FairPlayReport(msgspec.Struct, frozen=True, kw_only=True):
    findings: tuple[FairPlayFinding, ...]
    hands_read: int  # hands of the window the signals were computed from
    audit: tuple[AuditEntry, ...]  # the latest admin actions, newest first
    note: str = ""  # why the hands could not be read (then only shared access shows)
