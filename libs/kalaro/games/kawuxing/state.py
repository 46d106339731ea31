"""The state of one hand of Ka Wu Xing: server-side only, never sent to clients.

Everything is a frozen msgspec Struct holding tuples, so a state serialises as it is
(JSON or msgpack) and a move builds a new state instead of changing the old one.

Every one of the 84 tiles is in exactly one place: the wall, a concealed hand, a meld
or a discard row. A discard that is claimed leaves its discarder's row; when two
players win on one discard the tile goes to the first of them (the nearer after the
discarder) and the second winner's hand is scored with it too.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from kalaro.games.kawuxing.actions import Claim
from kalaro.games.kawuxing.options import Options

SEATS = 3

Phase = Literal["draw", "discard", "calls", "over"]
MeldKind = Literal["pong", "kong"]
#: Exposed: claimed on a discard. Concealed: four in hand. Extended: the fourth tile
#: added to one's own pong.
KongKind = Literal["exposed", "concealed", "extended"]
Ending = Literal["self_draw", "discard", "robbed_kong", "wall_out"]


class Meld(msgspec.Struct, frozen=True):
    """A pong or kong set down in front of its owner."""

    kind: MeldKind
    tiles: tuple[str, ...]
    #: The discard it was made with and who discarded it; None for a concealed kong.
    claimed: str | None = None
    from_seat: int | None = None
    #: How a kong was made; None for a pong.
    kong: KongKind | None = None
    #: Declared on the replacement tile of the owner's previous kong (kong on kong).
    on_kong: bool = False


class Player(msgspec.Struct, frozen=True):
    """One seat's tiles."""

    #: Concealed tiles, kept in sort order.
    hand: tuple[str, ...]
    melds: tuple[Meld, ...] = ()
    #: This seat's discards still on the table, oldest first.
    discards: tuple[str, ...] = ()
    #: Show Hand declared: the hand is public and locked.
    shown: bool = False


class CallWindow(msgspec.Struct, frozen=True):
    """The seats that may claim a tile, and what they answered so far.

    Either a discard, or (``robbing``) the tile ``discarder`` is adding to a pong to make
    an extended kong, which may only be won on (Rob a Kong).
    """

    tile: str
    discarder: int
    robbing: bool
    #: The tile was discarded right after a kong replacement (Fire on Kong).
    after_kong: bool
    #: Per seat, the claims it may make (private to that seat); empty = not waited on.
    offers: tuple[tuple[Claim, ...], ...]
    #: Per seat: answered yet, and the claim made (None = passed, or not answered).
    answered: tuple[bool, ...]
    claims: tuple[Claim | None, ...]
    #: ``State.step`` when the window opened; tells one window's timer from the next.
    opened_at: int


class Outcome(msgspec.Struct, frozen=True):
    """How the hand ended; the situation the winning tile came in, for the score items."""

    ending: Ending
    #: Winners, the first one (who deals next) first.
    winners: tuple[int, ...] = ()
    #: Who gave the winning tile (discard or robbed kong); None for a self-draw.
    discarder: int | None = None
    tile: str | None = None
    #: Self-draw on a kong replacement (Win on Kong), or a discard made right after one
    #: (Fire on Kong).
    after_kong: bool = False
    #: Self-draw of the last tile of the wall (Win on Last Tile).
    last_tile: bool = False


class State(msgspec.Struct, frozen=True, kw_only=True):
    """One hand in progress (or over)."""

    options: Options
    dealer: int
    players: tuple[Player, ...]
    #: Undrawn tiles: draws come from the front (index 0), kong replacements from the back.
    wall: tuple[str, ...]
    #: Seat whose turn it is (during a call window: the discarder or kong maker).
    turn: int
    phase: Phase
    #: The tile the turn's player drew this turn (wall or replacement), which is what
    #: allows a kong or a self-draw; None after claiming a pong.
    drawn: str | None = None
    #: ``drawn`` came from the back of the wall, as a kong's replacement.
    replacement: bool = False
    call: CallWindow | None = None
    outcome: Outcome | None = None
    #: Number of actions applied so far.
    step: int = 0
    #: ``step`` when the current turn began; identifies the turn timer.
    turn_started: int = 0
    #: Per seat: marked away (its timers run 0 s) until it acts or taps Back. Empty: nobody.
    away: tuple[bool, ...] = ()
    #: Per seat: time-outs in a row (``options.away_after_timeouts`` marks it away). Empty: 0.
    timeouts: tuple[int, ...] = ()


class Timer(msgspec.Struct, frozen=True):
    """A deadline the worker must run, ``seconds`` from when the window opened.

    ``call``: a call window (a discard, or a kong that may be robbed); answers do not
    restart it. ``turn`` (option ``turn_seconds``): the whole turn of ``seats[0]``, draw
    and discard; a draw or kong inside the turn does not restart it. ``seconds`` is 0
    when every seat awaited is away (a seat marked away or back gets a fresh deadline:
    the worker keys a window by ``kind``, ``opened_at`` and ``seconds``). When it
    passes, the worker applies ``TimeOut()`` for the seats still awaited until the
    window is gone::

        while (now := pending_timer(state)) and (now.kind, now.opened_at, now.seconds) == (
            timer.kind, timer.opened_at, timer.seconds
        ):
            state, events = apply(state, now.seats[0], TimeOut())
    """

    kind: Literal["call", "turn"]
    #: Seats still awaited (private to the server: it tells who may claim).
    seats: tuple[int, ...]
    seconds: int
    #: Identifies the window (``State.step`` when it opened); a new window, a new timer.
    opened_at: int
