"""The state of one Tongits hand, and its result. Immutable msgspec Structs.

The state is server-side only (it holds every concealed card); anyone outside the
server gets a :mod:`view <kalaro.games.tongits.views>` of it. Cards are in notation
(``"10H"``) so a stored hand reads like the table.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from kalaro.games import clock
from kalaro.games.tongits.melds import MeldKind
from kalaro.games.tongits.options import Options

#: ``start``: the player to act draws, takes the discard or calls Draw.
#: ``play``: after drawing: meld, lay off, then discard.
#: ``answers``: a Draw call waits for Fight/Fold answers.
#: ``over``: the hand has ended; see ``State.result``.
Phase = Literal["start", "play", "answers", "over"]
Ending = Literal["tongits", "stock_out", "draw"]
#: a seat's part in a Draw call
Answer = Literal["caller", "pending", "fight", "fold", "burned"]

Hand = tuple[str, ...]


class TableMeld(msgspec.Struct, frozen=True, kw_only=True):
    """An exposed meld. ``placed_by[i]`` is the seat that put ``cards[i]`` there: the
    owner, or whoever laid it off (sapaw); table B's ace bonus needs to know."""

    id: int
    owner: int
    kind: MeldKind
    cards: tuple[str, ...]
    placed_by: tuple[int, ...]
    face_down: bool = False  # a secret four-card set
    from_discard: str | None = None  # the discard taken to form it, if any


class DrawCall(msgspec.Struct, frozen=True, kw_only=True):
    """A Draw call in progress or settled: ``answers[seat]`` for each seat."""

    caller: int
    answers: tuple[Answer, ...]
    timed_out: tuple[bool, ...] = (False, False, False)


class Result(msgspec.Struct, frozen=True, kw_only=True):
    """How a hand ended and what moves.

    ``payments[seat]`` is net units of the bet (positive: receives), summing to zero.
    ``winners`` is empty when nobody could win (stock out with no one opened); several
    winners share a tied stock-out under ``stock_out_tie="split"``. Every hand and meld
    is revealed (secret sets included).
    """

    ending: Ending
    winners: tuple[int, ...]
    payments: tuple[int, ...]
    deadwood: tuple[int, ...]
    burned: tuple[bool, ...]
    hands: tuple[Hand, ...]
    melds: tuple[TableMeld, ...]
    next_dealer: int
    draw_call: DrawCall | None = None
    last_drawer: int | None = None
    #: each loser's payment before the max-loss cap (0 for winners)
    owed: tuple[int, ...] = (0, 0, 0)


class Timer(msgspec.Struct, frozen=True, kw_only=True):
    """A window the worker must time: after ``seconds`` it applies ``TimeOut()`` for each
    seat in ``seats`` that has still not acted.

    ``kind`` is ``"turn"`` (the clock of ``State.turn``'s whole turn) or
    ``"fight_or_fold"`` (the answers to a Draw call). ``opened_at`` is the
    ``State.turn_no`` the window belongs to: moves inside a window do not restart it, and
    a new turn is a new window. ``seconds`` is 0 when every seat it waits on is away.
    """

    kind: Literal["fight_or_fold", "turn"]
    seats: tuple[int, ...]
    seconds: int
    opened_at: int = 0


class State(msgspec.Struct, frozen=True, kw_only=True):
    """One Tongits hand. Seats are 0, 1, 2; turn order is seat -> (seat + 1) % 3."""

    options: Options
    dealer: int
    turn: int
    phase: Phase
    hands: tuple[Hand, ...]
    stock: tuple[str, ...]  # top card first
    discards: tuple[str, ...]  # top card last
    melds: tuple[TableMeld, ...] = ()
    #: sapaw lock per seat: someone laid off on this seat's melds since its last turn,
    #: or it laid off on its own meld during its last turn (only used when the option
    #: ``sapaw_blocks_call`` is on, but always tracked so views can explain it)
    sapawed: tuple[bool, ...] = (False, False, False)
    #: the player whose turn it is has laid off on their own meld this turn
    own_sapaw: bool = False
    last_drawer: int | None = None
    draw_call: DrawCall | None = None
    result: Result | None = None
    # new fields go last, with defaults, so stored hands still decode
    #: counts the turns started in this hand (the dealer's first turn is 0); it names
    #: the turn's timer window
    turn_no: int = 0
    #: per seat: marked away after ``away_after_timeouts`` time-outs in a row (empty: no
    #: one; read it with :meth:`is_away`)
    away: tuple[bool, ...] = ()
    #: per seat: consecutive time-outs (empty: all 0; read it with :meth:`timeouts_of`)
    timeouts: tuple[int, ...] = ()

    def opened(self, seat: int) -> bool:
        """Whether ``seat`` has at least one exposed meld (face down counts)."""
        return any(meld.owner == seat for meld in self.melds)

    def is_away(self, seat: int) -> bool:
        """Whether ``seat`` is marked away (too many time-outs in a row)."""
        return clock.is_away(self.away, seat)

    def timeouts_of(self, seat: int) -> int:
        """How many time-outs in a row ``seat`` has had."""
        return clock.timeouts_of(self.timeouts, seat)
