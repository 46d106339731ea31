"""Random-play conformance and replay determinism.

Thousands of hands of random legal actions under each ruleset (and house-rule mixes),
with the worker's time-outs and seats coming back mixed in, must each end with a valid
result; replaying (options, seed, actions) must re-derive the same hand, event for
event.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from kalaro.games.cards import DECK
from kalaro.games.tongits import (
    Options,
    apply,
    max_loss_units,
    new_hand,
    options_for,
    result,
)
from tests.unit.tongits.tongits_helpers import all_cards, melder, play, uniform

CONFIGS = {
    "kalaro": options_for("kalaro"),
    "classic": options_for("classic"),
    "kalaro+secret+lock": options_for("kalaro", secret_sets=True, sapaw_blocks_call=True),
    "classic+split": options_for("classic", stock_out_tie="split", deadwood="hand"),
}
HANDS = {"kalaro": 2000, "classic": 2000, "kalaro+secret+lock": 500, "classic+split": 500}


@pytest.mark.deep  # thousands of hands: `make test-deep`
@pytest.mark.parametrize("name", list(CONFIGS))
def test_random_hands_always_end_with_a_valid_result(name: str) -> None:
    options = CONFIGS[name]
    rng = random.Random(name)
    endings: Counter[str] = Counter()
    moves: Counter[str] = Counter()
    cap = max_loss_units(options)
    for n in range(HANDS[name]):
        # half uniform (ends mostly in Draw calls), half melding (Tongits, stock outs)
        policy = uniform if n % 2 else melder
        final, log = play(options, f"{name}-{n}".encode(), rng, policy, time_outs=0.1)
        moves.update(type(action).__name__ for _, action in log)
        outcome = result(final)
        assert outcome is not None
        assert sorted(all_cards(final)) == sorted(DECK)
        assert sum(outcome.payments) == 0
        assert min(outcome.payments) >= -cap
        assert max(outcome.owed) <= cap  # the hold never cuts what the table says
        assert all(outcome.payments[w] >= 0 for w in outcome.winners)
        assert all(not outcome.burned[w] for w in outcome.winners)
        if outcome.ending == "tongits":
            assert final.hands[outcome.winners[0]] == ()
        if outcome.ending == "stock_out":
            assert final.stock == ()
            assert outcome.last_drawer is not None
        if outcome.ending == "draw":
            assert outcome.draw_call is not None
            assert outcome.winners[0] in (
                s for s, a in enumerate(outcome.draw_call.answers) if a in ("caller", "fight")
            )
        assert outcome.next_dealer == (outcome.winners[0] if outcome.winners else final.dealer)
        endings[outcome.ending if outcome.winners else "no_winner"] += 1
    # the policies reach every kind of ending
    assert set(endings) >= {"tongits", "stock_out", "draw"}, endings
    assert moves["TimeOut"] and moves["Back"], moves


@pytest.mark.parametrize("options", [options_for("kalaro"), options_for("classic")])
def test_replay_re_derives_the_same_hand(options: Options) -> None:
    rng = random.Random(99)
    moves: Counter[str] = Counter()
    for n in range(12):
        seed = f"replay-{n}".encode()
        final, log = play(options, seed, rng, melder if n % 2 else uniform, time_outs=0.2)
        moves.update(type(action).__name__ for _, action in log)
        # the log's first hand state comes from the seed alone
        again = new_hand(options, seed)
        first_events = []
        for seat, action in log:
            again, events = apply(again, seat, action)
            first_events.extend(events)
        assert again == final
        replay = new_hand(options, seed)
        second_events = []
        for seat, action in log:
            replay, events = apply(replay, seat, action)
            second_events.extend(events)
        assert second_events == first_events
        assert replay == final
    # time-outs, away marks and returns were part of the replayed hands
    assert moves["TimeOut"] and moves["Back"], moves
