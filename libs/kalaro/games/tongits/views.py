"""What one seat (or the audience) may see of a Tongits hand.

A seat sees its own hand and legal actions; everyone sees the exposed melds (a secret
set's cards only by its owner until the hand ends), the discard pile, the stock count,
hand sizes, whose turn it is, the Draw call's answers, who is away and the running
clock. Once the hand is over the result reveals every hand. Nothing else of the state
ever leaves the server.
"""

from __future__ import annotations

import msgspec

from kalaro.games.clock import Clock, visible
from kalaro.games.tongits.actions import AnyAction
from kalaro.games.tongits.deal import pending_timer, to_act
from kalaro.games.tongits.engine import legal_actions
from kalaro.games.tongits.melds import MeldKind
from kalaro.games.tongits.options import Options
from kalaro.games.tongits.state import Answer, Phase, Result, State, TableMeld


class MeldView(msgspec.Struct, frozen=True, kw_only=True):
    """An exposed meld as a viewer sees it; a secret set shows no cards to others."""

    id: int
    owner: int
    kind: MeldKind
    size: int
    cards: tuple[str, ...]
    placed_by: tuple[int, ...]
    face_down: bool = False


class DrawCallView(msgspec.Struct, frozen=True, kw_only=True):
    caller: int
    answers: tuple[Answer, ...]
    waiting: tuple[int, ...]
    seconds: int


class View(msgspec.Struct, frozen=True, kw_only=True):
    """A seat's (``seat``) or the audience's (``seat is None``) view of the hand."""

    seat: int | None
    options: Options
    dealer: int
    turn: int
    phase: Phase
    hand: tuple[str, ...]
    hand_sizes: tuple[int, ...]
    opened: tuple[bool, ...]
    melds: tuple[MeldView, ...]
    discards: tuple[str, ...]  # top card last
    stock_count: int
    to_act: tuple[int, ...]
    #: per seat: Draw is blocked by sapaw (only on tables that play the sapaw lock)
    call_blocked: tuple[bool, ...]
    draw_call: DrawCallView | None
    legal: tuple[AnyAction, ...]  # the seat's legal actions (none for the audience)
    result: Result | None
    #: per seat: marked away (timed out too often in a row)
    away: tuple[bool, ...] = (False, False, False)
    clock: Clock | None = None


def _meld_view(meld: TableMeld, seat: int | None, over: bool) -> MeldView:
    hidden = meld.face_down and meld.owner != seat and not over
    return MeldView(
        id=meld.id,
        owner=meld.owner,
        kind=meld.kind,
        size=len(meld.cards),
        cards=() if hidden else meld.cards,
        placed_by=() if hidden else meld.placed_by,
        face_down=meld.face_down,
    )


def view(state: State, seat: int | None) -> View:
    """The view of ``state`` for ``seat`` (0, 1, 2) or the audience (``None``)."""
    if seat is not None and seat not in (0, 1, 2):
        raise ValueError(f"seats are 0, 1 and 2 (or None for the audience), not {seat!r}")
    over = state.phase == "over"
    call = state.draw_call
    acting = tuple(to_act(state))
    waiting = acting if state.phase == "answers" else ()
    timer = pending_timer(state)
    return View(
        seat=seat,
        options=state.options,
        dealer=state.dealer,
        turn=state.turn,
        phase=state.phase,
        hand=state.hands[seat] if seat is not None else (),
        hand_sizes=tuple(len(hand) for hand in state.hands),
        opened=tuple(state.opened(s) for s in (0, 1, 2)),
        melds=tuple(_meld_view(meld, seat, over) for meld in state.melds),
        discards=state.discards,
        stock_count=len(state.stock),
        to_act=acting,
        call_blocked=tuple(state.options.sapaw_blocks_call and flag for flag in state.sapawed),
        draw_call=(
            DrawCallView(
                caller=call.caller,
                answers=call.answers,
                waiting=waiting,
                seconds=state.options.fight_seconds,
            )
            if call is not None
            else None
        ),
        legal=tuple(legal_actions(state, seat)) if seat is not None else (),
        result=state.result,
        away=tuple(state.is_away(s) for s in (0, 1, 2)),
        clock=visible(timer, seat),  # every Tongits window's seats are public
    )
