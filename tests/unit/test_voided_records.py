"""A hand voided mid-play has a record too (issue 31): the engine's ``hand_record`` of a
cancelled slot, ``kalaro verify`` and the browser's verify.js on it (tampering
included), its line in "My hands" and its replay."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import msgspec
import pytest

from kalaro import cli
from kalaro.games.base import derive_seed
from kalaro.games.registry import rules_for
from kalaro.proto.engine import HandRecord, Player
from kalaro.records import summary
from kalaro.verify import verify_hand
from services.engine.hand import Slot, hand_record
from services.gateway.routes_hands import replay
from tests.unit.hand_records import play
from tests.unit.test_verify_js import by_name, js_verify

GAMES = ["tongits", "mahjong", "kawuxing"]
replace = msgspec.structs.replace


def _slot(game: str, rng: random.Random, moves: int, *, bet: int = 0) -> Slot:
    """A slot as the engine keeps it after ``moves`` random legal actions, still in play."""
    rules = rules_for(game)
    options = rules.options({})
    server_seed = rng.randbytes(32)
    entropy = tuple(f"tap-{rng.random()}" for _ in range(rules.seats))
    state = rules.new_hand(options, derive_seed(server_seed, entropy), None)
    dealt = rules.dealt(state)
    actions: list[tuple[int, bytes]] = []
    for _ in range(moves):
        seat = rng.choice(rules.to_act(state))
        legal = rules.legal_actions(state, seat)
        action = rng.choice(legal) if legal else rules.time_out()
        state, _ = rules.apply(state, seat, action)
        actions.append((seat, msgspec.json.encode(action)))
    assert not rules.is_over(state), "pick fewer moves: the hand ended"
    return Slot(
        table_id="t1", hand_id=f"h-{game}", game=game, options=rules.options_dict(options),
        bet=bet,
        players=tuple(Player(user_id=f"u{i}", display_name=f"P{i}") for i in range(rules.seats)),
        seed_commitment=hashlib.sha256(server_seed).hexdigest(), server_seed=server_seed.hex(),
        entropy=entropy, state=msgspec.msgpack.encode(state), actions=tuple(actions),
        initial_hands=dealt, private=True,
    )  # fmt: skip


def _voided(game: str, seed: int = 5, moves: int = 6) -> HandRecord:
    return hand_record(replace(_slot(game, random.Random(seed), moves), status="cancelled"))


@pytest.mark.parametrize("game", GAMES)
def test_a_cancelled_slot_records_a_voided_hand_that_verifies(game: str) -> None:
    slot = replace(_slot(game, random.Random(5), 6, bet=10), status="cancelled")
    record = hand_record(slot)
    assert record.voided and record.private and not record.practice and not record.ranked
    assert record.result is None
    assert record.payments == (0,) * len(slot.players)
    assert [seat for seat, _ in record.actions] == [seat for seat, _ in slot.actions]
    assert record.initial_hands == slot.initial_hands
    report = verify_hand(record)
    assert report.ok, report.checks
    assert [c.name for c in report.checks] == ["commitment", "deal", "replay", "result", "payments"]
    # Through a file, as ``kalaro verify`` reads it.
    assert verify_hand(msgspec.json.decode(msgspec.json.encode(record), type=HandRecord)).ok


def test_a_tombstone_or_a_hand_in_play_has_no_record() -> None:
    tombstone = Slot(table_id="t1", hand_id="h1", game="tongits", status="cancelled")
    with pytest.raises(ValueError, match="no record"):
        hand_record(tombstone)
    with pytest.raises(ValueError, match="no record"):
        hand_record(_slot("tongits", random.Random(1), 2))


def test_a_finished_hand_records_its_flags() -> None:
    rng = random.Random(9)
    rules = rules_for("tongits")
    slot = _slot("tongits", rng, 0, bet=0)
    state = msgspec.msgpack.decode(slot.state, type=rules.state_type)
    actions = []
    while not rules.is_over(state):
        seat = rng.choice(rules.to_act(state))
        legal = rules.legal_actions(state, seat)
        action = rng.choice(legal) if legal else rules.time_out()
        state, _ = rules.apply(state, seat, action)
        actions.append((seat, msgspec.json.encode(action)))
    finished = replace(
        slot, state=msgspec.msgpack.encode(state), actions=tuple(actions), status="finished"
    )
    record = hand_record(finished)
    assert record.practice and record.private and not record.voided
    assert record.result is not None and verify_hand(record).ok


@pytest.mark.parametrize("game", ["tongits", "mahjong"])
def test_tampered_voided_records_are_rejected(game: str) -> None:
    record = _voided(game)
    finished = play(game, random.Random(11))
    seat, action = record.actions[0]
    other = (seat + 1) % len(record.players)  # not this seat's turn: the move is refused
    tampered = {
        "action's seat": replace(record, actions=((other, action), *record.actions[1:])),
        "action": replace(record, actions=((seat, {"type": "no-such-move"}), *record.actions[1:])),
        "payments": replace(record, payments=(5, -5, *record.payments[2:])),
        "fewer payments": replace(record, payments=record.payments[:-1]),
        "result": replace(record, result=finished.result),
        "deal": replace(record, entropy=("x",) * len(record.entropy)),
        "commitment": replace(record, seed_commitment="00" * 32),
        # A finished hand passed off as voided (its result and payments hidden).
        "finished": replace(
            finished, voided=True, result=None, payments=(0,) * len(finished.payments)
        ),
        # A voided hand passed off as finished: its actions do not end it.
        "not voided": replace(record, voided=False),
    }
    for what, bad in tampered.items():
        report = verify_hand(bad)
        assert not report.ok, (what, report.checks)


def test_kalaro_verify_says_voided(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = _voided("mahjong")
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_bytes(msgspec.json.encode(record))
    bad.write_bytes(msgspec.json.encode(replace(record, payments=(8, -8, 0, 0))))
    assert cli.main(["verify", str(good)]) == 0
    assert f"hand {record.hand_id}: VERIFIED (voided: nobody paid)" in capsys.readouterr().out
    assert cli.main(["verify", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "✗ payments: a voided hand announces payments [8, -8, 0, 0]" in out
    assert "FAILED" in out


@pytest.mark.parametrize("game", GAMES)
def test_verify_js_agrees_on_voided_records(game: str) -> None:
    record = _voided(game)
    paid = replace(record, payments=(5, -5, *record.payments[2:]))
    with_result = replace(record, result={"payments": [0] * len(record.players)})
    good, bad_payments, bad_result = js_verify([record, paid, with_result])
    assert good["ok"], good
    assert by_name(good) == {"commitment": True, "deal": True, "payments": True}
    assert not bad_payments["ok"] and not by_name(bad_payments)["payments"]
    assert not bad_result["ok"] and not by_name(bad_result)["payments"]


def test_a_voided_hand_in_my_hands() -> None:
    record = _voided("tongits")
    line = summary(record, "u1", 1_000)
    assert (line.ending, line.credits, line.won, line.seat) == ("voided", 0, False, 1)
    # A record without a result of an older shape is no crash either.
    assert summary(replace(record, voided=False), "u0", 1).ending == ""


@pytest.mark.parametrize("game", GAMES)
def test_a_voided_hand_replays_up_to_the_cancel(game: str) -> None:
    record = _voided(game)
    shown = replay(record, 0)
    assert shown.voided and shown.result is None
    assert shown.payments == (0,) * len(record.players)
    assert [s.actor for s in shown.steps] == [None, *(seat for seat, _ in record.actions)]
