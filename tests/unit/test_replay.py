"""The replay of a finished hand (services/gateway/routes_hands.replay) shows each step as
the asking seat saw it: its own cards from the deal on, the others' only as counts, and
no other seat's draw; all hands come only with the result."""

from __future__ import annotations

import random

import msgspec
import pytest

from kalaro.games.base import derive_seed
from kalaro.games.registry import rules_for
from services.gateway.routes_hands import replay
from tests.unit.test_verify_js import play

GAMES = ["tongits", "mahjong", "kawuxing"]


@pytest.mark.parametrize("game", GAMES)
def test_replay_follows_the_record_from_each_seat(game: str) -> None:
    record = play(game, random.Random(3))
    rules = rules_for(game)
    for seat in range(rules.seats):
        shown = msgspec.to_builtins(replay(record, seat))
        steps = shown["steps"]
        assert shown["seat"] == seat
        assert len(steps) == len(record.actions) + 1
        assert steps[0]["actor"] is None
        assert [s["actor"] for s in steps[1:]] == [actor for actor, _ in record.actions]
        dealt = list(record.initial_hands[seat])
        if game == "mahjong":  # flowers go aside at the deal; the hand is the rest
            dealt = [t for t in dealt if not t.endswith("f")]
        assert sorted(steps[0]["hand"]) == sorted(dealt)
        # My hand's size is what the table says of my seat, at every step.
        for step in steps:
            assert len(step["hand"]) == step["seats"][seat]["hand_size"]
        for step in steps:
            for event in step["events"]:
                drawn = event.get("card", event.get("tile")) if "drawn" in event["type"] else None
                if event.get("seat") != seat and drawn is not None:
                    raise AssertionError(f"seat {seat} saw seat {event['seat']} draw {drawn}")
                assert "result" not in event  # every hand comes only with the result
        assert shown["result"] == record.result


def test_replay_matches_a_fresh_deal_for_the_dealer_the_seed_chose() -> None:
    record = play("tongits", random.Random(5))
    assert record.dealer is None
    seed = derive_seed(bytes.fromhex(record.server_seed), record.entropy)
    state = rules_for("tongits").new_hand(rules_for("tongits").options({}), seed, None)
    assert replay(record, 0).dealer == state.dealer
