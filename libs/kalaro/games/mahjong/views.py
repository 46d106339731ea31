"""What one seat (or the audience) may see of a hand.

A seat sees its own concealed tiles (jokers first, as the seed's app shows them), the
tile it just drew and its own legal actions — its private claim options included — and,
when a Win is not offered although the tile on the table would complete its hand, why
not. Everyone sees the joker, every exposed meld, flowers, discards and the wall count;
a concealed kang too, unless the table keeps them secret (``secret_kangs``): then the
others see it face down (no tiles) until the hand ends. Nobody sees another seat's
concealed tiles or claim options, nor which seats a call window waits on, until the
hand is over; then every hand is revealed with the result. The points table the hand
pays by is in ``options.points``. Everyone sees which seats are away and the running
clock (``Clock``): the turn's seat, or — for a call window — only the viewer's own seat
when the window waits on it.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from kalaro.games.clock import Clock
from kalaro.games.mahjong.actions import AnyAction, Claim
from kalaro.games.mahjong.engine import legal_actions
from kalaro.games.mahjong.hands import jokers_first, winning_pattern
from kalaro.games.mahjong.options import Options
from kalaro.games.mahjong.scoring import Result, result
from kalaro.games.mahjong.state import SEATS, Meld, Phase, State
from kalaro.games.tilegame.flow import pending_timer
from kalaro.games.tilegame.views import check_viewer, table_fields

#: Why a Win is not offered on the tile on the table (or, for ``passed_win``, on any).
#: (A discarded joker opens no call window at all: nobody may claim it.)
WinBlocked = Literal["passed_win", "joker_eye"]
WIN_BLOCKED_REASONS: dict[str, str] = {
    "passed_win": (
        "You passed a winning tile: you cannot win on another player's tile until your next draw."
    ),
    "joker_eye": (
        "Joker Eye wins only by drawing: your hand waits with an unpaired Joker, so no"
        " discard can win it (you may still Pung, Chow or Kang)."
    ),
}


class PlayerView(msgspec.Struct, frozen=True, kw_only=True):
    """One seat as the viewer sees it."""

    seat: int
    hand_size: int
    #: Concealed tiles: the viewer's own, or everyone's once the hand is over.
    hand: tuple[str, ...] | None
    #: Exposed melds; a secret concealed kang of another seat has no ``tiles``.
    melds: tuple[Meld, ...]
    flowers: tuple[str, ...]
    discards: tuple[str, ...]


class CallView(msgspec.Struct, frozen=True, kw_only=True):
    """A discard (or a kang being added) that may still be claimed (who may is private)."""

    discarder: int
    tile: str
    seconds: int
    #: ``discarder`` is adding ``tile`` to a pong; only a win (robbing the kang) takes it.
    robbing: bool = False


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
    result: Result | None = None
    #: The kind that is wild this hand (the revealed indicator's kind), with jokers.
    joker: str | None = None
    #: The viewer's Win is blocked (``WinBlocked``): on the tile on the table, or — for
    #: ``passed_win`` — on any other player's tile until the viewer's next draw.
    win_blocked: WinBlocked | None = None
    #: ``win_blocked`` in words, for the client to show.
    win_blocked_reason: str | None = None
    #: Per seat: marked away (timed out too often in a row; its timers run 0 s).
    away: tuple[bool, ...] = (False,) * SEATS
    #: The timer running now (``pending_timer`` without the private parts), if any.
    clock: Clock | None = None


def _melds_seen(state: State, owner: int, viewer: int | None) -> tuple[Meld, ...]:
    melds = state.players[owner].melds
    if not state.options.secret_kangs or owner == viewer or state.phase == "over":
        return melds
    return tuple(
        msgspec.structs.replace(m, tiles=()) if m.kind == "kang" and m.concealed else m
        for m in melds
    )


def _win_blocked(state: State, seat: int) -> WinBlocked | None:
    """Why ``seat`` is not offered a Win it might expect, if so."""
    blocks = state.options.passed_win_blocks
    if state.phase == "over" or not (blocks or state.joker):
        return None  # neither reason can apply (``kalaro``)
    call = state.call
    player = state.players[seat]
    if (
        call is not None
        and seat != call.discarder
        and Claim(kind="mahjong") not in call.offers[seat]
        and winning_pattern((*player.hand, call.tile), player.melds, state.joker, state.options)
    ):
        if blocks and state.passed_win[seat]:
            return "passed_win"
        return "joker_eye"
    if blocks and state.passed_win[seat]:
        return "passed_win"
    return None


def view(state: State, seat: int | None) -> View:
    """What ``seat`` may see now; ``None`` for a spectator."""
    check_viewer(seat, SEATS)
    over = state.phase == "over"
    joker = state.joker
    players = tuple(
        PlayerView(
            seat=s,
            hand_size=len(p.hand),
            hand=jokers_first(p.hand, joker) if over or s == seat else None,
            melds=_melds_seen(state, s, seat),
            flowers=p.flowers,
            discards=p.discards,
        )
        for s, p in enumerate(state.players)
    )
    blocked = None if seat is None else _win_blocked(state, seat)
    return View(
        **table_fields(state, seat, SEATS, call_view=CallView, timer=pending_timer(state)),
        players=players,
        legal=tuple(legal_actions(state, seat)) if seat is not None else (),
        result=result(state),
        joker=joker,
        win_blocked=blocked,
        win_blocked_reason=None if blocked is None else WIN_BLOCKED_REASONS[blocked],
    )
