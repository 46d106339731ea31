"""Helpers for the Tongits tests: hand-built tables and random legal play."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from msgspec.structs import replace

from kalaro.games.cards import DECK, card_index
from kalaro.games.tongits import (
    Action,
    Back,
    CallDraw,
    Discard,
    Draw,
    Fight,
    Fold,
    Options,
    State,
    TableMeld,
    TimeOut,
    apply,
    away_seats,
    is_over,
    legal_actions,
    meld_kind,
    new_hand,
    options_for,
    pending_timer,
    to_act,
)

KALARO = options_for("kalaro")
CLASSIC = options_for("classic")


def cards(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def meld(meld_id: int, owner: int, text: str, *, by: Sequence[int] | None = None) -> TableMeld:
    """An exposed meld; ``by`` lists who placed each card (default: the owner)."""
    names = cards(text)
    kind = meld_kind(names)
    assert kind is not None, text
    return TableMeld(
        id=meld_id,
        owner=owner,
        kind=kind,
        cards=names,
        placed_by=tuple(by) if by is not None else (owner,) * len(names),
    )


def table(
    options: Options = KALARO,
    *,
    hands: Sequence[str],
    melds: Sequence[TableMeld] = (),
    discards: str = "",
    stock: str | None = None,
    stock_size: int | None = None,
    turn: int = 0,
    phase: str = "start",
    dealer: int = 0,
    sapawed: tuple[bool, bool, bool] = (False, False, False),
) -> State:
    """A hand in progress built by hand. The stock is ``stock`` (top first) or, if
    omitted, every card not placed elsewhere (cut to ``stock_size``)."""
    placed = [c for h in hands for c in cards(h)] + list(cards(discards))
    placed += [c for m in melds for c in m.cards]
    if stock is not None:
        pile = list(cards(stock))
    else:
        pile = [c for c in DECK if c not in set(placed)]
        if stock_size is not None:
            pile = pile[:stock_size]
    assert len(set(placed + pile)) == len(placed + pile), "a card is placed twice"
    return State(
        options=options,
        dealer=dealer,
        turn=turn,
        phase=phase,  # type: ignore[arg-type]
        hands=tuple(tuple(sorted(cards(h), key=card_index)) for h in hands),
        stock=tuple(pile),
        discards=cards(discards),
        # meld ids are positions on the table
        melds=tuple(replace(m, id=i) for i, m in enumerate(melds)),
        sapawed=sapawed,
    )


def all_cards(state: State) -> list[str]:
    """Every card of the state, wherever it is."""
    out = [c for h in state.hands for c in h] + list(state.stock) + list(state.discards)
    return out + [c for m in state.melds for c in m.cards]


Policy = Callable[[State, int, list[Action], random.Random], Action]


def uniform(state: State, seat: int, actions: list[Action], rng: random.Random) -> Action:
    return rng.choice(actions)


def melder(state: State, seat: int, actions: list[Action], rng: random.Random) -> Action:
    """Prefers melding and laying off, rarely calls Draw: reaches Tongits and stock outs."""
    if any(isinstance(a, Fight | Fold) for a in actions):
        return rng.choice(actions)
    calls = [a for a in actions if isinstance(a, CallDraw)]
    if calls and rng.random() < 0.05:
        return calls[0]
    building = [a for a in actions if not isinstance(a, CallDraw | Draw | Discard)]
    if building and rng.random() < 0.9:
        return rng.choice(building)
    plain = [a for a in actions if isinstance(a, Draw | Discard)]
    return rng.choice(plain or actions)


def play(
    options: Options,
    seed: bytes,
    rng: random.Random,
    policy: Policy = uniform,
    *,
    time_outs: float = 0.0,
) -> tuple[State, list[tuple[int, Action]]]:
    """Play one hand to the end; return the final state and the (seat, action) log.

    With ``time_outs`` > 0, that share of moves is the worker's ``TimeOut`` instead
    (for a seat the clock waits on), and a seat marked away is as likely to come ``Back``
    out of turn as to be left away.
    """
    state = new_hand(options, seed)
    log: list[tuple[int, Action]] = []
    while not is_over(state):
        away = away_seats(state)
        action: Action
        if away and time_outs and rng.random() < 0.5:
            seat, action = rng.choice(away), Back()
        else:
            seat = rng.choice(to_act(state))
            timer = pending_timer(state)
            if timer is not None and seat in timer.seats and rng.random() < time_outs:
                action = TimeOut()
            else:
                action = policy(state, seat, legal_actions(state, seat), rng)
        state, _ = apply(state, seat, action)
        log.append((seat, action))
    return state, log
