"""The Tongits hand: legal actions and applying an action. Pure functions.

The deal and the worker's queries are :mod:`~kalaro.games.tongits.deal`, calling Draw
:mod:`~kalaro.games.tongits.drawcall`, the steps moves share
:mod:`~kalaro.games.tongits.steps`.

A turn, as the rules put it: draw the top stock card, or take the top discard only to
form a new meld with 2+ hand cards (exposed at once); then expose melds and lay off
(sapaw) on any exposed meld, in any order and number; then discard. The dealer's first
turn has no draw. A player whose hand empties wins at once (Tongits). The player who
draws the last stock card finishes that turn, then the hand ends (stock out). At the
start of a turn, before drawing, an opened player may call Draw instead; opponents
answer Fight or Fold (a burned opponent cannot fight).

``apply`` never changes its input (every struct is frozen) and raises
``IllegalAction`` for anything the rules refuse; ``legal_actions`` lists exactly the
actions ``apply`` accepts from a seat (the worker's ``TimeOut`` aside).

The clock. :func:`~kalaro.games.tongits.deal.pending_timer` is the window the engine
worker times: the Fight/Fold window during a Draw call (``fight_seconds``), otherwise
the clock of the whole turn of the player to act (``turn_seconds``; ``None`` turns it
off). When it runs out the worker applies ``TimeOut()`` for the seat, which plays for
it, conservatively:

* Fight/Fold: fold.
* A turn: at its start, draw from the stock (never take the discard, never call Draw);
  then discard the card whose discard leaves the least deadwood under the table's
  deadwood option (``hand``: the highest-value card; ``outside_melds``: the card whose
  loss leaves the best partition of the rest into melds with the least deadwood), ties
  to the first such card in hand order. Never meld or lay off. After a draw, only the
  discard. A discard that empties the hand is a Tongits win, as always. (A turn never
  starts with an empty stock: the hand ends with the last drawer's discard.)

Each time-out counts for its seat; after ``away_after_timeouts`` in a row the seat is
marked away, and its windows then run out at once (``seconds=0``). Any other action of
the seat clears the count and the mark; ``Back`` clears them without using the turn.
``TimedOut`` is the first event of a time-out, followed by the auto-played moves'.
"""

from __future__ import annotations

from typing import Never, NoReturn

from msgspec.structs import replace

from kalaro.games import clock
from kalaro.games.base import IllegalAction
from kalaro.games.tongits.actions import (
    AnyAction,
    Back,
    CallDraw,
    Discard,
    Draw,
    ExposeSecretSet,
    Fight,
    Fold,
    LayOff,
    Meld,
    TakeDiscard,
    TimeOut,
)
from kalaro.games.tongits.drawcall import answer_call, call_draw, call_draw_refusal
from kalaro.games.tongits.events import (
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
    DiscardTaken,
    Event,
    MeldExposed,
    Returned,
    SecretSetExposed,
    TimedOut,
)
from kalaro.games.tongits.melds import (
    HandGrid,
    discard_melds,
    four_of_a_kinds,
    hand_melds,
    layoffs,
    meld_kind,
    sort_meld,
)
from kalaro.games.tongits.scoring import SEATS, all_deadwood, hand_deadwood, stock_out_winners
from kalaro.games.tongits.state import State
from kalaro.games.tongits.steps import (
    Step,
    check_turn,
    end_hand,
    new_meld,
    pending_answers,
    set_hand,
    sorted_hand,
    tongits_if_empty,
    without,
)

# --------------------------------------------------------------------------------------
# What a seat may do


def legal_actions(state: State, seat: int) -> list[AnyAction]:
    """Every action ``seat`` may take now, each fully specified (cards, meld).

    At the start of a turn: ``CallDraw`` (if allowed), ``Draw``, and one ``TakeDiscard``
    per choice of hand cards that melds with the top discard. After drawing: every
    ``Meld`` and ``ExposeSecretSet`` possible from hand, every ``LayOff`` (each group of
    hand cards on each exposed meld it fits), and one ``Discard`` per card. During a
    Draw call: ``Fight`` and ``Fold`` for a seat still to answer (``TimeOut`` is the
    worker's, not listed). A seat marked away also has ``Back``, first, at any moment.
    """
    if state.phase == "over":
        return []
    moves = _moves(state, seat)
    return [Back(), *moves] if state.is_away(seat) else moves


def _moves(state: State, seat: int) -> list[AnyAction]:
    if state.phase == "answers":
        return [Fight(), Fold()] if seat in pending_answers(state) else []
    if seat != state.turn:
        return []
    hand = HandGrid(state.hands[seat])
    actions: list[AnyAction] = []
    if state.phase == "start":
        if call_draw_refusal(state, seat) is None:
            actions.append(CallDraw())
        if state.stock:
            actions.append(Draw())
        if state.discards:
            actions.extend(TakeDiscard(cards) for cards in discard_melds(hand, state.discards[-1]))
        return actions
    actions.extend(Meld(cards) for cards in hand_melds(hand))
    if state.options.secret_sets:
        actions.extend(ExposeSecretSet(cards) for cards in four_of_a_kinds(hand))
    for meld in state.melds:
        if not meld.face_down:
            actions.extend(
                LayOff(cards=cards, meld_id=meld.id)
                for cards in layoffs(hand, meld.cards, meld.kind)
            )
    actions.extend(Discard(card) for card in state.hands[seat])
    return actions


# --------------------------------------------------------------------------------------
# Applying an action


def apply(state: State, seat: int, action: AnyAction) -> Step:
    """Apply ``seat``'s ``action``: the new state and what happened.

    Raises ``IllegalAction`` (the input state is untouched) if the rules refuse it.
    """
    if seat not in SEATS:
        raise IllegalAction("invalid_seat", f"seats are 0, 1 and 2, not {seat!r}")
    if state.phase == "over":
        raise IllegalAction("hand_over", "the hand is over")
    match action:
        # these two manage the away count themselves
        case TimeOut():
            return _time_out(state, seat)
        case Back():
            return _back(state, seat)
        case Fight() | Fold():
            new, events = answer_call(state, seat, action)
        case CallDraw():
            check_turn(state, seat)
            new, events = call_draw(state, seat)
        case Draw():
            check_turn(state, seat, "start")
            new, events = _draw(state, seat)
        case TakeDiscard(cards=cards):
            check_turn(state, seat, "start")
            new, events = _take_discard(state, seat, cards)
        case Meld(cards=cards):
            check_turn(state, seat, "play")
            new, events = _meld(state, seat, cards)
        case ExposeSecretSet(cards=cards):
            check_turn(state, seat, "play")
            new, events = _expose_secret_set(state, seat, cards)
        case LayOff(cards=cards, meld_id=meld_id):
            check_turn(state, seat, "play")
            new, events = _lay_off(state, seat, cards, meld_id)
        case Discard(card=card):
            check_turn(state, seat, "play")
            new, events = _discard(state, seat, card)
        case _:
            _unhandled(action)
    # the seat is playing again: its time-outs no longer run in a row
    away, timeouts = clock.acted(state.away, state.timeouts, seat, len(SEATS))
    if away is state.away and timeouts is state.timeouts:
        return new, events  # nothing to clear (most moves): no copy
    return replace(new, away=away, timeouts=timeouts), events


def _unhandled(action: Never) -> NoReturn:
    # Typed ``Never`` (as ``assert_never``) so that an action added to the union but not
    # to ``apply`` is a type error; at run time, something that is not an action at all.
    raise IllegalAction("unknown_action", f"not a Tongits action: {action!r}")


def _draw(state: State, seat: int) -> Step:
    if not state.stock:
        raise IllegalAction("stock_empty", "the stock is empty")
    card, stock = state.stock[0], state.stock[1:]
    new = replace(
        state,
        hands=set_hand(state.hands, seat, sorted_hand((*state.hands[seat], card))),
        stock=stock,
        phase="play",
        # whoever draws the last card finishes the turn, then the hand ends
        last_drawer=seat if not stock else state.last_drawer,
    )
    return new, [CardDrawn(seat=seat, card=card, stock_left=len(stock))]


def _take_discard(state: State, seat: int, cards: tuple[str, ...]) -> Step:
    if not state.discards:
        raise IllegalAction("no_discard", "the discard pile is empty")
    top = state.discards[-1]
    if len(cards) < 2:
        raise IllegalAction(
            "invalid_meld", "the discard may only be taken to form a new meld with 2+ hand cards"
        )
    rest = without(state.hands[seat], cards)
    kind = meld_kind((*cards, top))
    if kind is None:
        raise IllegalAction("invalid_meld", f"{' '.join((*cards, top))} is not a set or a run")
    meld_id = len(state.melds)
    meld = new_meld(meld_id, seat, kind, (*cards, top), from_discard=top)
    new = replace(
        state,
        hands=set_hand(state.hands, seat, rest),
        discards=state.discards[:-1],
        melds=(*state.melds, meld),
        phase="play",
    )
    events: list[Event] = [DiscardTaken(seat=seat, card=top, cards=meld.cards, meld_id=meld_id)]
    return tongits_if_empty(new, seat, events)


def _meld(state: State, seat: int, cards: tuple[str, ...]) -> Step:
    rest = without(state.hands[seat], cards)
    kind = meld_kind(cards)
    if kind is None:
        raise IllegalAction("invalid_meld", f"{' '.join(cards)} is not a set or a run")
    meld_id = len(state.melds)
    meld = new_meld(meld_id, seat, kind, cards)
    new = replace(state, hands=set_hand(state.hands, seat, rest), melds=(*state.melds, meld))
    events: list[Event] = [MeldExposed(seat=seat, meld_id=meld_id, kind=kind, cards=meld.cards)]
    return tongits_if_empty(new, seat, events)


def _expose_secret_set(state: State, seat: int, cards: tuple[str, ...]) -> Step:
    if not state.options.secret_sets:
        raise IllegalAction("secret_sets_off", "this table does not play secret sets")
    rest = without(state.hands[seat], cards)
    if len(cards) != 4 or meld_kind(cards) != "set":
        raise IllegalAction("invalid_meld", "a secret set is all four cards of one rank")
    meld_id = len(state.melds)
    meld = replace(new_meld(meld_id, seat, "set", cards), face_down=True)
    new = replace(state, hands=set_hand(state.hands, seat, rest), melds=(*state.melds, meld))
    events: list[Event] = [SecretSetExposed(seat=seat, meld_id=meld_id, cards=meld.cards)]
    return tongits_if_empty(new, seat, events)


def _lay_off(state: State, seat: int, cards: tuple[str, ...], meld_id: int) -> Step:
    if not 0 <= meld_id < len(state.melds):
        raise IllegalAction("unknown_meld", f"there is no meld {meld_id} on the table")
    meld = state.melds[meld_id]
    if meld.face_down:
        raise IllegalAction("invalid_lay_off", "nothing can be laid off on a secret set")
    if not cards:
        raise IllegalAction("invalid_lay_off", "choose the cards to lay off")
    rest = without(state.hands[seat], cards)
    combined = (*meld.cards, *cards)
    if meld_kind(combined) != meld.kind:
        raise IllegalAction(
            "invalid_lay_off", f"{' '.join(cards)} does not fit on {' '.join(meld.cards)}"
        )
    placed = dict(zip(meld.cards, meld.placed_by, strict=True)) | dict.fromkeys(cards, seat)
    ordered = sort_meld(combined)
    grown = replace(meld, cards=ordered, placed_by=tuple(placed[c] for c in ordered))
    melds = tuple(grown if m.id == meld_id else m for m in state.melds)
    if meld.owner == seat:
        new = replace(state, hands=set_hand(state.hands, seat, rest), melds=melds, own_sapaw=True)
    else:
        sapawed = tuple(True if s == meld.owner else flag for s, flag in enumerate(state.sapawed))
        new = replace(state, hands=set_hand(state.hands, seat, rest), melds=melds, sapawed=sapawed)
    events: list[Event] = [
        CardsLaidOff(seat=seat, meld_id=meld_id, owner=meld.owner, cards=sort_meld(cards))
    ]
    return tongits_if_empty(new, seat, events)


def _discard(state: State, seat: int, card: str) -> Step:
    rest = without(state.hands[seat], (card,))
    moved = replace(
        state, hands=set_hand(state.hands, seat, rest), discards=(*state.discards, card)
    )
    events: list[Event] = [CardDiscarded(seat=seat, card=card)]
    if not rest:
        return end_hand(moved, "tongits", (seat,), events)
    if not moved.stock:
        points = all_deadwood(moved)
        winners = stock_out_winners(moved, seat, points)
        return end_hand(moved, "stock_out", winners, events, points=points, last_drawer=seat)
    # the turn passes; this seat's sapaw lock now only remembers its own sapaw
    sapawed = tuple(state.own_sapaw if s == seat else flag for s, flag in enumerate(state.sapawed))
    new = replace(
        moved,
        turn=(seat + 1) % 3,
        phase="start",
        sapawed=sapawed,
        own_sapaw=False,
        turn_no=state.turn_no + 1,
    )
    return new, events


def _time_out(state: State, seat: int) -> Step:
    """The worker's ``TimeOut`` for ``seat``: answer or play for it, and count it."""
    if state.phase == "answers":
        new, moved = answer_call(state, seat, TimeOut())
    else:
        if state.options.turn_seconds is None:
            raise IllegalAction("no_timer", "this table plays without a turn clock")
        if seat != state.turn:
            raise IllegalAction("not_your_turn", f"it is seat {state.turn}'s turn")
        new, moved = _auto_play(state, seat)
    away, timeouts = clock.timed_out(
        state.away, state.timeouts, seat, len(SEATS), state.options.away_after_timeouts
    )
    new = replace(new, away=away, timeouts=timeouts)
    return new, [TimedOut(seat=seat, away=away[seat]), *moved]


def _auto_play(state: State, seat: int) -> Step:
    """A timed-out turn: draw if not yet drawn, then the discard leaving least deadwood."""
    events: list[Event] = []
    if state.phase == "start":
        state, events = _draw(state, seat)
    hand = state.hands[seat]
    # min keeps the first of equal keys: ties go to the first card in hand order
    card = min(
        hand,
        key=lambda c: hand_deadwood(state.options, [k for k in hand if k != c]),
    )
    state, discarded = _discard(state, seat, card)
    return state, [*events, *discarded]


def _back(state: State, seat: int) -> Step:
    if not state.is_away(seat):
        raise IllegalAction("not_away", "you are not marked away")
    away, timeouts = clock.acted(state.away, state.timeouts, seat, len(SEATS))
    return replace(state, away=away, timeouts=timeouts), [Returned(seat=seat)]
