"""Ka Wu Xing behind the platform's one shape: the registry, the verifier, the schema."""

from __future__ import annotations

import random

import msgspec

from kalaro.games import kawuxing as kw
from kalaro.games.registry import game_names, rules_for
from kalaro.proto.schema import message_schema
from kalaro.verify import verify_hand
from tests.unit.test_verify import play


def test_the_registry_deals_ka_wu_xing_to_three_seats() -> None:
    assert "kawuxing" in game_names()
    rules = rules_for("kawuxing")
    assert rules.seats == 3 and rules.state_type is kw.State
    options = rules.options({})  # a table without a ruleset gets the platform's default name
    assert options == kw.options_for("kawuxing")
    assert rules.options_dict(options)["ruleset"] == "kawuxing"
    assert rules.options(rules.options_dict(options)) == options
    assert rules.max_loss_units(options) == kw.max_loss_units(options) == 272
    state = rules.new_hand(options, b"seed", None)
    assert rules.dealt(state) == tuple(p.hand for p in state.players)
    assert rules.decode_action(b'{"type": "show_hand", "tile": "5s"}') == kw.ShowHand("5s")
    assert rules.time_out() == kw.TimeOut()


def test_a_real_hand_verifies_and_a_tampered_one_does_not() -> None:
    for n in range(5):
        record = play("kawuxing", random.Random(n))
        report = verify_hand(record)
        assert report.ok, report.checks
        bad = msgspec.structs.replace(
            record, payments=(record.payments[0] + 1, record.payments[1] - 1, record.payments[2])
        )
        assert not verify_hand(bad).ok
        cut = msgspec.structs.replace(record, actions=record.actions[:-1])
        assert not verify_hand(cut).ok


def test_the_message_schema_covers_ka_wu_xing() -> None:
    schema = message_schema()
    game = schema["games"]["kawuxing"]
    assert set(game) == {"action", "view", "result"}
    assert "ShowHand" in schema["$defs"] and "Win" in schema["$defs"]
