"""Replicated, bounded JetStream streams on a real 3-node NATS cluster.

``ensure_stream`` creates the declared streams with ``KALARO_STREAM_REPLICAS`` copies
and their age/size limits, brings an older stream (one copy, no limits) up to them,
and a client given every node's URL keeps publishing when its node is killed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator

import nats.js.errors
import pytest
from nats.aio.client import Client as NATS
from nats.js.api import StorageType, StreamConfig

from kalaro.bus.jetstream import DUPLICATE_WINDOW_SECONDS, ensure_stream, publish_once
from kalaro.bus.runner import connect
from kalaro.devstack import NatsCluster
from kalaro.proto import subjects
from kalaro.settings import Settings, load_settings

DAY = 86400.0


@pytest.fixture
async def cnc(nats_cluster: NatsCluster) -> AsyncIterator[NATS]:
    client = await connect(nats_cluster.url, "test-streams")
    yield client
    await client.close()


def r3_settings() -> Settings:
    return load_settings(
        {
            "KALARO_STREAM_REPLICAS": "3",
            "KALARO_RESULTS_STREAM_MAX_AGE_DAYS": "7",
            "KALARO_RESULTS_STREAM_MAX_BYTES": str(1024**3),
            "KALARO_EVENTS_STREAM_MAX_AGE_DAYS": "3",
            "KALARO_EVENTS_STREAM_MAX_BYTES": str(256 * 1024**2),
        }
    )


async def _wait_for_replicas(nc: NATS, stream: str, count: int, timeout: float = 20.0) -> None:
    """Until the stream's leader reports ``count - 1`` current followers."""
    js = nc.jetstream()
    deadline = time.monotonic() + timeout
    while True:
        info = await js.stream_info(stream)
        replicas = info.cluster.replicas if info.cluster and info.cluster.replicas else []
        leader = info.cluster.leader if info.cluster else None
        if leader and len(replicas) == count - 1 and all(r.current for r in replicas):
            return
        assert time.monotonic() < deadline, f"{stream}: replicas {info.cluster}"
        await asyncio.sleep(0.1)


async def test_ensure_stream_creates_three_replicas_with_the_limits(
    nats_cluster: NatsCluster, cnc: NATS
) -> None:
    js = cnc.jetstream()
    settings = r3_settings()
    # Every replica of every service ensures the stream at start: all at once here.
    others = [await connect(nats_cluster.url, f"replica-{i}") for i in range(2)]
    try:
        infos = await asyncio.gather(
            *(
                ensure_stream(c.jetstream(), subjects.RESULTS_STREAM, settings=settings)
                for c in [cnc, *others]
            )
        )
    finally:
        for other in others:
            await other.close()
    assert all(info.config.num_replicas == 3 for info in infos)
    info = await js.stream_info(subjects.RESULTS_STREAM)
    config = info.config
    assert config.num_replicas == 3
    assert config.max_age == pytest.approx(7 * DAY)
    assert config.max_bytes == 1024**3
    assert config.storage == StorageType.FILE
    assert config.duplicate_window == pytest.approx(DUPLICATE_WINDOW_SECONDS)
    assert config.subjects == [subjects.RESULTS_SUBJECTS]
    await _wait_for_replicas(cnc, subjects.RESULTS_STREAM, 3)


async def test_a_one_replica_unbounded_stream_is_brought_up_to_the_declaration(
    cnc: NATS, caplog: pytest.LogCaptureFixture
) -> None:
    js = cnc.jetstream()
    # What every earlier version created: one copy, kept forever.
    await js.add_stream(
        StreamConfig(
            name=subjects.EVENTS_STREAM,
            subjects=[subjects.EVENTS_SUBJECTS],
            duplicate_window=3600.0,
        )
    )
    # A new stream on a cluster answers only once its leader is elected and the subject's
    # interest has reached our node (NATS 2.15 takes a moment longer than 2.9 did).
    deadline = time.monotonic() + 15
    while True:
        try:
            await publish_once(js, subjects.USER_REGISTERED, {"user_id": "u1"}, "u1")
            break
        except nats.js.errors.NoStreamResponseError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)
    before = await js.stream_info(subjects.EVENTS_STREAM)
    assert before.config.num_replicas == 1 and before.config.max_bytes == -1

    caplog.set_level(logging.INFO, logger="kalaro.bus.jetstream")
    await ensure_stream(js, subjects.EVENTS_STREAM, settings=r3_settings())
    after = await js.stream_info(subjects.EVENTS_STREAM)
    assert after.config.num_replicas == 3
    assert after.config.max_age == pytest.approx(3 * DAY)
    assert after.config.max_bytes == 256 * 1024**2
    assert after.config.duplicate_window == pytest.approx(DUPLICATE_WINDOW_SECONDS)
    assert after.state.messages == 1  # nothing lost on the way
    updates = [r.getMessage() for r in caplog.records if "updated" in r.getMessage()]
    assert len(updates) == 1, updates
    assert "num_replicas 1 -> 3" in updates[0] and "max_bytes -1 -> 268435456" in updates[0]
    await _wait_for_replicas(cnc, subjects.EVENTS_STREAM, 3)

    # Ensuring it again changes nothing and says nothing.
    caplog.clear()
    await ensure_stream(js, subjects.EVENTS_STREAM, settings=r3_settings())
    assert not [r for r in caplog.records if "updated" in r.getMessage()]


async def _publish_acked(nc: NATS, subject: str, msg_id: str, timeout: float = 20.0) -> None:
    """Publish until JetStream acknowledges (what a publisher that must not lose does)."""
    js = nc.jetstream()
    deadline = time.monotonic() + timeout
    while True:
        try:
            await publish_once(js, subject, {"hand": msg_id}, msg_id)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


async def test_a_client_with_every_url_keeps_publishing_when_its_node_is_killed(
    nats_cluster: NatsCluster, cnc: NATS
) -> None:
    js = cnc.jetstream()
    await ensure_stream(js, subjects.RESULTS_STREAM, settings=r3_settings())
    await _wait_for_replicas(cnc, subjects.RESULTS_STREAM, 3)
    await _publish_acked(cnc, subjects.hand_result("before"), "before", timeout=5)
    start = (await js.stream_info(subjects.RESULTS_STREAM)).state.messages

    assert cnc.connected_url is not None
    port = cnc.connected_url.port
    [node] = [n for n in nats_cluster.nodes if n.port == port]
    node.kill()
    try:
        for i in range(5):
            await _publish_acked(cnc, subjects.hand_result(f"after-{i}"), f"after-{i}")
        assert cnc.connected_url is not None and cnc.connected_url.port != port
        info = await js.stream_info(subjects.RESULTS_STREAM)
        assert info.state.messages == start + 5
    finally:
        node.start()
