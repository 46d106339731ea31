"""Every registered game, under every ruleset, keeps the GameModule contract.

Random hands are played through the registry alone (no game-specific code here), and at
every step: ``apply`` never changes the state it was given (msgpack bytes before and
after), every legal action of every seat to act is accepted, each View offers exactly
``legal_actions``, and no seat's view (nor the audience's) nor its events name another
seat's concealed cards or tiles or the stock/wall. At the end, replaying the recorded
actions (through the JSON wire decoder) from the seed gives byte-identical state and
result. A short sweep by default; ``make test-deep`` (the ``deep`` marker,
``HYPOTHESIS_PROFILE=deep``) plays many more hands.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kalaro.games.registry import Game, game_names, rules_for

_DEEP = os.environ.get("HYPOTHESIS_PROFILE") == "deep"
_MAX_STEPS = 2000  # far above any real hand; a loop past it is a stuck engine

CASES = [
    pytest.param(game, ruleset, id=f"{game}-{ruleset}")
    for game in game_names()
    for ruleset in rules_for(game).rulesets
]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _encode(value: Any) -> bytes:
    return msgspec.msgpack.encode(value)


def _check_secrecy(rules: Game, state: Any, events: list[Any], step: int) -> None:
    if rules.is_over(state):
        return  # the result reveals the hands, by design
    secrets = rules.secrets(state)
    for viewer in (*range(rules.seats), None):
        forbidden = secrets.forbidden(viewer)
        shown = set(_strings(msgspec.to_builtins(rules.view(state, viewer))))
        for event in events:
            seen = rules.event_for(event, viewer)
            if seen is not None:
                shown |= set(_strings(msgspec.to_builtins(seen)))
        leaks = shown & forbidden
        assert not leaks, f"step {step}: viewer {viewer} is shown {sorted(leaks)}"


def _check_envelope(rules: Game, state: Any, step: int) -> None:
    """Every view has ``seat``, ``to_act`` and ``legal``, alike in every game.

    ``legal`` is exactly what the engine accepts from that seat (none for the
    audience). ``to_act`` is within the engine's, and the same for every viewer, so
    it cannot tell anyone who holds a private option (a claim in a call window)."""
    shown = set()
    for viewer in (*range(rules.seats), None):
        seen = rules.view(state, viewer)
        assert seen.seat == viewer, f"step {step}"
        expected = () if viewer is None else tuple(rules.legal_actions(state, viewer))
        assert tuple(seen.legal) == expected, f"step {step}: viewer {viewer}"
        assert set(seen.to_act) <= set(rules.to_act(state)), f"step {step}: viewer {viewer}"
        shown.add(tuple(seen.to_act))
    assert len(shown) == 1, f"step {step}: viewers are told different seats to act: {shown}"


def _moves(rules: Game, state: Any, step: int) -> list[tuple[int, Any]]:
    """Every (seat, action) legal now, each checked to be accepted without mutating."""
    before = _encode(state)
    moves: list[tuple[int, Any]] = []
    for seat in rules.to_act(state):
        legal = rules.legal_actions(state, seat)
        for action in legal:
            after, _ = rules.apply(state, seat, action)  # raises if refused
            assert _encode(state) == before, f"step {step}: apply({action!r}) mutated"
            assert _encode(after) != before, f"step {step}: {action!r} changed nothing"
            moves.append((seat, action))
    return moves


def _play(rules: Game, options: Any, seed: bytes, dealer: int | None, rng: random.Random) -> None:
    state = rules.new_hand(options, seed, dealer)
    assert len(rules.dealt(state)) == rules.seats
    _check_secrecy(rules, state, [], 0)
    log: list[tuple[int, bytes]] = []
    time_out = rules.time_out()
    for step in range(1, _MAX_STEPS):
        if rules.is_over(state):
            break
        moves = _moves(rules, state, step)
        _check_envelope(rules, state, step)
        timer = rules.pending_timer(state)
        timed = [s for s in timer.seats if s in rules.to_act(state)] if timer else []
        if timed and (not moves or rng.random() < 0.1):
            seat, action = timed[0], time_out  # as the worker does when the clock runs out
        else:
            assert moves, f"step {step}: nobody can act and no timer runs"
            seat, action = rng.choice(moves)
        before = _encode(state)
        state, events = rules.apply(state, seat, action)
        assert _encode(state) != before
        log.append((seat, msgspec.json.encode(action)))
        _check_secrecy(rules, state, events, step)
    else:
        pytest.fail(f"no end after {_MAX_STEPS} steps")
    result = rules.result(state)
    assert result is not None
    assert set(rules.winners(result)) <= set(range(rules.seats))

    # Exact replay from the seed, through the wire decoder.
    again = rules.new_hand(options, seed, dealer)
    for seat, encoded in log:
        again, _ = rules.apply(again, seat, rules.decode_action(encoded))
    assert _encode(again) == _encode(state)
    assert _encode(rules.result(again)) == _encode(rules.result(state))


def _check(game: str, ruleset: str, n: int, dealer_pick: int | None) -> None:
    rules = rules_for(game)
    options = rules.options({"ruleset": ruleset})
    dealer = None if dealer_pick is None else dealer_pick % rules.seats
    seed = f"contract:{game}:{ruleset}:{n}".encode()
    _play(rules, options, seed, dealer, random.Random(seed))


@pytest.mark.parametrize(("game", "ruleset"), CASES)
@settings() if _DEEP else settings(max_examples=2)  # deep: the profile's many examples
@given(n=st.integers(0, 2**32), dealer=st.none() | st.integers(0, 3))
def test_random_hands_keep_the_contract(
    game: str, ruleset: str, n: int, dealer: int | None
) -> None:
    _check(game, ruleset, n, dealer)


@pytest.mark.deep
@pytest.mark.parametrize(("game", "ruleset"), CASES)
def test_many_seeded_hands_keep_the_contract(game: str, ruleset: str) -> None:
    for n in range(40):
        _check(game, ruleset, n, n)


def test_every_game_registers_its_own_facts() -> None:
    for game in game_names():
        rules = rules_for(game)
        assert rules.name == game
        assert rules.seats in (3, 4)
        assert rules.rulesets, game
        state = rules.new_hand(rules.options({}), b"facts", 0)
        dealt = rules.dealt(state)
        assert len(dealt) == rules.seats and all(dealt)
        secrets = rules.secrets(state)
        assert len(secrets.seats) == rules.seats
        # at the deal, each seat's concealed holding is exactly what it was dealt (less
        # any flowers set aside face up)
        for seat, holding in enumerate(secrets.seats):
            assert holding <= set(dealt[seat])
