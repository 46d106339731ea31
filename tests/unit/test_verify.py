"""``kalaro verify`` accepts a real hand and rejects every kind of tampering."""

from __future__ import annotations

import hashlib
import random

import msgspec
import pytest

from kalaro.games.base import derive_seed
from kalaro.games.registry import rules_for
from kalaro.proto.engine import HandRecord, Player
from kalaro.verify import verify_hand


def play(game: str, rng: random.Random) -> HandRecord:
    """A whole hand of random legal actions, recorded as the engine worker would."""
    rules = rules_for(game)
    options = rules.options({})
    server_seed = rng.randbytes(32)
    entropy = tuple(f"tap-{rng.random()}" for _ in range(rules.seats))
    state = rules.new_hand(options, derive_seed(server_seed, entropy), None)
    dealt = rules.dealt(state)
    actions: list[tuple[int, object]] = []
    while not rules.is_over(state):
        seats = rules.to_act(state)
        seat = rng.choice(seats)
        legal = rules.legal_actions(state, seat)
        action = rng.choice(legal) if legal else rules.time_out()
        state, _ = rules.apply(state, seat, action)
        actions.append((seat, msgspec.to_builtins(action)))
    result = rules.result(state)
    bet = 5
    return HandRecord(
        game=game, table_id="t1", hand_id=f"h-{game}", options=rules.options_dict(options),
        bet=bet, players=tuple(Player(f"u{i}", f"P{i}") for i in range(rules.seats)),
        dealer=None, seed_commitment=hashlib.sha256(server_seed).hexdigest(),
        server_seed=server_seed.hex(), entropy=entropy, actions=tuple(actions),
        initial_hands=dealt, result=msgspec.to_builtins(result),
        payments=tuple(p * bet for p in result.payments),
    )  # fmt: skip


@pytest.mark.parametrize("game", ["tongits", "mahjong"])
def test_real_hand_verifies(game: str) -> None:
    record = play(game, random.Random(7))
    report = verify_hand(record)
    assert report.ok, report.checks
    assert [c.name for c in report.checks] == ["commitment", "deal", "replay", "result", "payments"]


@pytest.mark.parametrize("game", ["tongits", "mahjong"])
def test_tampered_hands_are_rejected(game: str) -> None:
    record = play(game, random.Random(11))
    other_seed = bytes(32).hex()
    tampered = {
        "commitment": msgspec.structs.replace(record, seed_commitment="00" * 32),
        "deal": msgspec.structs.replace(
            record,
            server_seed=other_seed,
            seed_commitment=hashlib.sha256(bytes(32)).hexdigest(),
        ),
        "entropy": msgspec.structs.replace(record, entropy=("x",) * len(record.entropy)),
        "payments": msgspec.structs.replace(
            record, payments=tuple(p + (1 if i == 0 else -1 if i == 1 else 0)
                                   for i, p in enumerate(record.payments))
        ),
        "actions": msgspec.structs.replace(record, actions=record.actions[:-1]),
    }  # fmt: skip
    for what, bad in tampered.items():
        report = verify_hand(bad)
        assert not report.ok, what
