"""A hand replayed from its stored record is the hand that was played, hidden cards
included (issue 32).

Whole random hands of every game are played through two engine worker replicas on
real NATS and Redis (moves land on either). At every version the test keeps the
engine's true state as Redis holds it (every seat's concealed cards, the stock or
wall in order) and every seat's live frame as a gateway receives it. Then the record
is asked of the engine service, replayed with :func:`kalaro.replay.replay` (what the
replay page and ``kalaro verify`` use), and each replayed state must equal the live
one byte for byte, and each seat's view of it the frame that seat was sent.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from nats.aio.client import Client as NATS

from kalaro.bus import request
from kalaro.games.registry import rules_for
from kalaro.proto import subjects
from kalaro.proto.engine import GetHandRecord, HandRecord
from kalaro.replay import replay
from kalaro.verify import verify_hand
from services.engine.slots import SlotStore
from tests.integration.engine.engine_helpers import (
    Feed,
    Replicas,
    decode_state,
    load_slot,
    play_random,
    start_hand,
    start_message,
)

_state_bytes = msgspec.msgpack.encode


def _as_sent(view: Any) -> Any:
    """A view as a socket receives it (JSON: tuples become lists)."""
    return msgspec.json.decode(msgspec.json.encode(view))


def _keeper(store: SlotStore, game: str, table_id: str, live: dict[int, tuple[int, bytes]]) -> Any:
    """Keep, at each version, how many actions the log holds and the state's bytes."""

    async def keep(version: int) -> None:
        at, slot = await load_slot(store, table_id)
        # Once the hand is over the engine marks its outcome sent: one version more,
        # the state left as it was.
        assert at == version or (at == version + 1 and slot.outcome_published), (at, version)
        assert at == version or rules_for(game).is_over(decode_state(game, slot))
        live[version] = (len(slot.actions), slot.state)

    return keep


@pytest.mark.parametrize(
    ("game", "options", "seed"),
    [
        ("tongits", {}, 31),
        ("tongits", {"ruleset": "classic"}, 32),  # secret sets, face down
        ("mahjong", {}, 33),
        ("kawuxing", {}, 34),
    ],
)
async def test_a_replayed_hand_equals_the_live_one_hidden_cards_included(
    nc: NATS, workers: Replicas, unique: str, game: str, options: dict[str, Any], seed: int
) -> None:
    await workers.start(game)
    await workers.start(game)
    rules = rules_for(game)
    start = start_message(game, unique, table=f"t{seed}", hand=f"h{seed}", options=options)
    feed = await Feed.open(nc, start.table_id, rules.seats)
    live: dict[int, tuple[int, bytes]] = {}
    keep = _keeper(workers.store(game), game, start.table_id, live)

    started = await start_hand(nc, game, start)
    await keep(started.version)
    final = await play_random(
        nc, game, start, feed, random.Random(seed), started.version, on_step=keep
    )
    await feed.wait_version(final)
    await feed.close()

    record = await request(
        nc, subjects.engine_record(game), GetHandRecord(hand_id=start.hand_id), HandRecord
    )
    assert verify_hand(record).ok
    replayed = [step.state for step in replay(record)]
    assert len(replayed) == len(record.actions) + 1

    compared = 0
    for version in range(started.version, final + 1):
        logged, state_bytes = live[version]
        state = replayed[logged]
        # The whole state: every hand, the stock's order, the discards, whose turn.
        assert _state_bytes(state) == state_bytes, f"state differs at version {version}"
        for seat in range(rules.seats):
            shown = feed.view(seat, version)
            assert _as_sent(rules.view(state, seat)) == shown, (version, seat)
        compared += 1
    assert compared == final - started.version + 1 >= 2

    # The comparison can fail: a state one action off is another state.
    logged, state_bytes = live[final]
    assert _state_bytes(replayed[logged - 1]) != state_bytes
