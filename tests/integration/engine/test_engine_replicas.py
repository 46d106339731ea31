"""Several worker replicas on the same tables: each move applies once, and losing a
replica mid-hand loses nothing.
"""

from __future__ import annotations

import asyncio
import random

import msgspec
import pytest
from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.engine import Act
from services.engine import handlers
from tests.integration.engine.engine_helpers import (
    Feed,
    Replicas,
    last_seq,
    legal,
    load_slot,
    play_random,
    send_act,
    start_hand,
    start_message,
    stream_messages,
)


async def test_racing_the_same_move_on_two_replicas_applies_it_once(
    nc: NATS, workers: Replicas, unique: str
) -> None:
    a = await workers.start("tongits")
    b = await workers.start("tongits")
    start = start_message("tongits", unique)
    feed = await Feed.open(nc, start.table_id, 3)
    version = (await start_hand(nc, "tongits", start)).version
    rng = random.Random(7)
    moves = 0
    while True:
        await feed.wait_version(version)
        views = [feed.view(s, version) for s in range(3)]
        if views[0]["phase"] == "over":
            break
        seat = rng.choice([s for s in range(3) if legal(views[s])])
        action = rng.choice(legal(views[seat]))
        message = Act(
            table_id=start.table_id,
            user_id=start.players[seat].user_id,
            version=version,
            action=msgspec.Raw(msgspec.json.encode(action)),
        )
        # The same move four times at once: twice straight into each replica's handler,
        # twice over NATS (the queue group picks a replica).
        attempts = [
            handlers.act(message, a.worker),
            handlers.act(message, b.worker),
            send_act(nc, "tongits", start.table_id, message.user_id, version, action),
            send_act(nc, "tongits", start.table_id, message.user_id, version, action),
        ]
        outcomes = await asyncio.gather(*attempts, return_exceptions=True)
        applied = [o for o in outcomes if not isinstance(o, BaseException)]
        refused = [o for o in outcomes if isinstance(o, BaseException)]
        assert len(applied) == 1, outcomes
        assert applied[0].version == version + 1
        assert all(getattr(r, "code", None) == "stale_version" for r in refused), refused
        version += 1
        moves += 1

    _, slot = await load_slot(workers.store("tongits"), start.table_id)
    assert len(slot.actions) == moves, "no move was applied twice"
    # Exactly one frame per version per recipient: nothing was published twice either.
    per_recipient: dict[int | None, list[int]] = {}
    for frame in feed.frames:
        if frame.body["type"] == "view":
            per_recipient.setdefault(frame.seat, []).append(frame.body["version"])
    assert set(per_recipient) >= {0, 1, 2}
    for versions in per_recipient.values():
        assert versions == list(range(1, version + 1))
    assert feed.messages == version  # and one message per version
    await feed.close()


async def test_a_replica_killed_mid_hand_leaves_the_hand_to_the_other(
    js_nc: NATS, workers: Replicas, unique: str
) -> None:
    nc = js_nc
    doomed = await workers.start("mahjong")
    survivor = await workers.start("mahjong")
    start = start_message("mahjong", unique)
    feed = await Feed.open(nc, start.table_id, 4)
    version = (await start_hand(nc, "mahjong", start)).version
    rng = random.Random(11)

    # Play a while with both replicas serving, then cut one off without draining.
    for _ in range(30):
        await feed.wait_version(version)
        seat = rng.choice([s for s in range(4) if legal(feed.view(s, version))])
        action = rng.choice(legal(feed.view(seat, version)))
        version = (
            await send_act(
                nc, "mahjong", start.table_id, start.players[seat].user_id, version, action
            )
        ).version
    await workers.kill(doomed)
    assert doomed.nc.is_closed
    # Let nats-server notice the dead socket; until it does, a request routed to the dead
    # replica would only time out (a client's retry would then reach the survivor).
    await asyncio.sleep(0.2)

    # The survivor alone finishes the hand and settles it, from Redis alone.
    final = await play_random(nc, "mahjong", start, feed, rng, version)
    assert final > version
    settled = await stream_messages(
        nc, subjects.RESULTS_STREAM, subjects.hand_result(start.hand_id)
    )
    assert len(settled) == 1
    _, slot = await load_slot(workers.store("mahjong"), start.table_id)
    assert slot.status == "finished" and slot.outcome_published
    assert survivor.nc.is_connected
    await feed.close()


async def test_a_worker_restarted_on_a_fresh_connection_continues_a_hand(
    nc: NATS, workers: Replicas, unique: str
) -> None:
    """Statelessness: the hand lives in Redis, so any new replica picks it up."""
    first = await workers.start("tongits")
    start = start_message("tongits", unique)
    feed = await Feed.open(nc, start.table_id, 3)
    version = (await start_hand(nc, "tongits", start)).version
    events_before = await last_seq(nc, subjects.EVENTS_STREAM)
    await workers.kill(first)
    await asyncio.sleep(0.2)  # let nats-server drop the dead replica's interest
    with pytest.raises(RemoteError) as nobody:
        await send_act(nc, "tongits", start.table_id, start.players[0].user_id, version, {})
    assert nobody.value.code == codes.UNAVAILABLE
    await workers.start("tongits")
    await feed.wait_version(version)
    final = await play_random(nc, "tongits", start, feed, random.Random(5), version)
    assert feed.view(0, final)["phase"] == "over"
    assert await last_seq(nc, subjects.EVENTS_STREAM) > events_before
    await feed.close()
