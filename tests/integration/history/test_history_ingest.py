"""Ingest from the RECORDS stream: each hand once, whatever is duplicated, redelivered,
or published while history is down; once stored, the Redis copy lives an hour at most.
And the start-up copy of every record still in Redis."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

import msgspec
from nats.aio.client import Client as NATS
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus.jetstream import DurableConsumer
from kalaro.bus.redislink import RedisLink
from kalaro.proto import subjects
from kalaro.records import RECORD_TTL_MS
from kalaro.settings import Settings
from services.engine.slots import SlotStore
from services.history import store
from services.history.redis_import import import_from_redis
from services.history.service import REDIS_COPY_TTL_MS, start_consumer
from tests.integration.history.history_helpers import counts, eventually, publish, stored


async def _drained(nc: NATS, durable: str) -> bool:
    info = await nc.jetstream().consumer_info(subjects.RECORDS_STREAM, durable)
    return bool(info.num_pending == 0 and info.num_ack_pending == 0)


async def test_duplicates_and_an_outage_store_every_hand_once(
    nc: NATS,
    engine: AsyncEngine,
    settings: Settings,
    redis: RedisLink,
    names: dict[str, str],
    unique: str,
) -> None:
    ns = names["namespace"]
    slots = SlotStore(redis, "tongits", namespace=ns)
    for n in range(4):  # the engine's copies, 7 days each
        await slots.save_record(stored(unique, n).record, 1_000_000 + n)

    def start() -> Awaitable[DurableConsumer]:
        return start_consumer(
            nc, engine, settings, redis,
            namespace=ns, durable=names["durable"], subject=names["subject"], batch=3,
        )  # fmt: skip

    consumer = await start()
    for n in range(2):
        await publish(nc, stored(unique, n))
        # The same record under another message id: JetStream stores both.
        await publish(nc, stored(unique, n), msg_id=f"again-{unique}.{n}")
    await eventually(lambda: _drained(nc, names["durable"]))
    assert await counts(engine, unique) == (2, 4)
    await consumer.stop()  # history is down; the engines go on finishing hands
    for n in range(2, 6):
        await publish(nc, stored(unique, n))
    await publish(nc, stored(unique, 0), msg_id=f"late-{unique}.0")  # an old one, again
    assert await counts(engine, unique) == (2, 4)
    consumer = await start()
    try:
        await eventually(lambda: _drained(nc, names["durable"]))
    finally:
        await consumer.stop()
    assert await counts(engine, unique) == (6, 12)
    for n in range(4):
        ttl = await redis.execute("PTTL", f"{ns}handrecord:{unique}.{n}")
        assert 0 < ttl <= REDIS_COPY_TTL_MS, (n, ttl)


async def test_the_start_up_copy_takes_every_redis_record_once(
    engine: AsyncEngine, redis: RedisLink, names: dict[str, str], unique: str
) -> None:
    ns = names["namespace"]
    slots = SlotStore(redis, "tongits", namespace=ns)
    for n in range(5):
        await slots.save_record(stored(unique, n).record, 2_000_000 + n)
    # A record in no player's index: its time comes from the TTL left.
    lone = stored(unique, 7).record
    await redis.set(f"{ns}handrecord:{lone.hand_id}", msgspec.json.encode(lone), px=RECORD_TTL_MS)
    await slots.save_record(stored(unique, 5).record, 2_000_005)
    await store.store_hands(engine, [stored(unique, 0, finished_ms=2_000_000)])  # already in

    assert await import_from_redis(engine, redis, namespace=ns, batch=2) == 7
    assert await import_from_redis(engine, redis, namespace=ns, batch=2) == 7  # again: no-op
    assert await counts(engine, unique) == (7, 14)
    page = await store.player_page(
        engine, f"{unique}-a", game=None, before_ms=None, before_id=None, limit=20
    )
    assert page[0].hand_id == lone.hand_id  # "finished" just now
    assert page[0].finished_ms > 2_000_005
    # The others at their index's times, exactly.
    assert [(h.hand_id, h.finished_ms) for h in page[1:]] == [
        (f"{unique}.{n}", 2_000_000 + n) for n in (5, 4, 3, 2, 1, 0)
    ]
    for hand in page:
        ttl = await redis.execute("PTTL", f"{ns}handrecord:{hand.hand_id}")
        assert 0 < ttl <= REDIS_COPY_TTL_MS


async def test_sql_failing_pauses_ingest_and_acks_nothing_until_it_is_back(
    nc: NATS, engine: AsyncEngine, settings: Settings, names: dict[str, str], unique: str
) -> None:
    # The tables gone (a database that refuses every insert), then back.
    async with engine.begin() as conn:
        await conn.execute(text("ALTER TABLE history_hands RENAME TO history_hands_away"))
    consumer = await start_consumer(
        nc, engine, settings, None, durable=names["durable"], subject=names["subject"]
    )
    try:
        for n in range(3):
            await publish(nc, stored(unique, n))
        await asyncio.sleep(2.0)  # several failed tries
        info = await nc.jetstream().consumer_info(subjects.RECORDS_STREAM, names["durable"])
        assert info.num_ack_pending + info.num_pending == 3  # nothing acked
        async with engine.connect() as conn:
            kept = await conn.scalar(
                text("SELECT COUNT(*) FROM history_hands_away WHERE hand_id LIKE :u"),
                {"u": f"{unique}.%"},
            )
        assert kept == 0
        async with engine.begin() as conn:
            await conn.execute(text("ALTER TABLE history_hands_away RENAME TO history_hands"))
        await eventually(lambda: _drained(nc, names["durable"]))
    finally:
        await consumer.stop()
    assert await counts(engine, unique) == (3, 6)
