"""Stream replicas follow the cluster when ``KALARO_STREAM_REPLICAS`` is not set.

On a real 3-node cluster started for this module, with no setting: the streams are
R3, an existing R1 stream is raised to R3, and killing the RESULTS leader's node (and
wiping its disk) loses no settlement. Replicas the cluster cannot hold are refused
loudly and ``/readyz``'s check says why; a later check raises what it can.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from nats.aio.client import Client as NATS
from nats.js.api import AckPolicy, ConsumerConfig, StreamConfig
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import replicas, streams
from kalaro.bus.jetstream import ensure_stream, publish_once
from kalaro.bus.runner import connect, readiness, streams_ready
from kalaro.devstack import NatsCluster, NatsServer
from kalaro.proto import subjects
from kalaro.proto.wallet import HoldRequest, Payment, SettleHand
from kalaro.settings import Settings, load_settings
from kalaro.sql import create_engine
from services.wallet import ledger
from services.wallet.bootstrap import build_service
from services.wallet.handlers import wallet_deps
from services.wallet.schema import migrate_wallet, transactions
from services.wallet.service import ensure_streams, start_consumers, stop_consumers
from tests.integration.bus.test_stream_replicas import _wait_for_replicas
from tests.integration.wallet.wallet_helpers import WELCOME, Wallet

NO_SETTING: dict[str, str] = {}  # what an operator who never heard of replicas sets


@pytest.fixture
async def cnc(nats_cluster: NatsCluster) -> AsyncIterator[NATS]:
    client = await connect(nats_cluster.url, "test-derived-replicas")
    yield client
    await client.close()


async def _eventually(check: Callable[[], Awaitable[bool]], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, f"condition not met within {timeout} s"
        await asyncio.sleep(0.1)


async def test_one_server_keeps_one_copy(nats_server: NatsServer, unique: str) -> None:
    nc = await connect(nats_server.url, "test-derived-one")
    try:
        target = await replicas.replicas_target(nc, load_settings(NO_SETTING))
        assert (target.replicas, target.derived) == (1, True)
        info = await ensure_stream(
            nc.jetstream(), f"ONE_{unique}", [f"one.{unique}.>"], settings=load_settings({})
        )
        assert info.config.num_replicas == 1
    finally:
        await nc.close()


async def test_with_no_setting_the_streams_are_r3_and_say_so(
    cnc: NATS, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="kalaro.bus.jetstream")
    settings = load_settings(NO_SETTING)
    assert settings.stream_replicas == 0
    await ensure_streams(cnc.jetstream(), settings)
    for name in (subjects.RESULTS_STREAM, subjects.EVENTS_STREAM):
        info = await cnc.jetstream().stream_info(name)
        assert info.config.num_replicas == 3, name
        said = [m for r in caplog.records if (m := r.getMessage()).startswith(f"stream {name}:")]
        assert any("3 replicas (target 3 from a 3-node NATS cluster" in m for m in said), said
        await _wait_for_replicas(cnc, name, 3)


async def test_an_existing_one_copy_stream_is_raised_to_three(
    cnc: NATS, unique: str, caplog: pytest.LogCaptureFixture
) -> None:
    js = cnc.jetstream()
    name, subject = f"OLD_{unique}", f"old.{unique}.>"
    await js.add_stream(StreamConfig(name=name, subjects=[subject], num_replicas=1))
    # A durable consumer made before (the wallet's): its position is kept on the stream's
    # nodes too once the stream has three.
    await js.add_consumer(
        name, ConsumerConfig(durable_name="reader", ack_policy=AckPolicy.EXPLICIT)
    )
    caplog.set_level(logging.INFO, logger="kalaro.bus.jetstream")
    info = await ensure_stream(js, name, [subject], settings=load_settings(NO_SETTING))
    assert info.config.num_replicas == 3
    assert any("num_replicas 1 -> 3" in r.getMessage() for r in caplog.records)
    await _wait_for_replicas(cnc, name, 3)

    async def consumer_on_three() -> bool:
        cluster = (await js.consumer_info(name, "reader")).cluster
        return cluster is not None and len(cluster.replicas or []) == 2

    await _eventually(consumer_on_three, timeout=20)


async def test_a_readiness_check_raises_a_stream_the_cluster_can_hold(
    cnc: NATS, unique: str
) -> None:
    js = cnc.jetstream()
    name = f"LATE_{unique}"
    # Made while the cluster looked smaller (say, created while two nodes were down).
    await js.add_stream(StreamConfig(name=name, subjects=[f"late.{unique}.>"], num_replicas=1))
    checks = {"jetstream": streams_ready(cnc, [name], load_settings(NO_SETTING))}

    async def ready() -> bool:
        # Probed again and again, as a kubelet does: a cluster that has just formed may
        # refuse R3 for a moment ("no suitable peers"), then grants it.
        return (await readiness(cnc, checks))[0]

    await _eventually(ready, timeout=20)
    assert (await js.stream_info(name)).config.num_replicas == 3


async def test_replicas_the_cluster_cannot_hold_are_refused_loudly_and_not_ready(
    cnc: NATS, unique: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Five copies on three nodes: the server refuses them whatever we do (a derived
    # count meets the same refusal on a cluster smaller than it looks).
    five = load_settings({"KALARO_STREAM_REPLICAS": "5"})
    monkeypatch.setattr(streams, "PLACEMENT_PATIENCE_SECONDS", 0.3)
    caplog.set_level(logging.INFO, logger="kalaro.bus.jetstream")
    js = cnc.jetstream()

    # A new stream is created with as many copies as the cluster places.
    new = f"NEW_{unique}"
    info = await ensure_stream(js, new, [f"new.{unique}.>"], settings=five)
    assert info.config.num_replicas == 3
    # An existing one keeps its copies, and still gets its other limits.
    old = f"KEPT_{unique}"
    await js.add_stream(StreamConfig(name=old, subjects=[f"kept.{unique}.>"], num_replicas=1))
    info = await ensure_stream(js, old, [f"kept.{unique}.>"], settings=five)
    assert info.config.num_replicas == 1
    assert info.config.max_bytes == five.results_stream_max_bytes

    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any(f"stream {new}: {new} has 3 of 5 replicas" in m for m in errors), errors
    assert any(f"stream {old}: {old} has 1 of 5 replicas" in m for m in errors), errors
    ready, results = await readiness(cnc, {"jetstream": streams_ready(cnc, [new, old], five)})
    assert not ready
    assert f"{new} has 3 of 5 replicas" in results["jetstream"], results
    assert "no suitable peers" in results["jetstream"], results
    assert replicas.SHORTFALL.keys() >= {new, old}


async def _settled(engine: AsyncEngine, hands: list[str]) -> list[int]:
    async with engine.connect() as conn:
        return [
            await conn.scalar(
                select(func.count()).where(transactions.c.idempotency_key == f"outcome:{hand}")
            )
            or 0
            for hand in hands
        ]


async def test_killing_the_results_leaders_node_loses_no_settlement(
    nats_cluster: NatsCluster, cnc: NATS, unique: str, tmp_path: Path
) -> None:
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'wallet.db'}"
    settings: Settings = load_settings(NO_SETTING, database_url=database_url, welcome_grant=WELCOME)
    engine = create_engine(database_url)
    await migrate_wallet(engine)
    service = build_service(wallet_deps(engine, settings))
    await service.start(cnc)
    wallet = Wallet(cnc, engine)
    js = cnc.jetstream()
    leader_node = None
    try:
        await ensure_streams(js, settings)
        await _wait_for_replicas(cnc, subjects.RESULTS_STREAM, 3)
        # The wallet's consumers exist (as in production) but are not running: every
        # settlement waits in the stream when the node dies.
        await stop_consumers(await start_consumers(cnc, engine, settings))

        players = [f"{unique}-p{i}" for i in range(3)]
        for player in players:
            await wallet.fund(player, 1000)
        hands = [f"{unique}.{n}" for n in range(12)]
        for n, hand in enumerate(hands):
            await ledger.place_holds(
                engine,
                f"{unique}-t",
                hand,
                tuple(HoldRequest(user_id=p, amount=50) for p in players),
            )
            winner = n % 3
            payments = tuple(
                Payment(user_id=p, amount=20 if i == winner else -10) for i, p in enumerate(players)
            )
            # Acknowledged: JetStream has it on a quorum of the three nodes.
            await publish_once(
                js, subjects.hand_result(hand), SettleHand(hand_id=hand, payments=payments), hand
            )

        info = await js.stream_info(subjects.RESULTS_STREAM)
        assert info.cluster is not None and info.cluster.leader
        [leader_node] = [n for n in nats_cluster.nodes if n.server_name == info.cluster.leader]
        leader_node.kill()  # kill -9
        leader_node.wipe()  # and its disk is gone too

        # With a node down the cluster looks smaller: the streams are not shrunk for it.
        async def looks_smaller() -> bool:
            target = await replicas.replicas_target(cnc, settings)
            return (target.replicas, target.derived) == (2, True)

        await _eventually(looks_smaller, timeout=10)  # once the routes see it gone
        info = await ensure_stream(js, subjects.RESULTS_STREAM, settings=settings)
        assert info.config.num_replicas == 3

        consumers = await start_consumers(cnc, engine, settings)
        try:
            await _eventually(lambda: _all_once(engine, hands))
        finally:
            await stop_consumers(consumers)
        # Each player won four hands (+20) and lost eight (-10); no hold is left.
        for player in players:
            balance = await wallet.balance(player)
            assert (balance.balance, balance.held) == (1000 + 4 * 20 - 8 * 10, 0)
        await wallet.assert_books_balance()
    finally:
        await service.stop()
        await engine.dispose()
        if leader_node is not None:
            leader_node.start()  # empty: it catches up from the other two
            await _wait_for_replicas(cnc, subjects.RESULTS_STREAM, 3, timeout=30)


async def _all_once(engine: AsyncEngine, hands: list[str]) -> bool:
    counts = await _settled(engine, hands)
    assert max(counts) <= 1, counts  # never twice
    return counts == [1] * len(hands)
