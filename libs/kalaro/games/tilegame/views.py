"""The parts of a tile game's view that every tile game shows the same way.

The table around the hands: whose turn, the wall count, the tile on the table that may
still be claimed (not who may claim it), who is away, and the running clock. Each game
builds its own ``View`` with these fields and adds its hands, melds and extras.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kalaro.games.clock import is_away, visible
from kalaro.games.contract import Board, SeatBoard
from kalaro.games.tilegame.table import TileState

#: Who else a call window waits on is private (who may claim a discard).
_PRIVATE_WINDOWS = frozenset({"call"})


def check_viewer(seat: int | None, seats: int) -> None:
    """A seat at the table, or None for the audience."""
    if seat is not None and not 0 <= seat < seats:
        raise ValueError(f"seat must be 0-{seats - 1} or None")


def table_fields(
    state: TileState,
    seat: int | None,
    seats: int,
    *,
    call_view: Callable[..., Any],
    timer: Any,
) -> dict[str, Any]:
    """The ``View`` fields every tile game fills alike, by name.

    ``call_view`` is the game's ``CallView``; ``timer`` is ``pending_timer(state)``.
    """
    call = state.call
    return {
        "seat": seat,
        "options": state.options,
        "dealer": state.dealer,
        "turn": state.turn,
        "to_act": () if state.phase in ("calls", "over") else (state.turn,),
        "phase": state.phase,
        "wall_count": len(state.wall),
        "drawn": state.drawn if seat is not None and seat == state.turn else None,
        "call": None
        if call is None
        else call_view(
            discarder=call.discarder,
            tile=call.tile,
            seconds=state.options.call_seconds,
            robbing=call.robbing,
        ),
        "away": tuple(is_away(state.away, s) for s in range(seats)),
        "clock": visible(timer, seat, _PRIVATE_WINDOWS),
    }


def board(view: Any) -> Board:
    """The table as a tile game's ``view`` shows it: each seat's melds, discards and
    flowers (Ka Wu Xing has none), and the viewer's own concealed tiles."""
    players = view.players
    seats = tuple(
        SeatBoard(
            hand_size=p.hand_size,
            melds=tuple(m.tiles or () for m in p.melds),
            discards=p.discards,
            flowers=getattr(p, "flowers", ()),
        )
        for p in players
    )
    hand = players[view.seat].hand if view.seat is not None else None
    return Board(turn=view.turn, stock=view.wall_count, hand=hand or (), seats=seats)
