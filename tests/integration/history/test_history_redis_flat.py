"""Redis holds live state only: hands played through a real engine worker and stored by
history leave nothing in Redis that grows with their number (their records expire
within the hour, the players' indexes empty), the gateway's listing shows every hand
once while history catches up, and an engine asked about a hand whose Redis copy has
expired answers from history. Real NATS, Redis and SQL."""

from __future__ import annotations

import hashlib
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from msgspec.structs import replace
from nats.aio.client import Client as NATS
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import RemoteError, Service, request
from kalaro.bus.jetstream import DurableConsumer
from kalaro.bus.redislink import RedisLink
from kalaro.devstack import NatsServer
from kalaro.proto import endpoints, subjects
from kalaro.proto import errors as codes
from kalaro.proto.engine import CancelHand, GetHandOutcome, HandCancelled, HandOutcomeReport
from kalaro.proto.history import StoredHand
from kalaro.settings import Settings
from services.gateway.hand_source import player_hands
from services.history import store
from services.history.bootstrap import build_service
from services.history.handlers import history_deps
from services.history.service import REDIS_COPY_TTL_MS, start_consumer
from tests.integration.engine.engine_helpers import (
    FakeClock,
    Feed,
    Replicas,
    play_random,
    start_hand,
    start_message,
    wall_clock,
)
from tests.integration.history.history_helpers import eventually

GAME = "tongits"
SEATS = 3
TABLES = 2  # every hand is dealt at one of these: live state is per table, not per hand


@dataclass
class Rig:
    """One test's engine worker, history (ingest and reads) and Redis namespace."""

    nc: NATS
    engine: AsyncEngine
    settings: Settings
    redis: RedisLink
    replicas: Replicas
    unique: str
    history: Service
    consumer: DurableConsumer | None = None
    played: int = 0

    @property
    def ns(self) -> str:
        return self.replicas.namespace

    async def start_ingest(self) -> None:
        self.consumer = await start_consumer(
            self.nc, self.engine, self.settings, self.redis,
            namespace=self.ns, durable=f"history-{self.unique}",
            subject=subjects.hand_record(f"{self.unique}-h.*"), batch=8,
        )  # fmt: skip

    async def stop_ingest(self) -> None:
        assert self.consumer is not None
        await self.consumer.stop()
        self.consumer = None

    async def play(self, count: int) -> list[str]:
        """``count`` hands to their end, at the test's few tables; their ids."""
        ids = []
        for _ in range(count):
            n = self.played
            self.played += 1
            start = start_message(
                GAME, self.unique, table=f"t{n % TABLES}", hand=f"h.{n}",
                server_seed=hashlib.sha256(f"{self.unique}{n}".encode()).digest(),
            )  # fmt: skip
            feed = await Feed.open(self.nc, start.table_id, SEATS)
            started = await start_hand(self.nc, GAME, start)
            await play_random(self.nc, GAME, start, feed, random.Random(n), started.version)
            await feed.close()
            ids.append(start.hand_id)
        return ids

    async def stored(self, hand_ids: list[str]) -> None:
        """Wait until history has committed every one of ``hand_ids``."""

        async def all_in() -> bool:
            found = [await store.load_hand(self.engine, h) for h in hand_ids]
            return all(r is not None for r in found)

        await eventually(all_in)

    async def listed(self, user: str) -> list[str]:
        """The gateway's "my hands" for ``user`` (one page holds them all)."""
        page = await player_hands(
            self.nc, f"{self.unique}-{user}", game=GAME, before_ms=None, limit=100
        )
        return [hand.hand_id for hand in page]


@dataclass
class Footprint:
    records: dict[str, int]  # handrecord key -> ms left
    index_entries: int  # members of every handsof index
    lasting: set[str]  # keys with no TTL or one beyond the hour


async def footprint(redis: RedisLink, ns: str) -> Footprint:
    records: dict[str, int] = {}
    entries, lasting = 0, set()
    cursor: bytes | int = b"0"
    while True:
        cursor, keys = await redis.execute("SCAN", cursor, "MATCH", f"{ns}*", "COUNT", 500)
        for raw in keys:
            key = raw.decode()
            left = await redis.execute("PTTL", key)
            if key.startswith(f"{ns}handrecord:"):
                records[key] = left
            if key.startswith(f"{ns}handsof:"):
                entries += await redis.execute("ZCARD", key)
            if left == -1 or left > REDIS_COPY_TTL_MS:
                lasting.add(key)
        if cursor in (b"0", 0, "0"):
            return Footprint(records=records, index_entries=entries, lasting=lasting)


@pytest.fixture
async def rig(
    nc: NATS,
    nats_server: NatsServer,
    engine: AsyncEngine,
    settings: Settings,
    redis: RedisLink,
    unique: str,
) -> AsyncIterator[Rig]:
    replicas = Replicas(nats_server.url, redis, f"{unique}:", FakeClock())
    await replicas.start(GAME, now_ms=wall_clock)
    history = build_service(history_deps(engine))
    await history.start(nc)
    found = Rig(nc, engine, settings, redis, replicas, unique, history)
    yield found
    if found.consumer is not None:
        await found.stop_ingest()
    await history.stop()
    await replicas.stop_all()
    await nc.jetstream().delete_consumer(subjects.RECORDS_STREAM, f"history-{unique}")


async def test_redis_does_not_grow_with_the_hands_played(rig: Rig) -> None:
    n = 4
    await rig.start_ingest()
    first = await rig.play(n)
    await rig.stored(first)
    # An outcome published again (a retry, the sweeper) leaves the stored hand as is.
    again = await store.load_hand(rig.engine, first[0])
    assert again is not None
    await rig.replicas.store(GAME).save_record(again, wall_clock())
    after_n = await footprint(rig.redis, rig.ns)
    assert after_n.index_entries == 0, "stored hands left in the players' indexes"
    assert not any("handsof:" in key for key in after_n.lasting)
    assert sorted(after_n.records) == sorted(f"{rig.ns}handrecord:{h}" for h in first)
    assert all(0 < left <= REDIS_COPY_TTL_MS for left in after_n.records.values())
    assert sorted(await rig.listed("u0")) == sorted(first)

    # History down: the hands played meanwhile are listed from the engine's index...
    await rig.stop_ingest()
    second = await rig.play(n)
    while_down = await footprint(rig.redis, rig.ns)
    assert while_down.index_entries == n * SEATS
    assert sorted(await rig.listed("u1")) == sorted(first + second)
    # ...and once history has them, from history: each hand once, none lost.
    await rig.start_ingest()
    third = await rig.play(n)
    await rig.stored(second + third)
    assert sorted(await rig.listed("u2")) == sorted(first + second + third)

    after_3n = await footprint(rig.redis, rig.ns)
    assert after_3n.index_entries == 0
    assert after_3n.lasting == after_n.lasting, "keys that outlive the hour grew with hands"
    assert len(after_3n.lasting) <= 2 * TABLES  # each table's slot and action log
    assert all(0 < left <= REDIS_COPY_TTL_MS for left in after_3n.records.values())


async def _outcome(nc: NATS, table_id: str, hand_id: str) -> HandOutcomeReport:
    return await request(
        nc, endpoints.engine_outcome(GAME), GetHandOutcome(table_id=table_id, hand_id=hand_id)
    )


async def _cancel(nc: NATS, table_id: str, hand_id: str) -> HandCancelled:
    return await request(
        nc, endpoints.engine_cancel(GAME), CancelHand(table_id=table_id, hand_id=hand_id)
    )


async def _gone(redis: RedisLink, key: str) -> bool:
    return not await redis.execute("EXISTS", key)


async def test_a_hand_whose_redis_copy_expired_is_answered_from_history(
    rig: Rig, nc: NATS, engine: AsyncEngine, unique: str
) -> None:
    await rig.start_ingest()
    old = (await rig.play(TABLES + 1))[0]
    table_id = f"{unique}-t0"  # hands 0 and 2 were dealt there: its slot holds hand 2
    await rig.stored([old])
    record = await store.load_hand(engine, old)
    assert record is not None
    key = f"{rig.ns}handrecord:{old}"
    await rig.redis.execute("PEXPIRE", key, 1)  # as if the hour were over
    await eventually(lambda: _gone(rig.redis, key))

    report = await _outcome(nc, table_id, old)
    assert (report.status, report.players, report.payments) == (
        "finished",
        tuple(p.user_id for p in record.players),
        record.payments,
    )
    assert not (await _cancel(nc, table_id, old)).voided  # it finished: nothing to void
    _, slot = await rig.replicas.store(GAME).load(table_id)
    assert slot is not None and slot.hand_id == f"{unique}-h.2" and slot.status == "finished"

    # A voided hand history keeps, its slot long gone: cancelled, and not voided again.
    voided = replace(record, hand_id=f"{unique}-v", voided=True, result=None, payments=(0,) * SEATS)
    await store.store_hands(engine, [StoredHand(record=voided, finished_ms=1)])
    assert (await _outcome(nc, table_id, voided.hand_id)).status == "cancelled"
    assert (await _cancel(nc, table_id, voided.hand_id)).voided
    _, slot = await rig.replicas.store(GAME).load(table_id)
    assert slot is not None and slot.hand_id == f"{unique}-h.2", "a tombstone was written"

    # History does not answer: the engine cannot tell, and says so (the wallet's
    # reconciler then waits) rather than "unknown" (which would release the holds).
    await rig.history.stop()
    with pytest.raises(RemoteError) as refused:
        await _outcome(nc, table_id, old)
    assert refused.value.code == codes.UNAVAILABLE
    await rig.history.start(nc)
    assert (await _outcome(nc, table_id, f"{unique}-never")).status == "unknown"
