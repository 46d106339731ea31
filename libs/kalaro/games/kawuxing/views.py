"""What one seat (or the audience) may see of a hand.

A seat sees its own concealed tiles, the tile it just drew, its waits (and which of them
would be a chicken hand, winning only by self-draw) and its own legal actions — its
private claim options included. Everyone sees every pong and kong, discards, the wall
count, and a shown hand's concealed tiles. A concealed kong lies face down: the others
see that it is a kong, not of what. Nobody sees another seat's concealed tiles or claim
options, nor which seats a call window waits on, until the hand is over; then every hand
is revealed with the result. Everyone sees which seats are away and the running clock
(``Clock``): the turn's seat, or — for a call window — only the viewer's own seat when
the window waits on it.
"""

from __future__ import annotations

import msgspec

from kalaro.games.clock import Clock
from kalaro.games.kawuxing.actions import AnyAction
from kalaro.games.kawuxing.engine import legal_actions
from kalaro.games.kawuxing.hands import HAND_SIZE, waits
from kalaro.games.kawuxing.offers import can_win_on
from kalaro.games.kawuxing.options import Options
from kalaro.games.kawuxing.scoring import Result, result
from kalaro.games.kawuxing.state import SEATS, KongKind, Meld, MeldKind, Phase, State
from kalaro.games.tilegame.flow import pending_timer
from kalaro.games.tilegame.views import check_viewer, table_fields


class MeldView(msgspec.Struct, frozen=True, kw_only=True):
    """A pong or kong as the viewer sees it; ``tiles`` is None for a face-down kong."""

    kind: MeldKind
    tiles: tuple[str, ...] | None
    claimed: str | None = None
    from_seat: int | None = None
    kong: KongKind | None = None
    on_kong: bool = False


class PlayerView(msgspec.Struct, frozen=True, kw_only=True):
    """One seat as the viewer sees it."""

    seat: int
    hand_size: int
    #: Concealed tiles: the viewer's own, a shown hand's, or everyone's once it is over.
    hand: tuple[str, ...] | None
    melds: tuple[MeldView, ...]
    discards: tuple[str, ...]
    shown: bool


class Wait(msgspec.Struct, frozen=True, kw_only=True):
    """A tile that would complete the viewer's hand.

    ``self_draw_only``: on an ordinary discard it would be a chicken hand (no score
    item), which wins only by self-draw; such a discard is not offered as a win.
    """

    tile: str
    self_draw_only: bool


class CallView(msgspec.Struct, frozen=True, kw_only=True):
    """A tile that may still be claimed (who may claim it is private)."""

    discarder: int
    tile: str
    seconds: int
    #: The tile is being added to a kong: it may only be won on (Rob a Kong).
    robbing: bool


class View(msgspec.Struct, frozen=True, kw_only=True):
    """The hand from ``seat``'s chair (``None``: the audience)."""

    seat: int | None
    options: Options
    dealer: int
    turn: int
    #: Seats the hand waits on that this viewer may know of: the player to move;
    #: none in a call window (who may claim a discard is private) or when over.
    to_act: tuple[int, ...] = ()
    phase: Phase
    wall_count: int
    players: tuple[PlayerView, ...]
    #: The tile the viewer just drew, when it is the viewer's turn.
    drawn: str | None = None
    call: CallView | None = None
    #: The viewer's legal actions, including its private claim options.
    legal: tuple[AnyAction, ...] = ()
    #: The viewer's waits while holding 13 tiles (counting 3 per meld).
    waits: tuple[Wait, ...] = ()
    result: Result | None = None
    #: Per seat: marked away (timed out too often in a row; its timers run 0 s).
    away: tuple[bool, ...] = (False,) * SEATS
    #: The timer running now (``pending_timer`` without the private parts), if any.
    clock: Clock | None = None


def _meld_view(meld: Meld, face_up: bool) -> MeldView:
    hidden = meld.kong == "concealed" and not face_up
    return MeldView(
        kind=meld.kind,
        tiles=None if hidden else meld.tiles,
        claimed=meld.claimed,
        from_seat=meld.from_seat,
        kong=meld.kong,
        on_kong=meld.on_kong,
    )


def _waits(state: State, seat: int) -> tuple[Wait, ...]:
    player = state.players[seat]
    if len(player.hand) + 3 * len(player.melds) != HAND_SIZE:
        return ()
    out = []
    for tile in waits(player.hand, player.melds):
        _, may_win = can_win_on(state, seat, tile, robbing=False, after_kong=False)
        out.append(Wait(tile=tile, self_draw_only=not may_win))
    return tuple(out)


def view(state: State, seat: int | None) -> View:
    """What ``seat`` may see now; ``None`` for a spectator."""
    check_viewer(seat, SEATS)
    over = state.phase == "over"
    players = tuple(
        PlayerView(
            seat=s,
            hand_size=len(p.hand),
            hand=p.hand if over or s == seat or p.shown else None,
            melds=tuple(_meld_view(m, over or s == seat) for m in p.melds),
            discards=p.discards,
            shown=p.shown,
        )
        for s, p in enumerate(state.players)
    )
    mine = seat is not None and not over
    return View(
        **table_fields(state, seat, SEATS, call_view=CallView, timer=pending_timer(state)),
        players=players,
        legal=tuple(legal_actions(state, seat)) if seat is not None else (),
        waits=_waits(state, seat) if mine and seat is not None else (),
        result=result(state),
    )
