"""Properties that hold after every action of any hand, under each ruleset (hypothesis
drives the play)."""

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
from kalaro.games.mahjong.hands import jokers_first
from kalaro.games.tiles import KINDS
from tests.unit.mahjong.helpers import (
    KALARO,
    RULESET_OPTIONS,
    accounted,
    choose,
    timed_out,
)
from tests.unit.tile_helpers import encode

# Whole hands: the Hypothesis profile sets how many (tests/conftest.py).
_hands = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
_seeds = st.binary(min_size=1, max_size=12)
# A seeded Random per example: whole hands make too many choices to draw each one
# from hypothesis' own data.
_bots = st.integers(0, 2**32 - 1).map(random.Random)
_rulesets = st.sampled_from(list(RULESET_OPTIONS.values()))


def _walk(
    seed: bytes, rng: random.Random, greedy: bool, options: mj.Options = KALARO
) -> list[tuple[State, int, AnyAction, State]]:
    """One whole hand: every (state before, seat, action, state after)."""
    state = mj.new_hand(options, seed)
    steps = []
    while not mj.is_over(state):
        seat = rng.choice(mj.to_act(state))
        action: AnyAction = TimeOut() if timed_out(state, rng) else choose(state, seat, rng, greedy)
        after, _ = mj.apply(state, seat, action)
        steps.append((state, seat, action, after))
        state = after
    return steps


@_hands
@given(_seeds, _bots, st.booleans(), _rulesets)
def test_all_144_tiles_are_accounted_for_after_every_action(
    seed: bytes, rng: random.Random, greedy: bool, options: mj.Options
) -> None:
    steps = _walk(seed, rng, greedy, options)
    assert accounted(steps[0][0])
    for _, _, _, after in steps:
        assert accounted(after)


@_hands
@given(_seeds, _bots, st.booleans(), _rulesets)
def test_apply_never_mutates_its_input(
    seed: bytes, rng: random.Random, greedy: bool, options: mj.Options
) -> None:
    state = mj.new_hand(options, seed)
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
    actions: list[AnyAction] = [Draw(), DeclareWin(), Pass(), TimeOut(), mj.Back()]
    actions.append(Claim(kind="mahjong"))
    for tile in tiles:
        actions += [Discard(tile), DeclareKang(tile), Claim(kind="pong", tiles=(tile, tile))]
    if state.call is not None:
        for offers in state.call.offers:
            actions.extend(offers)
    if state.joker is not None:  # claims with a joker are never legal
        actions += [Claim(kind="pong", tiles=(state.joker, state.joker)), Discard(state.joker)]
    return [(seat, action) for seat in range(4) for action in actions]


def _is_legal(state: State, seat: int, action: AnyAction) -> bool:
    """Listed by ``legal_actions``, or a time-out of a running timer that waits on ``seat``."""
    if isinstance(action, TimeOut):
        timer = mj.pending_timer(state)
        return timer is not None and seat in timer.seats
    return action in mj.legal_actions(state, seat)


@_hands
@given(_seeds, _bots, st.booleans(), _rulesets)
def test_illegal_actions_raise_and_change_nothing(
    seed: bytes, rng: random.Random, greedy: bool, options: mj.Options
) -> None:
    refused = 0
    for state, _, _, _ in _walk(seed, rng, greedy, options)[::3]:
        before = encode(state)
        for seat, action in _probes(state, rng):
            if _is_legal(state, seat, action):
                mj.apply(state, seat, action)
            else:
                with pytest.raises(IllegalAction) as refusal:
                    mj.apply(state, seat, action)
                assert refusal.value.code.isidentifier() and refusal.value.code.islower()
                refused += 1
            assert encode(state) == before
    assert refused > 0


@_hands
@given(_seeds, _bots, st.booleans(), st.integers(1, 10), st.sampled_from(list(RULESET_OPTIONS)))
def test_payments_sum_to_zero_and_no_loser_pays_above_the_hold(
    seed: bytes, rng: random.Random, greedy: bool, cap: int, ruleset: str
) -> None:
    options = mj.options_for(ruleset, cap_units=cap)
    hold = mj.max_loss_units(options)
    assert hold <= cap
    final = _walk(seed, rng, greedy, options)[-1][-1]
    result = mj.result(final)
    assert result is not None
    assert sum(result.payments) == 0
    assert all(p >= -hold for p in result.payments)
    assert all(c.units == min(c.total, cap) for c in result.charges)
    assert all(
        c.total <= mj.options.largest_bill(options, options.points)
        for c in result.charges
        if options.points
    )
    if result.winner is None:
        assert result.payments == (0, 0, 0, 0)
    else:
        assert result.payments[result.winner] == sum(c.units for c in result.charges) > 0


@_hands
@given(_seeds, _bots, st.booleans(), _rulesets)
def test_views_never_show_another_seats_concealed_tiles(
    seed: bytes, rng: random.Random, greedy: bool, options: mj.Options
) -> None:
    for state, _, _, _ in _walk(seed, rng, greedy, options)[::2]:
        for seat in (None, 0, 1, 2, 3):
            seen = mj.view(state, seat)
            for player in seen.players:
                assert (player.hand is not None) == (player.seat == seat)
                if player.hand is not None:  # the owner's tiles, jokers first
                    assert player.hand == jokers_first(state.players[player.seat].hand, seen.joker)
                for meld, real in zip(player.melds, state.players[player.seat].melds, strict=True):
                    hidden = options.secret_kangs and real.concealed and player.seat != seat
                    assert meld.tiles == (() if hidden else real.tiles)
            expected = () if seat is None else tuple(mj.legal_actions(state, seat))
            assert seen.legal == expected
            assert seen.joker == state.joker
            if seat is None:
                assert seen.win_blocked is None
            if seat is not None and seat != state.turn:
                assert seen.drawn is None
