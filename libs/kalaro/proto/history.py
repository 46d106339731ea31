"""Messages of the history service: every finished hand's record, kept in SQL.

The engine publishes a :class:`StoredHand` on the RECORDS stream (``Nats-Msg-Id`` =
the hand id) when a hand finishes; the history service stores it once, keyed by the
hand id, and answers reads (a player's hands, one record) that outlive Redis.
"""

from __future__ import annotations

import msgspec

from kalaro.proto.engine import HandRecord, HandSummary


class StoredHand(msgspec.Struct, frozen=True, kw_only=True):
    """A finished hand as history keeps it: the record, when it finished, its flags."""

    record: HandRecord
    finished_ms: int
    practice: bool = False  # no bet: a practice hand


class ListHands(msgspec.Struct, frozen=True, kw_only=True):
    """A player's hands, newest first. The cursor is the previous page's last
    (finished_ms, hand_id): hands strictly older than it in that order."""

    user_id: str
    game: str | None = None
    before_ms: int | None = None
    before_id: str | None = None
    limit: int = 20
    since_ms: int | None = None  # only hands finished at or after this time


class HandsList(msgspec.Struct, frozen=True, kw_only=True):
    hands: tuple[HandSummary, ...]


class GetStoredHand(msgspec.Struct, frozen=True, kw_only=True):
    hand_id: str


class ExportHands(msgspec.Struct, frozen=True, kw_only=True):
    """Whole records, oldest first, for an export: one player's (``user_id``) or every
    hand finished in [``since_ms``, ``until_ms``). The cursor is the previous page's
    last (finished_ms, hand_id): hands strictly after it in that order."""

    user_id: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None
    after_ms: int | None = None
    after_id: str | None = None
    limit: int = 50


class RecordsPage(msgspec.Struct, frozen=True, kw_only=True):
    """A page of an export; ``last_ms``/``last_id``: the cursor of the next (null: none)."""

    records: tuple[HandRecord, ...]
    last_ms: int | None = None
    last_id: str | None = None


class GetPlayerStats(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str


class GameStats(msgspec.Struct, frozen=True, kw_only=True):
    """One game's figures: hands played and won, credits won minus lost (``net``), and
    the most one hand paid (0: none paid anything)."""

    game: str
    hands: int
    won: int
    net: int
    biggest_win: int


class PlayerStats(msgspec.Struct, frozen=True, kw_only=True):
    """A player's stats: bet hands per game, and practice hands (no bet) apart."""

    user_id: str
    games: tuple[GameStats, ...] = ()
    practice: tuple[GameStats, ...] = ()
