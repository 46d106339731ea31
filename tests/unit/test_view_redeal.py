"""A seat's view is a function of what that seat may know — for every game and ruleset.

Random hands are played through the registry; at every step, for every seat and the
audience, the hidden part of the state is re-dealt consistently with what that viewer
knows (``tests/unit/redeal.py``: the others' concealed tiles or cards, the wall or
stock, the others' claim options and answers) and the view — clock, legal actions and
all — must come out byte for byte the same, and so must the running timer's deadline
that every seat's frame carries. One seat is slow (it lets its clock run out,
so it is soon marked away, and its claims are then answered at once) and others time out
now and then, so away seats with claims and windows' time-outs are played too. A few
hundred hands by default; ``make test-deep`` (the ``deep`` marker) plays 3,600 more.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from kalaro.games.registry import Game, game_names, rules_for
from tests.unit.redeal import REDEALS

_MAX_STEPS = 2000  # far above any real hand
_FAST_HANDS = 40  # per ruleset: 240 hands in all, a few seconds each ruleset
# Deep: per ruleset, after the fast ones, in chunks well within a test's time limit:
# 3,600 hands in all.
_CHUNK = 50
_DEEP_CHUNKS = 12
_encode = msgspec.msgpack.encode

CASES = [
    pytest.param(game, ruleset, id=f"{game}-{ruleset}")
    for game in game_names()
    for ruleset in rules_for(game).rulesets
]


def _differences(one: Any, other: Any) -> list[str]:
    """The top-level view fields that differ (for the failure message)."""
    a, b = msgspec.to_builtins(one), msgspec.to_builtins(other)
    return [f"{key}: {a[key]!r} != {b.get(key)!r}" for key in a if a[key] != b.get(key)]


def _deadline(rules: Game, state: Any) -> tuple[Any, ...] | None:
    """What every seat's frame shows of the running timer: its ``deadline_ms`` is set
    from the window's kind, ``opened_at`` and ``seconds`` (the engine worker)."""
    timer = rules.pending_timer(state)
    return None if timer is None else (timer.kind, timer.opened_at, timer.seconds)


def _check_views(rules: Game, state: Any, rng: random.Random, where: str) -> None:
    redeal = REDEALS[rules.name]
    for viewer in (*range(rules.seats), None):
        seen = rules.view(state, viewer)
        alt = redeal(state, viewer, rng)
        if _encode(alt) == _encode(state):
            continue  # nothing hidden (the hand is over, say)
        assert _deadline(rules, alt) == _deadline(rules, state), (
            f"{where}: the deadline every frame shows changes with what viewer {viewer} "
            f"cannot know: {_deadline(rules, state)} != {_deadline(rules, alt)}"
        )
        other = rules.view(alt, viewer)
        assert _encode(other) == _encode(seen), (
            f"{where}: viewer {viewer}'s view changes with what it cannot know: "
            + "; ".join(_differences(seen, other))
        )


def _play(rules: Game, options: Any, n: int) -> None:
    seed = f"redeal:{rules.name}:{options}:{n}".encode()
    rng = random.Random(seed)
    state = rules.new_hand(options, seed, n % rules.seats)
    slow = rng.randrange(rules.seats)  # lets its clock run out: soon marked away
    time_out = rules.time_out()
    _check_views(rules, state, rng, f"hand {n} step 0")
    for step in range(1, _MAX_STEPS):
        if rules.is_over(state):
            break
        timer = rules.pending_timer(state)
        waiting = rules.to_act(state)
        timed = [s for s in timer.seats if s in waiting] if timer else []
        moves = [
            (seat, action)
            for seat in waiting
            if seat != slow or not timed
            for action in rules.legal_actions(state, seat)
        ]
        if timed and (not moves or slow in timed or rng.random() < 0.1):
            seat, action = timed[0], time_out  # as the worker does when the clock runs out
        else:
            assert moves, f"hand {n} step {step}: nobody can act and no timer runs"
            seat, action = rng.choice(moves)
        state, _ = rules.apply(state, seat, action)
        _check_views(rules, state, rng, f"hand {n} step {step}")
    else:
        pytest.fail(f"hand {n}: no end after {_MAX_STEPS} steps")


def test_every_game_can_be_redealt() -> None:
    """A new game gets this test for free, once it says what its seats cannot know."""
    missing = set(game_names()) - set(REDEALS)
    assert not missing, f"add a re-deal to tests/unit/redeal.py for {sorted(missing)}"


@pytest.mark.parametrize("game", game_names())
def test_a_redeal_keeps_the_seats_view_and_changes_the_others(game: str) -> None:
    """The re-deal is not empty: what it changes, another seat does see."""
    rules = rules_for(game)
    state = rules.new_hand(rules.options({}), b"redeal", 0)
    alt = REDEALS[game](state, 0, random.Random(1))
    assert _encode(rules.view(alt, 0)) == _encode(rules.view(state, 0))
    for other in range(1, rules.seats):
        assert _encode(rules.view(alt, other)) != _encode(rules.view(state, other))


@pytest.mark.parametrize(("game", "ruleset"), CASES)
def test_a_view_does_not_change_with_what_its_seat_cannot_know(game: str, ruleset: str) -> None:
    rules = rules_for(game)
    options = rules.options({"ruleset": ruleset})
    for n in range(_FAST_HANDS):
        _play(rules, options, n)


@pytest.mark.deep
@pytest.mark.parametrize("chunk", range(_DEEP_CHUNKS))
@pytest.mark.parametrize(("game", "ruleset"), CASES)
def test_many_views_do_not_change_with_what_their_seat_cannot_know(
    game: str, ruleset: str, chunk: int
) -> None:
    rules = rules_for(game)
    options = rules.options({"ruleset": ruleset})
    first = _FAST_HANDS + chunk * _CHUNK
    for n in range(first, first + _CHUNK):
        _play(rules, options, n)
