"""The golden hands replay byte for byte, and stored mid-hand States still decode.

The hands in ``tests/golden/data`` were recorded from the engines as they were (see
:mod:`tests.golden.hands`); a refactor must replay each one to the same events, result
and final State. Replaying all of them takes minutes, so ``make test`` replays a fixed
sample of every case (every ``SAMPLE``-th hand) and ``make test-deep`` replays them all.

A failure here means a hand now plays differently. If a rule changed on purpose,
regenerate with ``make golden`` and review which cases changed; otherwise the change
is a bug.
"""

from __future__ import annotations

import msgspec
import pytest

from kalaro.games.registry import game_names
from tests.golden.hands import (
    FORMAT,
    HANDS,
    Case,
    cases,
    read_hands,
    read_header,
    read_snapshots,
    replay,
    rulesets,
)

#: ``make test`` replays hands 0, SAMPLE, 2*SAMPLE, ... of every case.
SAMPLE = 25

CASES = cases()


def _ids(case: Case) -> str:
    return case.name


def test_every_game_and_ruleset_has_golden_hands() -> None:
    presets = {(c.game, c.ruleset) for c in CASES if not c.overrides}
    for game in game_names():
        for ruleset in rulesets(game):
            assert (game, ruleset) in presets, f"no golden case for {game}/{ruleset}"
    for case in CASES:
        assert case.path.exists(), f"{case.path} missing: run `make golden`"
        assert case.states_path.exists(), f"{case.states_path} missing: run `make golden`"


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_header_matches_the_case(case: Case) -> None:
    header = read_header(case)
    assert header.format == FORMAT
    assert (header.game, header.ruleset, header.overrides) == (
        case.game,
        case.ruleset,
        case.overrides,
    )
    assert header.hands == case.hands >= (HANDS if not case.overrides else 1)
    # A preset that changed plays different hands: regenerate deliberately.
    assert msgspec.to_builtins(case.options()) == header.options
    assert sum(1 for _ in read_hands(case)) == header.hands


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_a_sample_of_golden_hands_replays_byte_for_byte(case: Case) -> None:
    replayed = 0
    for hand in read_hands(case):
        if hand.i % SAMPLE == 0:
            replay(case, hand)
            replayed += 1
    assert replayed >= case.hands // SAMPLE


#: The full replay runs in chunks of this many hands, so each test stays short.
CHUNK = 250
_CHUNKS = [(case, start) for case in CASES for start in range(0, case.hands, CHUNK)]


@pytest.mark.deep
@pytest.mark.parametrize(
    ("case", "start"), _CHUNKS, ids=[f"{c.name}-{start}" for c, start in _CHUNKS]
)
def test_every_golden_hand_replays_byte_for_byte(case: Case, start: int) -> None:
    indices = []
    for hand in read_hands(case):
        if start <= hand.i < start + CHUNK:
            replay(case, hand)
            indices.append(hand.i)
    assert indices == list(range(start, min(start + CHUNK, case.hands)))


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_stored_mid_hand_states_decode_and_play_on(case: Case) -> None:
    """A State the worker stored in Redis before a change still decodes after it, encodes
    to the same bytes (field names, types and tags unchanged), and finishes its hand with
    the recorded events, result and final State."""
    rules = case.rules()
    snapshots = read_snapshots(case)
    assert len(snapshots) >= 3
    hands = {hand.i: hand for hand in read_hands(case) if hand.i in {s.i for s in snapshots}}
    for snapshot in snapshots:
        encoded = snapshot.encoded()
        state = msgspec.msgpack.decode(encoded, type=rules.state_type)
        assert msgspec.msgpack.encode(state) == encoded
        assert not rules.is_over(state)
        # the engine still reaches that State, and plays on from the decoded one
        replay(case, hands[snapshot.i], snapshot=snapshot)
        replay(case, hands[snapshot.i], snapshot=snapshot, resume=state)


@pytest.mark.parametrize("field", ["events", "result", "state"])
def test_a_hand_that_plays_differently_is_caught(field: str) -> None:
    """The check can fail: a hash that no longer matches names the hand and what differs."""
    case = CASES[0]
    hand = next(read_hands(case))
    changed = msgspec.structs.replace(hand, **{field: "0" * len(getattr(hand, field))})
    with pytest.raises(AssertionError, match=f"{case.name} hand 0 .*differ"):
        replay(case, changed)
