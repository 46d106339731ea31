"""kill -9 of a history process in the middle of a batch: inside its SQL transaction
(nothing committed, nothing acked) or between the commit and the acks. A healthy
consumer on the same durable then stores every hand, each exactly once."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from nats.aio.client import Client as NATS
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus.jetstream import ACK_WAIT_SECONDS
from kalaro.bus.redislink import RedisLink
from kalaro.devstack import NatsServer
from kalaro.proto import subjects
from kalaro.settings import Settings
from services.history.service import start_consumer
from tests.integration.history.history_helpers import counts, eventually, publish, stored

REPO = Path(__file__).resolve().parents[3]

_DIES_IN_A_BATCH = textwrap.dedent(
    """
    import asyncio, os, signal, sys

    from kalaro.bus.runner import connect
    from kalaro.settings import load_settings
    from kalaro.sql import create_engine
    from services.history import service, store
    from services.history.schema import hands

    nats_url, database_url, durable, subject, when = sys.argv[1:6]
    commit = store.store_hands

    async def die_in_a_batch(engine, batch):
        if when == "after":
            await commit(engine, batch)
            print(f"committed {len(batch)}", flush=True)
        else:
            hand_rows, _ = store.rows_of(batch)
            async with engine.begin() as conn:
                await conn.execute(hands.insert(), hand_rows)
                print(f"inserted {len(batch)} uncommitted", flush=True)
                os.kill(os.getpid(), signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)

    store.store_hands = die_in_a_batch

    async def main():
        nc = await connect(nats_url, "history-doomed")
        engine = create_engine(database_url)
        settings = load_settings({}, database_url=database_url)
        await service.start_consumer(nc, engine, settings, None, durable=durable, subject=subject)
        await asyncio.sleep(60)

    asyncio.run(main())
    """
)


async def _drained(nc: NATS, durable: str) -> bool:
    info = await nc.jetstream().consumer_info(subjects.RECORDS_STREAM, durable)
    return bool(info.num_pending == 0 and info.num_ack_pending == 0)


@pytest.mark.parametrize("when", ["inside", "after"])
async def test_a_kill_mid_batch_loses_and_duplicates_nothing(
    nc: NATS,
    nats_server: NatsServer,
    engine: AsyncEngine,
    database_url: str,
    settings: Settings,
    redis: RedisLink,
    names: dict[str, str],
    unique: str,
    when: str,
) -> None:
    count = 5
    for n in range(count):
        await publish(nc, stored(unique, n))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "libs"), str(REPO)])}
    args = [nats_server.url, database_url, names["durable"], names["subject"], when]
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _DIES_IN_A_BATCH,
        *args,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(child.communicate(), 60)
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
    assert child.returncode == -signal.SIGKILL, err.decode()[-2000:]
    assert out.decode().strip(), err.decode()[-2000:]  # it died inside a batch
    stored_before = (await counts(engine, unique))[0]
    assert stored_before == (count if when == "after" else 0)
    info = await nc.jetstream().consumer_info(subjects.RECORDS_STREAM, names["durable"])
    assert info.num_ack_pending + info.num_pending == count  # nothing was acked

    consumer = await start_consumer(
        nc, engine, settings, redis, durable=names["durable"], subject=names["subject"]
    )
    try:
        await eventually(lambda: _drained(nc, names["durable"]), timeout=ACK_WAIT_SECONDS + 20)
    finally:
        await consumer.stop()
    assert await counts(engine, unique) == (count, 2 * count)
