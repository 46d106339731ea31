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


class HandsList(msgspec.Struct, frozen=True, kw_only=True):
    hands: tuple[HandSummary, ...]


class GetStoredHand(msgspec.Struct, frozen=True, kw_only=True):
    hand_id: str


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
