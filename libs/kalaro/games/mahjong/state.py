"""The state of one hand of Filipino Mahjong: server-side only, never sent to clients.

Everything is a frozen msgspec Struct holding tuples, so a state serialises as it is
(JSON or msgpack) and a move builds a new state instead of changing the old one.

Every physical tile is in exactly one place: the wall, a concealed hand, a meld, a
flower row or a discard row. A discard that is claimed leaves its discarder's row.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from kalaro.games.mahjong.actions import Claim
from kalaro.games.mahjong.options import Options

SEATS = 4

Phase = Literal["draw", "discard", "calls", "over"]
MeldKind = Literal["chow", "pong", "kang"]
Ending = Literal["self_draw", "discard", "wall_out"]


class Meld(msgspec.Struct, frozen=True):
    """An exposed set (or a declared concealed kang), in sort order."""

    kind: MeldKind
    tiles: tuple[str, ...]
    #: The discard it was made with and who discarded it; None for a concealed kang.
    claimed: str | None = None
    from_seat: int | None = None
    #: A kang declared from four tiles in hand.
    concealed: bool = False


class Player(msgspec.Struct, frozen=True):
    """One seat's tiles."""

    #: Concealed tiles, kept in sort order.
    hand: tuple[str, ...]
    melds: tuple[Meld, ...] = ()
    #: Flowers set aside, in the order they came.
    flowers: tuple[str, ...] = ()
    #: This seat's discards still on the table, oldest first.
    discards: tuple[str, ...] = ()


class CallWindow(msgspec.Struct, frozen=True):
    """The seats that may claim the last discard, and what they answered so far."""

    tile: str
    discarder: int
    #: Per seat, the claims it may make (private to that seat); empty = not waited on.
    offers: tuple[tuple[Claim, ...], ...]
    #: Per seat: answered yet, and the claim made (None = passed, or not answered).
    answered: tuple[bool, ...]
    claims: tuple[Claim | None, ...]
    #: ``State.step`` when the window opened; tells one window's timer from the next.
    opened_at: int


class Outcome(msgspec.Struct, frozen=True):
    """How the hand ended."""

    ending: Ending
    winner: int | None = None
    discarder: int | None = None
    tile: str | None = None


class State(msgspec.Struct, frozen=True, kw_only=True):
    """One hand in progress (or over)."""

    options: Options
    dealer: int
    players: tuple[Player, ...]
    #: Undrawn tiles: draws come from the front (index 0), replacements from the back.
    wall: tuple[str, ...]
    #: Seat whose turn it is (during a call window: the discarder).
    turn: int
    phase: Phase
    #: The tile the turn's player drew this turn (wall or replacement), which is what
    #: allows a kang or a self-draw; None after claiming a pong or chow.
    drawn: str | None = None
    call: CallWindow | None = None
    outcome: Outcome | None = None
    #: Number of actions applied so far.
    step: int = 0


class Timer(msgspec.Struct, frozen=True):
    """A deadline the worker must run, ``seconds`` from when the window opened.

    Answers do not restart it. When it passes, the worker applies ``TimeOut()`` for the
    seats still awaited until the window is gone::

        while (now := pending_timer(state)) and now.opened_at == timer.opened_at:
            state, events = apply(state, now.seats[0], TimeOut())
    """

    kind: Literal["call"]
    #: Seats still awaited (private to the server: it tells who may claim).
    seats: tuple[int, ...]
    seconds: int
    #: Identifies the window (``State.step`` when it opened); a new window, a new timer.
    opened_at: int
