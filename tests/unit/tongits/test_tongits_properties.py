"""Properties over hands played by hypothesis.

After every action all 52 cards are accounted for; ``apply`` never changes its input;
every listed action is accepted and every action outside the list is refused with an
``IllegalAction`` that changes nothing (the worker's ``TimeOut`` is accepted exactly for
the seats ``pending_timer`` waits on); results pay out zero-sum within the maximum.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kalaro.games.base import IllegalAction
from kalaro.games.cards import DECK
from kalaro.games.tongits import (
    Action,
    Back,
    CallDraw,
    Discard,
    Draw,
    ExposeSecretSet,
    Fight,
    Fold,
    LayOff,
    Meld,
    Options,
    State,
    TakeDiscard,
    TimeOut,
    apply,
    is_over,
    legal_actions,
    max_loss_units,
    new_hand,
    options_for,
    pending_timer,
    to_act,
)
from kalaro.games.tongits.options import MAX_CARDS_HELD
from tests.unit.tongits.tongits_helpers import all_cards

RULESETS = st.sampled_from(
    [
        options_for("kalaro"),
        options_for("classic"),
        options_for("kalaro", secret_sets=True, sapaw_blocks_call=True),
        options_for("classic", stock_out_tie="split", draw_tie="caller", payments="table_a"),
    ]
)


def _key(action: Action) -> tuple[Any, ...]:
    """An action up to the order of its cards (a card given twice stays twice: the
    engine refuses that, so the key must not fold it into the legal single card)."""
    fields = tuple(
        tuple(sorted(value)) if isinstance(value, tuple) else value
        for value in msgspec.structs.astuple(action)
    )
    return (type(action).__name__, *fields)


def _accepted(state: State, seat: int) -> set[tuple[Any, ...]]:
    keys = {_key(a) for a in legal_actions(state, seat)}
    timer = pending_timer(state)
    if timer is not None and seat in timer.seats:
        keys.add(_key(TimeOut()))  # the worker's time-out, not offered to players
    return keys


@st.composite
def _candidate(draw: st.DrawFn, state: State) -> tuple[int, Action]:
    """Any seat (mostly one the hand waits for), any action type, cards mostly from that
    seat's hand (so that some probes are legal)."""
    seat = draw(st.one_of(st.sampled_from(to_act(state)), st.integers(0, 2)))
    hand = list(state.hands[seat])
    pool = st.sampled_from(hand) if hand and draw(st.booleans()) else st.sampled_from(DECK)
    group = tuple(draw(st.lists(pool, max_size=5)))
    meld_id = draw(st.integers(-1, len(state.melds)))
    kind = draw(st.integers(0, 10))
    action: Action = [
        Draw(),
        TakeDiscard(group),
        Meld(group),
        ExposeSecretSet(group),
        LayOff(cards=group, meld_id=meld_id),
        Discard(group[0] if group else "AS"),
        CallDraw(),
        Fight(),
        Fold(),
        TimeOut(),
        Back(),
    ][kind]
    return seat, action


def _check_result(state: State, options: Options) -> None:
    result = state.result
    assert result is not None
    assert sum(result.payments) == 0
    assert min(result.payments) >= -max_loss_units(options)
    # the hold is the tables' true maximum: nothing owed is ever cut
    assert max(result.owed) <= max_loss_units(options)
    assert all(result.payments[w] >= 0 for w in result.winners)
    assert result.next_dealer in (result.winners[:1] or (state.dealer,))
    assert len(result.deadwood) == 3


# Whole hands: the Hypothesis profile sets how many (tests/conftest.py).
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options=RULESETS, seed=st.binary(min_size=1, max_size=8), data=st.data())
def test_hands_keep_every_invariant(options: Options, seed: bytes, data: st.DataObject) -> None:
    state = new_hand(options, seed)
    for _ in range(400):
        assert sorted(all_cards(state)) == sorted(DECK)
        # the premise of the Table B hold: nobody owns more than MAX_CARDS_HELD cards
        for seat in range(3):
            own = sum(by == seat for m in state.melds for by in m.placed_by)
            assert len(state.hands[seat]) + own <= MAX_CARDS_HELD
        if is_over(state):
            break
        before = msgspec.msgpack.encode(state)
        # an arbitrary action: accepted exactly when listed, refused without a trace
        seat, probe = data.draw(_candidate(state))
        if _key(probe) in _accepted(state, seat):
            apply(state, seat, probe)
        else:
            # not listed, so it must be refused
            with pytest.raises(IllegalAction) as err:
                apply(state, seat, probe)
            assert err.value.code
            assert err.value.code == err.value.code.lower()
        assert msgspec.msgpack.encode(state) == before
        # every listed action is accepted; play one of them
        seat = data.draw(st.sampled_from(to_act(state)))
        actions = legal_actions(state, seat)
        assert actions, "a seat the hand waits for always has a move"
        assert len({_key(a) for a in actions}) == len(actions), "no action listed twice"
        timer = pending_timer(state)
        if timer is not None and seat in timer.seats:
            actions = [*actions, TimeOut()]  # the clock may run out on any move
        action = data.draw(st.sampled_from(actions))
        previous = state
        state, events = apply(previous, seat, action)
        assert events
        assert msgspec.msgpack.encode(previous) == before, "apply changed its input"
    assert is_over(state)
    _check_result(state, options)


@settings(deadline=None)
@given(options=RULESETS, seed=st.binary(min_size=1, max_size=8), data=st.data())
def test_every_listed_action_applies(options: Options, seed: bytes, data: st.DataObject) -> None:
    state = new_hand(options, seed)
    while not is_over(state):
        seat = to_act(state)[0]
        actions = legal_actions(state, seat)
        for action in actions:
            apply(state, seat, action)  # raises if the list offered something illegal
        state, _ = apply(state, seat, data.draw(st.sampled_from(actions)))
    _check_result(state, options)
