"""Properties that hold after every action of any hand (hypothesis drives the play)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kalaro.games import mahjong as mj
from kalaro.games.base import IllegalAction
from kalaro.games.mahjong import (
    AnyAction,
    Claim,
    DeclareKang,
    DeclareWin,
    Discard,
    Draw,
    Pass,
    State,
    TimeOut,
)
from kalaro.games.tiles import KINDS
from tests.unit.mahjong.helpers import KALARO, accounted, choose, encode

_hands = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_seeds = st.binary(min_size=1, max_size=12)
# A seeded Random per example: whole hands make too many choices to draw each one
# from hypothesis' own data.
_bots = st.integers(0, 2**32 - 1).map(random.Random)


def _walk(
    seed: bytes, rng: random.Random, greedy: bool, options: mj.Options = KALARO
) -> list[tuple[State, int, AnyAction, State]]:
    """One whole hand: every (state before, seat, action, state after)."""
    state = mj.new_hand(options, seed)
    steps = []
    while not mj.is_over(state):
        seat = rng.choice(mj.to_act(state))
        action: AnyAction = (
            TimeOut()
            if state.phase == "calls" and rng.random() < 0.1
            else choose(state, seat, rng, greedy)
        )
        after, _ = mj.apply(state, seat, action)
        steps.append((state, seat, action, after))
        state = after
    return steps


@_hands
@given(_seeds, _bots, st.booleans())
def test_all_144_tiles_are_accounted_for_after_every_action(
    seed: bytes, rng: random.Random, greedy: bool
) -> None:
    steps = _walk(seed, rng, greedy)
    assert accounted(steps[0][0])
    for _, _, _, after in steps:
        assert accounted(after)


@_hands
@given(_seeds, _bots, st.booleans())
def test_apply_never_mutates_its_input(seed: bytes, rng: random.Random, greedy: bool) -> None:
    state = mj.new_hand(KALARO, seed)
    while not mj.is_over(state):
        seat = rng.choice(mj.to_act(state))
        before = encode(state)
        new, _ = mj.apply(state, seat, choose(state, seat, rng, greedy))
        assert encode(state) == before
        assert new.step == state.step + 1
        state = new


def _probes(state: State, rng: random.Random) -> list[tuple[int, AnyAction]]:
    """A spread of actions, legal or not, from every seat."""
    tiles = rng.sample(KINDS, 6) + list(state.players[state.turn].hand[:3])
    actions: list[AnyAction] = [Draw(), DeclareWin(), Pass(), TimeOut(), Claim("mahjong")]
    for tile in tiles:
        actions += [Discard(tile), DeclareKang(tile), Claim("pong", (tile, tile))]
    if state.call is not None:
        for offers in state.call.offers:
            actions.extend(offers)
    return [(seat, action) for seat in range(4) for action in actions]


@settings(_hands, max_examples=40)
@given(_seeds, _bots, st.booleans())
def test_illegal_actions_raise_and_change_nothing(
    seed: bytes, rng: random.Random, greedy: bool
) -> None:
    refused = 0
    for state, _, _, _ in _walk(seed, rng, greedy)[::3]:
        before = encode(state)
        for seat, action in _probes(state, rng):
            legal = action in mj.legal_actions(state, seat) or (
                isinstance(action, TimeOut) and state.phase == "calls" and seat in mj.to_act(state)
            )
            if legal:
                mj.apply(state, seat, action)
            else:
                with pytest.raises(IllegalAction) as refusal:
                    mj.apply(state, seat, action)
                assert refusal.value.code.isidentifier() and refusal.value.code.islower()
                refused += 1
            assert encode(state) == before
    assert refused > 0


@_hands
@given(_seeds, _bots, st.booleans(), st.integers(1, 10))
def test_payments_sum_to_zero_and_no_loser_pays_above_the_cap(
    seed: bytes, rng: random.Random, greedy: bool, cap: int
) -> None:
    options = mj.options_for("kalaro", cap_units=cap)
    final = _walk(seed, rng, greedy, options)[-1][-1]
    result = mj.result(final)
    assert result is not None
    assert sum(result.payments) == 0
    assert all(p >= -cap for p in result.payments)
    assert all(c.units == min(c.total, cap) for c in result.charges)
    if result.winner is None:
        assert result.payments == (0, 0, 0, 0)
    else:
        assert result.payments[result.winner] == sum(c.units for c in result.charges) > 0


@_hands
@given(_seeds, _bots, st.booleans())
def test_views_never_show_another_seats_concealed_tiles(
    seed: bytes, rng: random.Random, greedy: bool
) -> None:
    for state, _, _, _ in _walk(seed, rng, greedy)[::2]:
        for seat in (None, 0, 1, 2, 3):
            seen = mj.view(state, seat)
            for player in seen.players:
                assert (player.hand is not None) == (player.seat == seat)
            expected = () if seat is None else tuple(mj.legal_actions(state, seat))
            assert seen.legal == expected
            if seat is not None and seat != state.turn:
                assert seen.drawn is None
