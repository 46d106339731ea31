"""``kalaro verify`` accepts a real hand and rejects every kind of tampering."""

from __future__ import annotations

import hashlib
import random

import msgspec
import pytest

from kalaro.verify import verify_hand
from tests.unit.hand_records import play


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
