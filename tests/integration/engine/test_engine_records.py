"""Every hand dealt reaches history once on RECORDS (issue 31): a finished hand's record,
and a voided one's (cancelled mid-play), with the table's flags from StartHand.

Publishes are watched two ways, as in test_engine_outcomes: the stream (what history
reads) and a plain subscription on the hand's subject, which sees every publish,
duplicates included, so "once" is checked even though JetStream would drop a repeat.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import msgspec
import pytest
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg

from kalaro.bus import request
from kalaro.bus.redislink import RedisLink
from kalaro.bus.runner import connect
from kalaro.devstack import NatsServer
from kalaro.proto import subjects
from kalaro.proto.engine import CancelHand, HandCancelled
from kalaro.proto.history import StoredHand
from kalaro.proto.wallet import VoidHand
from kalaro.verify import verify_hand
from services.engine import handlers
from services.engine.hand import Slot
from services.engine.outcomes import OUTCOME_GRACE_MS
from services.engine.worker import EngineWorker
from tests.integration.engine.engine_helpers import (
    FakeClock,
    Feed,
    Replicas,
    legal,
    load_slot,
    play_random,
    send_act,
    start_hand,
    start_message,
    stream_messages,
)


async def _watch(nc: NATS, subject: str) -> list[Msg]:
    seen: list[Msg] = []

    async def on_message(msg: Msg) -> None:
        seen.append(msg)

    await nc.subscribe(subject, cb=on_message)
    await nc.flush()
    return seen


async def _cancel(nc: NATS, game: str, table_id: str, hand_id: str) -> HandCancelled:
    answer: HandCancelled = await request(
        nc, subjects.engine_cancel(game), CancelHand(table_id=table_id, hand_id=hand_id),
        HandCancelled,
    )  # fmt: skip
    return answer


async def _records(nc: NATS, hand_id: str) -> list[StoredHand]:
    stored = await stream_messages(nc, subjects.RECORDS_STREAM, subjects.hand_record(hand_id))
    assert all(m.headers["Nats-Msg-Id"] == hand_id for m in stored)
    return [msgspec.json.decode(m.data, type=StoredHand) for m in stored]


@pytest.mark.parametrize("game", ["tongits", "mahjong"])
async def test_a_hand_cancelled_mid_play_is_recorded_voided_once(
    js_nc: NATS, workers: Replicas, unique: str, game: str
) -> None:
    nc = js_nc
    await workers.start(game)
    await workers.start(game)
    start = msgspec.structs.replace(start_message(game, unique), private=True)
    published = await _watch(nc, subjects.hand_record(start.hand_id))
    feed = await Feed.open(nc, start.table_id, len(start.players))
    version = (await start_hand(nc, game, start)).version
    rng = random.Random(4)
    for _ in range(3):  # three moves, then the table is cancelled
        await feed.wait_version(version)
        movers = [s for s in range(len(start.players)) if legal(feed.view(s, version))]
        seat = rng.choice(movers)
        action = rng.choice(legal(feed.view(seat, version)))
        user = start.players[seat].user_id
        version = (await send_act(nc, game, start.table_id, user, version, action)).version

    answers = await asyncio.gather(
        *(_cancel(nc, game, start.table_id, start.hand_id) for _ in range(3))
    )
    assert all(a.voided for a in answers)
    [stored] = await _records(nc, start.hand_id)
    record = stored.record
    assert record.voided and record.private and not record.ranked and not record.practice
    assert record.result is None and record.payments == (0,) * len(start.players)
    assert len(record.actions) == 3
    assert record.server_seed == start.server_seed  # the hand is over: its seed is out
    assert verify_hand(record).ok, verify_hand(record).checks

    # A repeat cancel finds the hand voided: no record, and the one void, again.
    assert (await _cancel(nc, game, start.table_id, start.hand_id)).voided
    await asyncio.sleep(0.05)
    assert len(published) == 1, "four cancels, one record published"
    assert len(await _records(nc, start.hand_id)) == 1
    voids = await stream_messages(nc, subjects.RESULTS_STREAM, subjects.hand_result(start.hand_id))
    assert [msgspec.json.decode(m.data, type=VoidHand) for m in voids] == [
        VoidHand(hand_id=start.hand_id, table_id=start.table_id)
    ]
    await feed.close()


async def test_a_hand_cancelled_before_its_deal_has_no_record(
    js_nc: NATS, workers: Replicas, unique: str
) -> None:
    nc = js_nc
    await workers.start("tongits")
    start = start_message("tongits", unique)
    assert (await _cancel(nc, "tongits", start.table_id, start.hand_id)).voided
    voids = await stream_messages(nc, subjects.RESULTS_STREAM, subjects.hand_result(start.hand_id))
    assert len(voids) == 1, "the holds are voided all the same"
    assert await _records(nc, start.hand_id) == []


async def test_a_finished_hand_records_the_tables_flags(
    js_nc: NATS, workers: Replicas, unique: str
) -> None:
    nc = js_nc
    await workers.start("tongits")
    start = msgspec.structs.replace(start_message("tongits", unique, bet=0), private=True)
    feed = await Feed.open(nc, start.table_id, len(start.players))
    started = await start_hand(nc, "tongits", start)
    await play_random(nc, "tongits", start, feed, random.Random(2), started.version)
    _, slot = await load_slot(workers.store("tongits"), start.table_id)
    assert slot.private and slot.outcome_published
    [stored] = await _records(nc, start.hand_id)
    assert stored.practice and stored.record.practice and stored.record.private
    assert not stored.record.voided and stored.record.result is not None
    await feed.close()


class _DiesBeforePublishing(EngineWorker):
    """A replica that stores the cancel, then dies before sending its outcome."""

    async def publish_outcome(self, slot: Slot, version: int, *, frame: bool = True) -> None:
        raise ConnectionError("killed between the write and the publish")


async def test_the_sweeper_records_a_void_the_cancelling_worker_did_not(
    js_nc: NATS, workers: Replicas, unique: str, clock: FakeClock
) -> None:
    nc = js_nc
    healthy = await workers.start("mahjong")
    dying = _DiesBeforePublishing(
        "mahjong", nc, workers.redis, now_ms=clock, namespace=workers.namespace
    )
    start = msgspec.structs.replace(start_message("mahjong", unique), private=True)
    await start_hand(nc, "mahjong", start)
    with pytest.raises(ConnectionError):
        await handlers.cancel(CancelHand(table_id=start.table_id, hand_id=start.hand_id), dying)
    assert await _records(nc, start.hand_id) == []
    clock.advance(OUTCOME_GRACE_MS)
    assert await healthy.worker.sweep_outcomes() == 1
    [stored] = await _records(nc, start.hand_id)
    assert stored.record.voided and stored.record.private and stored.record.actions == ()
    assert stored.finished_ms == clock()


async def test_a_void_stands_while_its_record_cannot_be_published(
    tmp_path: Path, redis: RedisLink, unique: str, clock: FakeClock
) -> None:
    """The RECORDS stream is gone when the table is cancelled: the cancel still voids
    (once), and the sweeper publishes the record when the stream is back."""
    own = NatsServer(tmp_path / "nats").start()  # its streams are this test's to break
    workers = Replicas(own.url, redis, f"t{unique}:", clock)
    nc = await connect(own.url, "tests")
    try:
        replica = await workers.start("tongits")  # no background loop: no sweeper
        start = start_message("tongits", unique)
        await start_hand(nc, "tongits", start)
        await nc.jetstream().delete_stream(subjects.RECORDS_STREAM)
        assert (await _cancel(nc, "tongits", start.table_id, start.hand_id)).voided
        voids = await stream_messages(
            nc, subjects.RESULTS_STREAM, subjects.hand_result(start.hand_id)
        )
        assert len(voids) == 1
        _, slot = await load_slot(workers.store("tongits"), start.table_id)
        assert slot.status == "cancelled" and not slot.outcome_published

        await replica.worker.ensure_streams()  # the stream is back
        clock.advance(OUTCOME_GRACE_MS)
        assert await replica.worker.sweep_outcomes() == 1
        [stored] = await _records(nc, start.hand_id)
        assert stored.record.voided and stored.record.hand_id == start.hand_id
        voids = await stream_messages(
            nc, subjects.RESULTS_STREAM, subjects.hand_result(start.hand_id)
        )
        assert len(voids) == 1, "the void's repeat was dropped"
        _, slot = await load_slot(workers.store("tongits"), start.table_id)
        assert slot.outcome_published
    finally:
        await workers.stop_all()
        await nc.close()
        own.stop()
