"""The small steps Tongits moves are made of: whose turn, hands as sorted tuples, a new
meld, and the end of the hand (Tongits, stock out or a Draw call's showdown).

Pure; each refuses bad input with ``IllegalAction`` before anything changed.
"""

from __future__ import annotations

from collections.abc import Iterable

from msgspec.structs import replace

from kalaro.games.base import IllegalAction
from kalaro.games.cards import card_index, is_card
from kalaro.games.tongits.events import Event, HandEnded
from kalaro.games.tongits.melds import MeldKind, sort_meld
from kalaro.games.tongits.scoring import after, all_deadwood, finish
from kalaro.games.tongits.state import Answer, Ending, Hand, Phase, State, TableMeld

Step = tuple[State, list[Event]]


def check_turn(state: State, seat: int, phase: Phase | None = None) -> None:
    """A turn move: no Draw call waiting, ``seat``'s turn, and (if given) ``phase``."""
    if state.phase == "answers":
        raise IllegalAction("awaiting_answers", "a Draw call is waiting for Fight or Fold answers")
    if seat != state.turn:
        raise IllegalAction("not_your_turn", f"it is seat {state.turn}'s turn")
    if phase is not None:
        require_phase(state, phase)


def require_phase(state: State, phase: str) -> None:
    if state.phase == phase:
        return
    if phase == "play":
        raise IllegalAction("must_draw_first", "draw from the stock or take the discard first")
    raise IllegalAction("already_drew", "you have already drawn this turn")


def tongits_if_empty(state: State, seat: int, events: list[Event]) -> Step:
    """Tongits: the moment a hand is empty, its player wins at once."""
    if state.hands[seat]:
        return state, events
    return end_hand(state, "tongits", (seat,), events)


def end_hand(
    state: State,
    ending: Ending,
    winners: tuple[int, ...],
    events: list[Event],
    *,
    points: tuple[int, ...] | None = None,
    last_drawer: int | None = None,
) -> Step:
    if points is None:
        points = all_deadwood(state)
    outcome = finish(state, ending, winners, points, last_drawer=last_drawer)
    return replace(state, phase="over", result=outcome), [*events, HandEnded(result=outcome)]


def pending_answers(state: State) -> list[int]:
    call = state.draw_call
    if call is None:
        return []
    return [s for s in after(call.caller) if call.answers[s] == "pending"]


def set_answer(answers: tuple[Answer, ...], seat: int, answer: Answer) -> tuple[Answer, ...]:
    return tuple(answer if s == seat else a for s, a in enumerate(answers))


def set_hand(hands: tuple[Hand, ...], seat: int, hand: Hand) -> tuple[Hand, ...]:
    return tuple(hand if s == seat else h for s, h in enumerate(hands))


def sorted_hand(cards: Iterable[str]) -> Hand:
    return tuple(sorted(cards, key=card_index))


def without(hand: Hand, cards: tuple[str, ...]) -> Hand:
    """``hand`` minus ``cards``, refusing bad notation, repeats and cards not held."""
    for name in cards:
        if not is_card(name):
            raise IllegalAction("invalid_card", f"not a card: {name!r}")
    if len(set(cards)) != len(cards):
        raise IllegalAction("duplicate_cards", "the same card was given twice")
    missing = [name for name in cards if name not in hand]
    if missing:
        raise IllegalAction("card_not_in_hand", f"not in your hand: {' '.join(missing)}")
    removed = set(cards)
    return tuple(name for name in hand if name not in removed)


def new_meld(
    meld_id: int,
    seat: int,
    kind: MeldKind,
    cards: Iterable[str],
    *,
    from_discard: str | None = None,
) -> TableMeld:
    ordered = sort_meld(cards)
    return TableMeld(
        id=meld_id,
        owner=seat,
        kind=kind,
        cards=ordered,
        placed_by=(seat,) * len(ordered),
        from_discard=from_discard,
    )
