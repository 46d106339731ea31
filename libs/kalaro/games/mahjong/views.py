"""What one seat (or the audience) may see of a hand.

A seat sees its own concealed tiles, the tile it just drew and its own legal actions —
its private claim options included. Everyone sees every exposed meld (declared
concealed kangs too: ``kalaro`` shows them), flowers, discards and the wall count.
Nobody sees another seat's concealed tiles or claim options, nor which seats a call
window waits on, until the hand is over; then every hand is revealed with the result.
"""

from __future__ import annotations

import msgspec

from kalaro.games.mahjong.actions import AnyAction
from kalaro.games.mahjong.engine import legal_actions
from kalaro.games.mahjong.options import Options
from kalaro.games.mahjong.scoring import Result, result
from kalaro.games.mahjong.state import SEATS, Meld, Phase, State


class PlayerView(msgspec.Struct, frozen=True):
    """One seat as the viewer sees it."""

    seat: int
    hand_size: int
    #: Concealed tiles: the viewer's own, or everyone's once the hand is over.
    hand: tuple[str, ...] | None
    melds: tuple[Meld, ...]
    flowers: tuple[str, ...]
    discards: tuple[str, ...]


class CallView(msgspec.Struct, frozen=True):
    """A discard that may still be claimed (who may claim it is private)."""

    discarder: int
    tile: str
    seconds: int


class View(msgspec.Struct, frozen=True, kw_only=True):
    """The hand from ``seat``'s chair (``None``: the audience)."""

    seat: int | None
    options: Options
    dealer: int
    turn: int
    phase: Phase
    wall_count: int
    players: tuple[PlayerView, ...]
    #: The tile the viewer just drew, when it is the viewer's turn.
    drawn: str | None = None
    call: CallView | None = None
    #: The viewer's legal actions, including its private claim options.
    legal: tuple[AnyAction, ...] = ()
    result: Result | None = None


def view(state: State, seat: int | None) -> View:
    """What ``seat`` may see now; ``None`` for a spectator."""
    if seat is not None and not 0 <= seat < SEATS:
        raise ValueError(f"seat must be 0-{SEATS - 1} or None")
    over = state.phase == "over"
    players = tuple(
        PlayerView(
            seat=s,
            hand_size=len(p.hand),
            hand=p.hand if over or s == seat else None,
            melds=p.melds,
            flowers=p.flowers,
            discards=p.discards,
        )
        for s, p in enumerate(state.players)
    )
    call = state.call
    return View(
        seat=seat,
        options=state.options,
        dealer=state.dealer,
        turn=state.turn,
        phase=state.phase,
        wall_count=len(state.wall),
        players=players,
        drawn=state.drawn if seat is not None and seat == state.turn else None,
        call=None
        if call is None
        else CallView(discarder=call.discarder, tile=call.tile, seconds=state.options.call_seconds),
        legal=tuple(legal_actions(state, seat)) if seat is not None else (),
        result=result(state),
    )
