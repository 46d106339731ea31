"""Messages of the lobby service (subjects ``lobby.*``): tables, seats, readiness, chat.

A table record lives in Redis, versioned and written by compare-and-set; any lobby
replica can serve any table. ``TableInfo`` is the public projection everyone may see;
the invite code, the next hand's secret server seed and players' entropy never
appear in it. Requests carry the caller's identity as the gateway verified it.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

Game = Literal["tongits", "mahjong", "kawuxing"]
#: What a table that does not exist answers (``not_found``), and so, word for word, a
#: private one to someone without its code: nothing in it tells the two apart.
NO_SUCH_TABLE = "no such table"
TableStatus = Literal["waiting", "dealing", "playing", "ended", "cancelled"]
#: Whether a seat's player has a socket open on the table: ``connected`` (at least one,
#: on any gateway), ``reconnecting`` (none now, but one within the grace period) or
#: ``offline``.
Presence = Literal["connected", "reconnecting", "offline"]


class SeatInfo(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str
    display_name: str
    ready: bool = False
    leave_after_hand: bool = False
    is_bot: bool = False
    presence: Presence = "offline"  # from the gateways' sockets (bots connect like anyone)


class RemovedPlayer(msgspec.Struct, frozen=True, kw_only=True):
    """Someone the host removed from a table: they may not sit there again until the
    host allows them back (:class:`AllowBack`)."""

    user_id: str
    display_name: str


class TableInfo(msgspec.Struct, frozen=True, kw_only=True):
    table_id: str
    game: Game
    ruleset: str
    options: dict[str, Any]  # the engine's full options for this table (house rules)
    bet: int
    max_loss: int  # credits a seat must have available: the ruleset's max loss x bet
    private: bool
    chat_enabled: bool
    host_id: str
    host_name: str
    seats: tuple[SeatInfo | None, ...]
    status: TableStatus
    hand_no: int  # hands dealt so far
    created_at: str
    version: int = 0
    hand_id: str | None = None  # the hand in progress, if any
    dealer: int | None = None  # dealer of the next (or current) hand; None: chosen by seed
    seed_commitment: str = ""  # sha256 hex of the next hand's server seed
    practice: bool = False  # zero-bet table with bots (issue: bots)
    # Players the host removed (bots never listed): public like the seats, so a removed
    # player's screen can tell them, and the host sees whom to allow back.
    removed: tuple[RemovedPlayer, ...] = ()
    # --- ranked play (issue 34) ---
    # A ranked table: opened by the ranked service with the queue's players seated; no
    # host, no bots, never private, deals by itself (see services/lobby/ranked.py).
    ranked: bool = False
    # Epoch seconds by which every seat must be ready, or the ranked table closes.
    ready_by: float | None = None
    # A host's public table may ask this rating (the ranked service's conservative
    # number for the table's game) of whoever sits; None: anyone may sit.
    min_rating: float | None = None


class Caller(msgspec.Struct, frozen=True, kw_only=True):
    """Who asks, as the gateway verified from the access token."""

    user_id: str
    display_name: str
    roles: tuple[str, ...] = ("player",)
    # From the token's ``ev`` claim: an unverified account sits at no table with a bet.
    email_verified: bool = True


class CreateTable(msgspec.Struct, frozen=True, kw_only=True):
    caller: Caller
    game: Game
    bet: int
    ruleset: str = "kalaro"
    options: dict[str, Any] = {}
    private: bool = False
    chat_enabled: bool = True
    min_rating: float | None = None  # public tables only (issue 34)


class TableCreated(msgspec.Struct, frozen=True, kw_only=True):
    table: TableInfo
    invite_code: str | None = None  # only for private tables (the host asks again: GetInviteCode)


class ListTables(msgspec.Struct, frozen=True, kw_only=True):
    game: Game | None = None
    open_seats_only: bool = False
    limit: int = 50
    # Who asks: a private table is listed only to its host, its seated players and
    # admins (to no one when None).
    caller: Caller | None = None


class TableList(msgspec.Struct, frozen=True, kw_only=True):
    tables: tuple[TableInfo, ...]


class GetTable(msgspec.Struct, frozen=True, kw_only=True):
    """One table. With a ``caller`` (a socket's subscribe gives one), a private table is
    answered only to its host, seated players, admins, a bot on its way to a kept seat,
    or with its ``invite_code``; anyone else gets ``not_found``, as if it did not exist.
    Without a caller (services asking for bookkeeping) it is always answered."""

    table_id: str
    caller: Caller | None = None
    invite_code: str | None = None


class Sit(msgspec.Struct, frozen=True, kw_only=True):
    caller: Caller
    table_id: str
    seat: int | None = None  # None: the first free seat
    invite_code: str | None = None


class Leave(msgspec.Struct, frozen=True, kw_only=True):
    """Leave now (between hands only)."""

    caller: Caller
    table_id: str


class LeaveAfterHand(msgspec.Struct, frozen=True, kw_only=True):
    caller: Caller
    table_id: str
    leave: bool = True


class SetReady(msgspec.Struct, frozen=True, kw_only=True):
    caller: Caller
    table_id: str
    ready: bool = True
    entropy: str = ""  # the player's own contribution to the next shuffle (<= 64 chars)


class Deal(msgspec.Struct, frozen=True, kw_only=True):
    caller: Caller
    table_id: str


class RemovePlayer(msgspec.Struct, frozen=True, kw_only=True):
    caller: Caller
    table_id: str
    seat: int


class AllowBack(msgspec.Struct, frozen=True, kw_only=True):
    """The host (or an admin) lets a removed player sit at the table again."""

    caller: Caller
    table_id: str
    user_id: str


class GetInviteCode(msgspec.Struct, frozen=True, kw_only=True):
    """The host (or an admin) asks for a private table's invite code, as often as they
    like while the table lives (to share its link again)."""

    caller: Caller
    table_id: str


class InviteCode(msgspec.Struct, frozen=True, kw_only=True):
    table_id: str
    invite_code: str


class EndTable(msgspec.Struct, frozen=True, kw_only=True):
    """Close the table between hands."""

    caller: Caller
    table_id: str


class CancelTable(msgspec.Struct, frozen=True, kw_only=True):
    """Close the table now; a hand in progress is voided (holds released)."""

    caller: Caller
    table_id: str


class SetChat(msgspec.Struct, frozen=True, kw_only=True):
    caller: Caller
    table_id: str
    enabled: bool


class SendChat(msgspec.Struct, frozen=True, kw_only=True):
    caller: Caller
    table_id: str
    text: str


class ChatSent(msgspec.Struct, frozen=True, kw_only=True):
    text: str  # as posted, offensive words masked


class HandFinished(msgspec.Struct, frozen=True, kw_only=True):
    """Engine → lobby (EVENTS stream, subject ``events.hand.finished``): back to waiting."""

    table_id: str
    hand_id: str
    next_dealer: int | None
    voided: bool = False
    # Seats the engine marked away (they timed out twice in a row): they sit out the
    # next deal, vacated like seats that asked to leave after the hand.
    away_seats: tuple[int, ...] = ()


class CreatePractice(msgspec.Struct, frozen=True, kw_only=True):
    """A practice table in one step: zero bet, the caller (any player) at seat 0 as its
    host, every other seat a bot. Not listed publicly; deals itself when all are ready.
    """

    caller: Caller
    game: Game
    ruleset: str = "kalaro"
    options: dict[str, Any] = {}


class AddBot(msgspec.Struct, frozen=True, kw_only=True):
    """The host (or an admin) seats a bot at a zero-bet table; ``seat`` None: the first
    free seat. Bots never play for credits, so a table with a bet refuses."""

    caller: Caller
    table_id: str
    seat: int | None = None


class ReportPresence(msgspec.Struct, frozen=True, kw_only=True):
    """Gateway → lobby (``lobby.presence``): the seated players of a table that have a
    socket on it at this gateway now — all of them, so an empty ``user_ids`` says none.

    ``gateway_id`` is per gateway process: several gateways' sockets for one player are
    counted apart. Gateways send it when the set changes and again every
    ``presence_refresh_seconds``; the lobby forgets a gateway not heard from for three
    such periods (it crashed), so a seat is never left ``connected`` for ever.
    """

    gateway_id: str
    table_id: str
    user_ids: tuple[str, ...] = ()


class PresenceNoted(msgspec.Struct, frozen=True, kw_only=True):
    table_id: str
    changed: bool  # some seat's presence changed (and the table was published)


# --- ranked play (issue 34) ---------------------------------------------------------


class OpenRankedTable(msgspec.Struct, frozen=True, kw_only=True):
    """Ranked service → lobby: open a ranked table with these players seated, in seat
    order. Idempotent by ``match_id``: a retry answers the same table."""

    game: str
    bet: int
    players: tuple[str, ...]  # user ids in seat order
    match_id: str


class RankedTableOpened(msgspec.Struct, frozen=True, kw_only=True):
    table_id: str


class SetMinRating(msgspec.Struct, frozen=True, kw_only=True):
    """The host (or an admin) sets or clears (None) a public table's minimum rating."""

    caller: Caller
    table_id: str
    min_rating: float | None = None
