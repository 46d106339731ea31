"""The state of one hand of Filipino Mahjong: server-side only, never sent to clients.

Everything is a frozen msgspec Struct holding tuples, so a state serialises as it is
(JSON or msgpack) and a move builds a new state instead of changing the old one.

Every physical tile is in exactly one place: the wall, a concealed hand, a meld, a
flower row, a discard row, or (with jokers) the revealed joker indicator set aside. A
discard that is claimed leaves its discarder's row.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from kalaro.games.mahjong.actions import Claim
from kalaro.games.mahjong.options import Options
from kalaro.games.tilegame.state import Phase, Timer

#: ``Phase`` and ``Timer`` are the tile games' own (:mod:`kalaro.games.tilegame.state`).
__all__ = [
    "SEATS",
    "CallWindow",
    "Ending",
    "Meld",
    "MeldKind",
    "Outcome",
    "Phase",
    "Player",
    "State",
    "Timer",
]

SEATS = 4

MeldKind = Literal["chow", "pong", "kang"]
Ending = Literal["self_draw", "discard", "wall_out"]


class Meld(msgspec.Struct, frozen=True, kw_only=True):
    """An exposed set (or a declared concealed kang), in sort order.

    In a view, a secret concealed kang (option ``secret_kangs``) is shown to the other
    seats with no ``tiles`` — face down — until the hand ends.
    """

    kind: MeldKind
    tiles: tuple[str, ...]
    #: The discard it was made with and who discarded it; None for a concealed kang.
    claimed: str | None = None
    from_seat: int | None = None
    #: A kang declared from four tiles in hand.
    concealed: bool = False


class Player(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's tiles."""

    #: Concealed tiles, kept in sort order.
    hand: tuple[str, ...]
    melds: tuple[Meld, ...] = ()
    #: Flowers set aside, in the order they came.
    flowers: tuple[str, ...] = ()
    #: This seat's discards still on the table, oldest first.
    discards: tuple[str, ...] = ()


class CallWindow(msgspec.Struct, frozen=True, kw_only=True):
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
    #: The tile is being added to ``discarder``'s pong (an added kang): only a win may
    #: take it (robbing the kang); if nobody does, the kang stands.
    robbing: bool = False


class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    """How the hand ended."""

    ending: Ending
    winner: int | None = None
    #: Who pays as the discarder: the discard's owner, or the robbed kang's declarer.
    discarder: int | None = None
    #: The winning tile; None for a Bisaklat triple-joker win (no tile completes it).
    tile: str | None = None
    #: The win category (one of ``options.CATEGORIES``), under a points table.
    category: str | None = None
    #: Special hands (ambisyon) the winning hand makes, when the option is on.
    specials: tuple[str, ...] = ()
    #: The win robbed a kang (paid as a win on a discard by the kang's declarer).
    robbed_kang: bool = False


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
    #: With jokers: the revealed tile, set aside; the other three of its kind are wild.
    indicator: str | None = None
    #: Whether anyone has discarded yet this hand (Bisaklat ends with the first discard).
    discarded: bool = False
    #: Per seat: passed a winning tile and has not drawn since (``passed_win_blocks``).
    passed_win: tuple[bool, ...] = (False,) * SEATS
    #: ``step`` when the current turn began; identifies the turn timer.
    turn_started: int = 0
    #: Per seat: marked away (its timers run 0 s) until it acts or taps Back. Empty: nobody.
    away: tuple[bool, ...] = ()
    #: Per seat: time-outs in a row (``options.away_after_timeouts`` marks it away). Empty: 0.
    timeouts: tuple[int, ...] = ()

    @property
    def joker(self) -> str | None:
        """The kind that is wild this hand, or None without jokers."""
        return self.indicator if self.options.jokers else None
