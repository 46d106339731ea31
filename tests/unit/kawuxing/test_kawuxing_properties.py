"""Properties that hold after every action of any hand (hypothesis drives the play)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kalaro.games import kawuxing as kw
from kalaro.games.base import IllegalAction
from kalaro.games.kawuxing import (
    AnyAction,
    Claim,
    DeclareKong,
    DeclareWin,
    Discard,
    Draw,
    Pass,
    ShowHand,
    State,
    TimeOut,
)
from tests.unit.kawuxing.kawuxing_helpers import DEFAULT, accounted, bot_move, choose
from tests.unit.tile_helpers import encode

# Whole hands: the Hypothesis profile sets how many (tests/conftest.py).
_hands = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
_seeds = st.binary(min_size=1, max_size=12)
# A seeded Random per example: whole hands make too many choices to draw each one
# from hypothesis' own data.
_bots = st.integers(0, 2**32 - 1).map(random.Random)
_options = st.builds(
    lambda cap, kok, limit: kw.options_for("kawuxing", cap=cap, kong_on_kong=kok, loss_limit=limit),
    st.sampled_from([None, 1, 2, 4, 8, 16, 64]),
    st.booleans(),
    st.sampled_from([None, None, 1, 3, 10]),
)


def _walk(
    seed: bytes, rng: random.Random, greedy: bool, options: kw.Options = DEFAULT
) -> list[tuple[State, int, AnyAction, State]]:
    """One whole hand: every (state before, seat, action, state after)."""
    state = kw.new_hand(options, seed)
    steps = []
    while not kw.is_over(state):
        seat, action = bot_move(state, rng, greedy)
        after, _ = kw.apply(state, seat, action)
        steps.append((state, seat, action, after))
        state = after
    return steps


@_hands
@given(_seeds, _bots, st.booleans())
def test_all_84_tiles_are_accounted_for_after_every_action(
    seed: bytes, rng: random.Random, greedy: bool
) -> None:
    steps = _walk(seed, rng, greedy)
    assert accounted(steps[0][0])
    for _, _, _, after in steps:
        assert accounted(after)
        assert kw.hand_size_ok(after)


@_hands
@given(_seeds, _bots, st.booleans())
def test_apply_never_mutates_its_input(seed: bytes, rng: random.Random, greedy: bool) -> None:
    state = kw.new_hand(DEFAULT, seed)
    while not kw.is_over(state):
        seat = rng.choice(kw.to_act(state))
        before = encode(state)
        new, _ = kw.apply(state, seat, choose(state, seat, rng, greedy))
        assert encode(state) == before
        assert new.step == state.step + 1
        state = new


def _probes(state: State, rng: random.Random) -> list[tuple[int, AnyAction]]:
    """A spread of actions, legal or not, from every seat."""
    tiles = rng.sample(kw.KINDS, 5) + list(state.players[state.turn].hand[:3])
    actions: list[AnyAction] = [
        Draw(),
        DeclareWin(),
        Pass(),
        TimeOut(),
        kw.Back(),
        Claim(kind="win"),
    ]
    for tile in tiles:
        actions += [
            Discard(tile),
            ShowHand(tile),
            DeclareKong(tile),
            Claim(kind="pong", tiles=(tile, tile)),
            Claim(kind="kong", tiles=(tile,) * 3),
        ]
    if state.call is not None:
        for offers in state.call.offers:
            actions.extend(offers)
    return [(seat, action) for seat in range(kw.SEATS) for action in actions]


@_hands
@given(_seeds, _bots, st.booleans())
def test_illegal_actions_raise_and_change_nothing(
    seed: bytes, rng: random.Random, greedy: bool
) -> None:
    refused = 0
    for state, _, _, _ in _walk(seed, rng, greedy)[::3]:
        before = encode(state)
        for seat, action in _probes(state, rng):
            timer = kw.pending_timer(state)
            legal = action in kw.legal_actions(state, seat) or (
                isinstance(action, TimeOut) and timer is not None and seat in timer.seats
            )
            if legal:
                kw.apply(state, seat, action)
            else:
                with pytest.raises(IllegalAction) as refusal:
                    kw.apply(state, seat, action)
                assert refusal.value.code.isidentifier() and refusal.value.code.islower()
                refused += 1
            assert encode(state) == before
    assert refused > 0


@_hands
@given(_seeds, _bots, st.booleans(), _options)
def test_payments_sum_to_zero_and_no_loser_pays_above_the_max_loss(
    seed: bytes, rng: random.Random, greedy: bool, options: kw.Options
) -> None:
    final = _walk(seed, rng, greedy, options)[-1][-1]
    result = kw.result(final)
    assert result is not None
    assert sum(result.payments) == 0
    limit = kw.max_loss_units(options)
    assert all(p >= -limit for p in result.payments)
    for payer in range(kw.SEATS):
        assert sum(c.units for c in result.charges if c.payer == payer) <= limit
    assert all(0 <= c.units <= c.due for c in result.charges)
    if options.loss_limit is None:
        # The computed bound is a true bound: nothing is ever cut.
        assert all(c.units == c.due for c in result.charges)
    for win in result.wins:
        cap = win.cap
        assert win.multiplier == (win.raw if cap is None else min(win.raw, cap))
        assert win.multiplier <= kw.max_multiplier(options)


@_hands
@given(_seeds, _bots, st.booleans())
def test_views_never_show_another_seats_concealed_tiles(
    seed: bytes, rng: random.Random, greedy: bool
) -> None:
    for state, _, _, _ in _walk(seed, rng, greedy)[::2]:
        for seat in (None, 0, 1, 2):
            seen = kw.view(state, seat)
            for player in seen.players:
                shown = state.players[player.seat].shown
                assert (player.hand is not None) == (player.seat == seat or shown)
                for meld in player.melds:
                    face_down = meld.kong == "concealed" and player.seat != seat
                    assert (meld.tiles is None) == face_down
            expected = () if seat is None else tuple(kw.legal_actions(state, seat))
            assert seen.legal == expected
            if seat is not None and seat != state.turn:
                assert seen.drawn is None
