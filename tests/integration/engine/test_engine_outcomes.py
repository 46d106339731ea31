"""Outcomes are never lost and never sent twice: voids on cancel, the sweeper, records.

``RESULTS`` is watched two ways: the stream (what the wallet will read) and a plain
subscription on the hand's subject, which sees every publish, duplicates included, so
"published once" is checked even though JetStream would drop a repeat.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import msgspec
import pytest
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg

from kalaro.bus import RemoteError, Service, request
from kalaro.bus.redislink import RedisLink
from kalaro.bus.runner import connect
from kalaro.devstack import NatsServer
from kalaro.games.registry import rules_for
from kalaro.proto import endpoints, subjects
from kalaro.proto import errors as codes
from kalaro.proto.engine import (
    Act,
    CancelHand,
    GetHandRecord,
    GetView,
    HandCancelled,
    HandStarted,
    StartHand,
)
from kalaro.proto.lobby import HandFinished
from kalaro.proto.wallet import SettleHand, Settlement, VoidHand
from kalaro.proto.ws import HandView
from services.engine import handlers
from services.engine.hand import Slot
from services.engine.outcomes import OUTCOME_GRACE_MS
from services.engine.worker import EngineWorker
from tests.integration.engine.engine_helpers import (
    BET,
    FakeClock,
    Feed,
    Replicas,
    decode_state,
    eventually,
    hand_finished_events,
    last_seq,
    legal,
    load_slot,
    send_act,
    start_hand,
    start_message,
    stream_messages,
)


async def _watch(nc: NATS, subject: str) -> tuple[list[Msg], object]:
    seen: list[Msg] = []

    async def on_message(msg: Msg) -> None:
        seen.append(msg)

    sub = await nc.subscribe(subject, cb=on_message)
    await nc.flush()
    return seen, sub


async def _cancel(nc: NATS, game: str, table_id: str, hand_id: str) -> HandCancelled:
    answer: HandCancelled = await request(
        nc,
        subjects.engine_cancel(game),
        CancelHand(table_id=table_id, hand_id=hand_id),
        HandCancelled,
    )
    return answer


async def test_cancelling_a_hand_in_play_voids_it_once(
    js_nc: NATS, workers: Replicas, unique: str
) -> None:
    nc = js_nc
    await workers.start("tongits")
    await workers.start("tongits")
    start = start_message("tongits", unique)
    published, _ = await _watch(nc, subjects.hand_result(start.hand_id))
    started = await start_hand(nc, "tongits", start)

    answers = await asyncio.gather(
        *(_cancel(nc, "tongits", start.table_id, start.hand_id) for _ in range(3))
    )
    assert all(a.voided and a.hand_id == start.hand_id for a in answers)
    assert (await _cancel(nc, "tongits", start.table_id, start.hand_id)).voided

    stored = await stream_messages(nc, subjects.RESULTS_STREAM, subjects.hand_result(start.hand_id))
    assert len(stored) == 1
    assert msgspec.json.decode(stored[0].data, type=VoidHand) == VoidHand(
        hand_id=start.hand_id, table_id=start.table_id
    )
    await asyncio.sleep(0.05)
    assert len(published) == 1, "four cancels, one void sent"

    _, slot = await load_slot(workers.store("tongits"), start.table_id)
    assert slot.status == "cancelled" and slot.outcome_published
    with pytest.raises(RemoteError) as refused:
        await send_act(
            nc, "tongits", start.table_id, start.players[0].user_id, started.version + 2, {}
        )
    assert refused.value.code == "hand_cancelled"
    with pytest.raises(RemoteError) as again:
        await request(nc, subjects.engine_start("tongits"), start, HandStarted)
    assert again.value.code == codes.CONFLICT
    assert await workers.redis.zcard(workers.store("tongits").outcomes_key) == 0


async def test_cancelling_a_hand_never_started_blocks_a_late_start(
    js_nc: NATS, workers: Replicas, unique: str
) -> None:
    """The lobby timed out on StartHand and cancels; the StartHand arrives afterwards."""
    nc = js_nc
    await workers.start("mahjong")
    start = start_message("mahjong", unique)
    answer = await _cancel(nc, "mahjong", start.table_id, start.hand_id)
    assert answer.voided
    stored = await stream_messages(nc, subjects.RESULTS_STREAM, subjects.hand_result(start.hand_id))
    assert [msgspec.json.decode(m.data, type=VoidHand).hand_id for m in stored] == [start.hand_id]

    with pytest.raises(RemoteError) as refused:
        await request(nc, subjects.engine_start("mahjong"), start, HandStarted)
    assert refused.value.code == codes.CONFLICT
    with pytest.raises(RemoteError) as no_view:
        await request(
            nc, subjects.engine_view("mahjong"), GetView(table_id=start.table_id), HandView
        )
    assert no_view.value.code == codes.NOT_FOUND

    # The table's next hand starts normally over the tombstone.
    following = msgspec.structs.replace(start, hand_id=f"{unique}-h2")
    assert (await start_hand(nc, "mahjong", following)).version == 3


class _DiesBeforePublishing(EngineWorker):
    """A replica that stores the end of a hand, then dies before sending its outcome."""

    async def publish_outcome(self, slot: Slot, version: int, *, frame: bool = True) -> None:
        raise ConnectionError("killed between the write and the publish")


async def _play_to_the_end(worker: EngineWorker, start: StartHand, feed: Feed, version: int) -> int:
    """Random legal play through one replica's handler (no queue group in between)."""
    rng = random.Random(3)
    while True:
        await feed.wait_version(version)
        views = [feed.view(s, version) for s in range(3)]
        if views[0]["phase"] == "over":
            return version
        seat = rng.choice([s for s in range(3) if legal(views[s])])
        action = rng.choice(legal(views[seat]))
        message = Act(
            table_id=start.table_id,
            user_id=start.players[seat].user_id,
            version=version,
            action=msgspec.Raw(msgspec.json.encode(action)),
        )
        version = (await handlers.act(message, worker)).version


async def test_sweeper_publishes_the_outcome_a_dead_worker_did_not(
    js_nc: NATS, workers: Replicas, unique: str, clock: FakeClock
) -> None:
    nc = js_nc
    healthy = await workers.start("tongits")
    dying = _DiesBeforePublishing(
        "tongits",
        nc,
        workers.redis,
        now_ms=clock,
        namespace=workers.namespace,
        audience="always",  # (this test reads the audience view off NATS)
    )
    start = start_message("tongits", unique)
    events_before = await last_seq(nc, subjects.EVENTS_STREAM)
    published, _ = await _watch(nc, subjects.hand_result(start.hand_id))
    feed = await Feed.open(nc, start.table_id, 3)
    started = await start_hand(nc, "tongits", start)
    final = await _play_to_the_end(dying, start, feed, started.version)

    store = workers.store("tongits")
    version, slot = await load_slot(store, start.table_id)
    assert (version, slot.status, slot.outcome_published) == (final, "finished", False)
    assert (
        await stream_messages(nc, subjects.RESULTS_STREAM, subjects.hand_result(start.hand_id))
        == []
    )

    # Within the grace period the finishing worker may still be publishing: hands off.
    assert await healthy.worker.sweep_outcomes() == 0
    clock.advance(OUTCOME_GRACE_MS)
    assert await healthy.worker.sweep_outcomes() == 1
    assert await healthy.worker.sweep_outcomes() == 0

    result = rules_for("tongits").result(decode_state("tongits", slot))
    stored = await stream_messages(nc, subjects.RESULTS_STREAM, subjects.hand_result(start.hand_id))
    assert len(stored) == 1
    settle = msgspec.json.decode(stored[0].data, type=SettleHand)
    assert [p.amount for p in settle.payments] == [u * BET for u in result.payments]
    assert len(await hand_finished_events(nc, start.hand_id, events_before)) == 1
    await asyncio.sleep(0.05)
    assert len(published) == 1
    assert len(feed.results) == 1
    _, slot = await load_slot(store, start.table_id)
    assert slot.outcome_published
    assert await store.load_record(start.hand_id) is not None
    assert await workers.redis.zcard(store.outcomes_key) == 0
    await feed.close()


async def test_next_hand_sends_the_previous_outcome_first_if_nobody_did(
    js_nc: NATS, workers: Replicas, unique: str, clock: FakeClock
) -> None:
    nc = js_nc
    await workers.start("tongits")
    dying = _DiesBeforePublishing(
        "tongits",
        nc,
        workers.redis,
        now_ms=clock,
        namespace=workers.namespace,
        audience="always",  # (this test reads the audience view off NATS)
    )
    first = start_message("tongits", unique)
    feed = await Feed.open(nc, first.table_id, 3)
    started = await start_hand(nc, "tongits", first)
    await _play_to_the_end(dying, first, feed, started.version)
    assert (
        await stream_messages(nc, subjects.RESULTS_STREAM, subjects.hand_result(first.hand_id))
        == []
    )

    second = msgspec.structs.replace(first, hand_id=f"{unique}-h2")
    await start_hand(nc, "tongits", second)
    stored = await stream_messages(nc, subjects.RESULTS_STREAM, subjects.hand_result(first.hand_id))
    assert len(stored) == 1, "the settlement went out before its slot was reused"
    _, slot = await load_slot(workers.store("tongits"), first.table_id)
    assert slot.hand_id == second.hand_id and slot.status == "playing"
    await asyncio.sleep(0.05)
    assert feed.results == [], "no stale result frame over the next hand"
    await feed.close()


async def test_a_void_the_cancelling_worker_did_not_send_is_swept_once(
    js_nc: NATS, workers: Replicas, unique: str, clock: FakeClock
) -> None:
    nc = js_nc
    healthy = await workers.start("tongits")
    dying = _DiesBeforePublishing(
        "tongits",
        nc,
        workers.redis,
        now_ms=clock,
        namespace=workers.namespace,
        audience="always",  # (this test reads the audience view off NATS)
    )
    start = start_message("tongits", unique)
    published, _ = await _watch(nc, subjects.hand_result(start.hand_id))
    await start_hand(nc, "tongits", start)
    with pytest.raises(ConnectionError):
        await handlers.cancel(CancelHand(table_id=start.table_id, hand_id=start.hand_id), dying)
    # A retried cancel finds the hand voided and does not send the void itself...
    assert (await _cancel(nc, "tongits", start.table_id, start.hand_id)).voided
    await asyncio.sleep(0.05)
    assert published == []
    # ...the sweeper does, once the cancelling worker's grace period is over.
    clock.advance(OUTCOME_GRACE_MS)
    assert await healthy.worker.sweep_outcomes() == 1
    await asyncio.sleep(0.05)
    assert [msgspec.json.decode(m.data)["type"] for m in published] == ["void"]
    _, slot = await load_slot(workers.store("tongits"), start.table_id)
    assert slot.status == "cancelled" and slot.outcome_published


async def test_cancelling_a_finished_hand_voids_nothing(
    js_nc: NATS, workers: Replicas, unique: str
) -> None:
    nc = js_nc
    replica = await workers.start("tongits")
    start = start_message("tongits", unique)
    feed = await Feed.open(nc, start.table_id, 3)
    started = await start_hand(nc, "tongits", start)
    await _play_to_the_end(replica.worker, start, feed, started.version)
    answer = await _cancel(nc, "tongits", start.table_id, start.hand_id)
    assert not answer.voided
    stored = await stream_messages(nc, subjects.RESULTS_STREAM, subjects.hand_result(start.hand_id))
    assert [msgspec.json.decode(m.data)["type"] for m in stored] == ["settle"]
    await feed.close()


async def test_an_outcome_the_stream_refused_is_published_again_within_seconds(
    tmp_path: Path, redis: RedisLink, unique: str, clock: FakeClock
) -> None:
    """The RESULTS stream has no leader for a moment (its node died): the finishing
    worker publishes again by itself, within seconds, without waiting for the sweeper."""
    own = NatsServer(tmp_path / "nats").start()  # its streams are this test's to break
    workers = Replicas(own.url, redis, f"t{unique}:", clock)
    nc = await connect(own.url, "tests")
    try:
        replica = await workers.start("tongits")  # no background loop: no sweeper
        js = nc.jetstream()
        start = start_message("tongits", unique)
        feed = await Feed.open(nc, start.table_id, 3)
        started = await start_hand(nc, "tongits", start)
        await js.delete_stream(subjects.RESULTS_STREAM)  # publishes now find no stream
        await _play_to_the_end(replica.worker, start, feed, started.version)
        await asyncio.sleep(0.5)
        assert feed.results == []  # not published yet: the frame goes out last
        await replica.worker.ensure_streams()  # the stream is back
        await eventually(lambda: len(feed.results) == 1, 5.0, "the result published again")
        stored = await stream_messages(
            nc, subjects.RESULTS_STREAM, subjects.hand_result(start.hand_id)
        )
        assert [msgspec.json.decode(m.data)["type"] for m in stored] == ["settle"]
        _, slot = await load_slot(workers.store("tongits"), start.table_id)
        assert slot.outcome_published
        await feed.close()
    finally:
        await workers.stop_all()
        await nc.close()
        own.stop()


async def test_while_the_stream_has_no_leader_the_outcome_goes_to_the_wallet_directly(
    tmp_path: Path, redis: RedisLink, unique: str, clock: FakeClock
) -> None:
    """A stream's election takes seconds; the wallet and the lobby answer requests at
    once. They get the outcome directly, and the stream's copy later changes nothing."""
    own = NatsServer(tmp_path / "nats").start()
    workers = Replicas(own.url, redis, f"t{unique}:", clock)
    nc = await connect(own.url, "tests")
    settled: list[SettleHand] = []
    finished: list[HandFinished] = []

    async def settle(req: SettleHand) -> Settlement:
        settled.append(req)
        return Settlement(hand_id=req.hand_id, status="settled", payments=req.payments)

    async def hand_finished(req: HandFinished) -> HandFinished:
        finished.append(req)
        return req

    peers = Service("wallet-and-lobby")
    peers.add(endpoints.WALLET_SETTLE, settle)
    peers.add(endpoints.LOBBY_HAND_FINISHED, hand_finished)
    await peers.start(nc)
    try:
        replica = await workers.start("tongits")
        start = start_message("tongits", unique)
        feed = await Feed.open(nc, start.table_id, 3)
        started = await start_hand(nc, "tongits", start)
        await nc.jetstream().delete_stream(subjects.RESULTS_STREAM)
        await _play_to_the_end(replica.worker, start, feed, started.version)
        await eventually(lambda: len(feed.results) == 1, 3.0, "the result shown at once")
        assert [s.hand_id for s in settled] == [start.hand_id]
        assert [f.hand_id for f in finished] == [start.hand_id]
        record = await handlers.get_record(GetHandRecord(hand_id=start.hand_id), replica.worker)
        assert [p.amount for p in settled[0].payments] == list(record.payments)
        _, slot = await load_slot(workers.store("tongits"), start.table_id)
        assert not slot.outcome_published  # the durable copy is still owed
        await replica.worker.ensure_streams()
        for _ in range(100):
            _, slot = await load_slot(workers.store("tongits"), start.table_id)
            if slot.outcome_published:
                break
            await asyncio.sleep(0.05)
        assert slot.outcome_published, "the stream's copy was never published"
        stored = await stream_messages(
            nc, subjects.RESULTS_STREAM, subjects.hand_result(start.hand_id)
        )
        assert [msgspec.json.decode(m.data)["type"] for m in stored] == ["settle"]
        await asyncio.sleep(0.2)
        assert len(feed.results) == 1  # shown once
        await feed.close()
    finally:
        await peers.stop()
        await workers.stop_all()
        await nc.close()
        own.stop()
