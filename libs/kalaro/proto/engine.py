"""Messages of the engine workers (subjects ``engine.<game>.*``).

A worker is stateless between messages: a hand's record (options, seats, engine
state, seed, action log) lives in Redis under a version; every action names the
version it was made against and is applied by compare-and-set. ``action`` is kept
raw here and decoded by the game's own action union, so this module needs no
knowledge of any game.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec


class Player(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str
    display_name: str
    is_bot: bool = False


class StartHand(msgspec.Struct, frozen=True, kw_only=True):
    """Lobby → engine, after every hold is placed: deal a new hand."""

    table_id: str
    hand_id: str
    options: dict[str, Any]
    bet: int
    players: tuple[Player, ...]  # index = seat
    server_seed: str  # hex; committed (sha256) before players added entropy
    entropy: tuple[str, ...]  # per seat, as given with Ready
    dealer: int | None = None
    # The table's flags, carried into the hand's record (history, exports).
    private: bool = False
    ranked: bool = False


class HandStarted(msgspec.Struct, frozen=True, kw_only=True):
    hand_id: str
    version: int


class Act(msgspec.Struct, frozen=True, kw_only=True):
    """A player's move. The worker finds the seat from ``user_id``, never trusts a seat."""

    table_id: str
    user_id: str
    version: int
    action: msgspec.Raw


class Acted(msgspec.Struct, frozen=True, kw_only=True):
    hand_id: str
    version: int  # the hand's version after the action


class GetView(msgspec.Struct, frozen=True, kw_only=True):
    """A full view for one socket: ``user_id`` seated → that seat's view, else public."""

    table_id: str
    user_id: str | None = None


class CancelHand(msgspec.Struct, frozen=True, kw_only=True):
    """Lobby → engine: the table was cancelled; void the hand (no credits move)."""

    table_id: str
    hand_id: str


class HandCancelled(msgspec.Struct, frozen=True, kw_only=True):
    hand_id: str
    voided: bool


class GetHandOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What became of a hand: asked by the wallet's reconciler about an open hold."""

    table_id: str
    hand_id: str


class HandOutcomeReport(msgspec.Struct, frozen=True, kw_only=True):
    """``playing``: live, leave its holds; ``finished``: settle with ``payments``
    (credits per seat, ``players`` in seat order); ``cancelled``: void; ``unknown``: the
    engine has no trace of the hand (never started, or its record has expired)."""

    hand_id: str
    status: Literal["playing", "finished", "cancelled", "unknown"]
    players: tuple[str, ...] = ()
    payments: tuple[int, ...] = ()


class GetHandRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A finished hand's record, for ``kalaro verify`` and hand history."""

    hand_id: str


class HandRecord(msgspec.Struct, frozen=True, kw_only=True):
    """Everything needed to re-derive and replay a finished hand (``kalaro verify``)."""

    game: str
    table_id: str
    hand_id: str
    options: dict[str, Any]
    bet: int
    players: tuple[Player, ...]
    dealer: int | None
    seed_commitment: str
    server_seed: str
    entropy: tuple[str, ...]
    actions: tuple[tuple[int, Any], ...]  # (seat, action as the engine's JSON)
    initial_hands: tuple[Any, ...]  # each seat's dealt cards/tiles, as the views showed
    result: Any
    payments: tuple[int, ...]  # credits per seat
    # Where it was played (a record is read without its table, which may be gone) and
    # how it ended. A voided hand was cancelled before its end: its ``actions`` are
    # those played, its ``result`` is null and nobody paid (``payments`` all 0).
    practice: bool = False  # no bet
    private: bool = False
    ranked: bool = False
    voided: bool = False


class ListMyHands(msgspec.Struct, frozen=True, kw_only=True):
    """A player's finished hands of this engine's game, newest first (hand history)."""

    user_id: str
    before_ms: int | None = None  # cursor: hands finished before this time
    limit: int = 20


class HandSummary(msgspec.Struct, frozen=True, kw_only=True):
    """One line of "My hands": what the record says, from the asking player's seat."""

    hand_id: str
    table_id: str
    game: str
    finished_ms: int
    seat: int
    players: tuple[str, ...]  # display names in seat order
    bet: int
    credits: int  # what the hand paid this player (negative: they paid)
    ending: str
    won: bool


class MyHands(msgspec.Struct, frozen=True, kw_only=True):
    hands: tuple[HandSummary, ...]
