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
from kalaro.games.tilegame.state import Phase, Timer

#: ``Phase`` and ``Timer`` are the tile games' own (:mod:`kalaro.games.tilegame.state`).
__all__ = [
    "SEATS",
    "CallWindow",
    "Ending",
    "KongKind",
    "Meld",
    "MeldKind",
    "Outcome",
    "Phase",
    "Player",
    "State",
    "Timer",
]

SEATS = 3

MeldKind = Literal["pong", "kong"]
#: Exposed: claimed on a discard. Concealed: four in hand. Extended: the fourth tile
#: added to one's own pong.
KongKind = Literal["exposed", "concealed", "extended"]
Ending = Literal["self_draw", "discard", "robbed_kong", "wall_out"]


class Meld(msgspec.Struct, frozen=True, kw_only=True):
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


class Player(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's tiles."""

    #: Concealed tiles, kept in sort order.
    hand: tuple[str, ...]
    melds: tuple[Meld, ...] = ()
    #: This seat's discards still on the table, oldest first.
    discards: tuple[str, ...] = ()
    #: Show Hand declared: the hand is public and locked.
    shown: bool = False


class CallWindow(msgspec.Struct, frozen=True, kw_only=True):
    """The seats that may claim a tile, and what they answered so far.

    Either a discard, or (``robbing``) the tile ``discarder`` is adding to a pong to make
    an extended kong, which may only be won on (Rob a Kong).
    """

    tile: str
    discarder: int
    robbing: bool
    #: The tile was discarded right after a visible kong's replacement (Fire on Kong).
    after_kong: bool
    #: Per seat, the claims it may make (private to that seat); empty = not waited on.
    offers: tuple[tuple[Claim, ...], ...]
    #: Per seat: answered yet, and the claim made (None = passed, or not answered).
    answered: tuple[bool, ...]
    claims: tuple[Claim | None, ...]
    #: ``State.step`` when the window opened; tells one window's timer from the next.
    opened_at: int


class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    """How the hand ended; the situation the winning tile came in, for the score items."""

    ending: Ending
    #: Winners, the first one (who deals next) first.
    winners: tuple[int, ...] = ()
    #: Who gave the winning tile (discard or robbed kong); None for a self-draw.
    discarder: int | None = None
    tile: str | None = None
    #: Self-draw on a visible kong's replacement (Win on Kong), or a discard made right
    #: after one (Fire on Kong); never after a concealed kong.
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
    #: ``replacement`` is for a visible kong (claimed from a discard, or extended onto
    #: an exposed pong): only then does a win on it, or on the discard that follows, earn
    #: Win on Kong / Fire on Kong (RULES.md; a concealed kong earns neither).
    visible_kong: bool = False

    @property
    def after_visible_kong(self) -> bool:
        """The turn's tile is a visible kong's replacement (Win / Fire on Kong)."""
        return self.replacement and self.visible_kong
