"""``contract.replay``: any hand replays from (options, seed, dealer, actions), for every game."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from kalaro.games.base import IllegalAction
from kalaro.games.contract import replay
from kalaro.games.registry import game_names, rules_for


def _played(game: str, seed: bytes) -> tuple[Any, Any, list[tuple[int, Any]]]:
    """A random hand to its end: the options, the final state and every (seat, action)."""
    rules = rules_for(game)
    options = rules.options({})
    state = rules.new_hand(options, seed, 0)
    rng = random.Random(seed)
    moves: list[tuple[int, Any]] = []
    while not rules.is_over(state):
        seat = rng.choice(rules.to_act(state))
        action = rng.choice(rules.legal_actions(state, seat))
        state, _ = rules.apply(state, seat, action)
        moves.append((seat, action))
    return options, state, moves


@pytest.mark.parametrize("game", game_names())
def test_a_hand_replays_to_the_same_state(game: str) -> None:
    rules = rules_for(game)
    options, end, moves = _played(game, f"replay-{game}".encode())
    assert moves, "the hand had moves"
    again = replay(rules.module, options, f"replay-{game}".encode(), moves, 0)
    assert msgspec.msgpack.encode(again) == msgspec.msgpack.encode(end)
    assert rules.replay(options, f"replay-{game}".encode(), moves, 0) == end


@pytest.mark.parametrize("game", game_names())
def test_a_move_the_rules_refuse_stops_the_replay(game: str) -> None:
    rules = rules_for(game)
    options, _, moves = _played(game, f"refuse-{game}".encode())
    seat, action = moves[0]
    with pytest.raises(IllegalAction):
        rules.replay(options, f"refuse-{game}".encode(), [(seat, action), (seat, action)], 0)
