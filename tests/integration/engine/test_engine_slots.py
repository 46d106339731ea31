"""How a hand is kept in Redis: the deal once, the moving state per move, the log appended.

A move must rewrite only the slot's moving part and add its own action to the log,
never the deal; a new hand at the table starts the log again; and a slot an older
worker wrote in the one-field layout plays on and is rewritten in this one.
"""

from __future__ import annotations

import random

import msgspec
from nats.aio.client import Client as NATS

from kalaro.bus import request
from kalaro.proto import subjects
from kalaro.proto.engine import CancelHand, HandCancelled
from tests.integration.engine.engine_helpers import (
    Feed,
    Replicas,
    legal,
    load_slot,
    play_random,
    send_act,
    start_hand,
    start_message,
)


async def _mover(feed: Feed, version: int, seats: int) -> tuple[int, dict[str, object]]:
    await feed.wait_version(version)
    seat = next(s for s in range(seats) if legal(feed.view(s, version)))
    return seat, legal(feed.view(seat, version))[0]


async def test_a_move_appends_its_action_and_leaves_the_deal_alone(
    nc: NATS, workers: Replicas, unique: str
) -> None:
    await workers.start("tongits")
    store = workers.store("tongits")
    start = start_message("tongits", unique)
    feed = await Feed.open(nc, start.table_id, 3)
    started = await start_hand(nc, "tongits", start)
    key, log_key = store.key(start.table_id), store.log_key(start.table_id)
    dealt = await workers.redis.hgetall(key)
    assert set(dealt) == {b"v", b"h", b"d", b"f"}
    assert await workers.redis.execute("LRANGE", log_key, 0, -1) == []

    version = started.version
    for step in range(1, 4):
        seat, action = await _mover(feed, version, 3)
        user = start.players[seat].user_id
        version = (await send_act(nc, "tongits", start.table_id, user, version, action)).version
        stored = await workers.redis.hgetall(key)
        assert stored[b"f"] == dealt[b"f"], "a move never rewrites the deal"
        assert int(stored[b"v"]) == started.version + step
        log = await workers.redis.execute("LRANGE", log_key, 0, -1)
        assert len(log) == step
        assert log[-1] == b"%d:%b" % (seat, msgspec.json.encode(action))

    # A store that never saw this table reads the same slot back, log included.
    _, slot = await load_slot(workers.store("tongits"), start.table_id)
    assert len(slot.actions) == 3
    assert slot.hand_id == start.hand_id and slot.players == start.players

    # The next hand at the table starts its own deal and an empty log.
    cancel = CancelHand(table_id=start.table_id, hand_id=start.hand_id)
    assert (await request(nc, subjects.engine_cancel("tongits"), cancel, HandCancelled)).voided
    second = msgspec.structs.replace(start, hand_id=f"{unique}-h2")
    await start_hand(nc, "tongits", second)
    assert await workers.redis.execute("LRANGE", log_key, 0, -1) == []
    _, slot = await load_slot(store, start.table_id)
    assert (slot.hand_id, slot.actions, slot.status) == (second.hand_id, (), "playing")
    await feed.close()


async def test_a_slot_in_the_older_one_field_layout_plays_on(
    nc: NATS, workers: Replicas, unique: str
) -> None:
    first = await workers.start("tongits")
    store = workers.store("tongits")
    start = start_message("tongits", unique)
    feed = await Feed.open(nc, start.table_id, 3)
    version = (await start_hand(nc, "tongits", start)).version
    for _ in range(2):
        seat, action = await _mover(feed, version, 3)
        user = start.players[seat].user_id
        version = (await send_act(nc, "tongits", start.table_id, user, version, action)).version
    _, slot = await load_slot(store, start.table_id)

    # Rewrite it as an older worker kept it: the whole slot in ``d``, no ``f``, no log.
    key, log_key = store.key(start.table_id), store.log_key(start.table_id)
    await workers.redis.execute("DEL", log_key)
    await workers.redis.execute("HDEL", key, "f", "h")
    await workers.redis.hset(key, "d", msgspec.msgpack.encode(slot))
    await workers.kill(first)  # a new worker: nothing of this table in memory
    await workers.start("tongits")
    assert (await load_slot(workers.store("tongits"), start.table_id))[1] == slot

    seat, action = await _mover(feed, version, 3)
    user = start.players[seat].user_id
    version = (await send_act(nc, "tongits", start.table_id, user, version, action)).version
    stored = await workers.redis.hgetall(key)
    assert b"f" in stored, "rewritten in the new layout"
    assert len(await workers.redis.execute("LRANGE", log_key, 0, -1)) == 3

    final = await play_random(nc, "tongits", start, feed, random.Random(5), version)
    _, done = await load_slot(store, start.table_id)
    assert done.status == "finished"
    assert done.actions[:2] == slot.actions
    assert len(done.actions) == final - 1  # every action since the deal, none twice
    await feed.close()
