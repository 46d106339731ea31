"""The audience view is built and published only while a gateway marks the table watched.

A gateway with a spectator on the table keeps ``subjects.table_audience_key`` alive in
Redis; without it the engine's one message per move carries the seats' views and no
audience part. (The gateway's side, a spectator joining mid-hand, is in
``tests/e2e/test_tables.py``.)
"""

from __future__ import annotations

import asyncio
import random

from nats.aio.client import Client as NATS

from kalaro.bus.redislink import RedisLink
from kalaro.proto import subjects
from tests.integration.engine.engine_helpers import (
    Feed,
    Replicas,
    eventually,
    legal,
    send_act,
    start_hand,
    start_message,
)


async def test_audience_view_only_while_the_table_is_marked_watched(
    js_nc: NATS, workers: Replicas, redis: RedisLink, unique: str
) -> None:
    nc = js_nc
    await workers.start("tongits", audience="watched")
    start = start_message("tongits", unique)
    users = [p.user_id for p in start.players]
    feed = await Feed.open(nc, start.table_id, len(users))
    rng = random.Random(7)

    async def move(version: int) -> int:
        await eventually(
            lambda: all(version in feed.seat_views.get(s, {}) for s in range(len(users))),
            what=f"seat views at version {version}",
        )
        views = [feed.view(s, version) for s in range(len(users))]
        seat = rng.choice([s for s in range(len(users)) if legal(views[s])])
        acted = await send_act(
            nc, "tongits", start.table_id, users[seat], version, rng.choice(legal(views[seat]))
        )
        return acted.version

    version = (await start_hand(nc, "tongits", start)).version
    for _ in range(3):
        version = await move(version)
    await eventually(
        lambda: all(version in feed.seat_views.get(s, {}) for s in range(len(users))),
        what="the last seat views",
    )
    await asyncio.sleep(0.1)  # anything published for these moves has arrived by now
    assert not feed.public_views  # nobody watched: no audience part was built

    # A gateway marks the table watched (its namespace here is the test's).
    key = workers.namespace + subjects.table_audience_key(start.table_id)
    await redis.set(key, b"1", px=subjects.AUDIENCE_TTL_MS)
    version = await move(version)
    await feed.wait_version(version)  # the audience view of this move is published
    assert feed.public_views[version]["seat"] is None
    assert feed.public_views[version]["view"]["hand"] == []  # no concealed cards

    # The mark gone (its TTL ran out): no more audience views.
    await redis.delete(key)
    version = await move(version)
    await eventually(lambda: all(version in feed.seat_views.get(s, {}) for s in range(3)))
    await asyncio.sleep(0.1)
    assert version not in feed.public_views
    await feed.close()
