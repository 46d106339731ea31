"""``python -m services.history`` as deployed: at start it copies the hand records
still in Redis into SQL (progress in its log), ingests from RECORDS, answers /healthz
and /readyz (database, Redis, JetStream) and exposes its consumer's backlog."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from pathlib import Path

import httpx
from nats.aio.client import Client as NATS
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus.redislink import RedisLink
from kalaro.devstack import NatsServer, RedisServer, free_port
from kalaro.sql import create_engine
from services.engine.slots import SlotStore
from tests.integration.history.history_helpers import (
    counts,
    eventually,
    publish,
    stop_history,
    stored,
)

REPO = Path(__file__).resolve().parents[3]


async def test_the_service_imports_redis_ingests_and_reports_its_health(
    nc: NATS,
    nats_server: NatsServer,
    redis_server: RedisServer,
    redis: RedisLink,
    names: dict[str, str],
    tmp_path: Path,
    unique: str,
) -> None:
    slots = SlotStore(redis, "tongits")  # the engines' own keys, no namespace
    for n in range(3):
        await slots.save_record(stored(unique, n).record, 1_000_000 + n)
    port = free_port()
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'history.db'}"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "libs"), str(REPO)]),
        "KALARO_NATS_URL": nats_server.url,
        "KALARO_REDIS_URL": redis_server.url,
        "KALARO_DATABASE_URL": database_url,
        "KALARO_HEALTH_PORT": str(port),
        "KALARO_HEALTH_HOST": "127.0.0.1",
    }
    log = tmp_path / "history.log"
    with log.open("wb") as out:
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "services.history", env=env, stdout=out, stderr=out
        )
    engine = create_engine(database_url)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as http:

            async def ready() -> bool:
                with contextlib.suppress(httpx.TransportError):
                    return (await http.get("/readyz")).status_code == 200
                return False

            await eventually(ready, timeout=60)
            body = (await http.get("/readyz")).json()
            assert body["checks"] == {
                "nats": "ok", "database": "ok", "redis": "ok", "jetstream": "ok"
            }  # fmt: skip
            await eventually(lambda: _has(engine, unique, 3), timeout=30)
            await publish(nc, stored(unique, 3))
            await eventually(lambda: _has(engine, unique, 4), timeout=30)
            assert (await http.get("/healthz")).status_code == 200
            deadline = time.monotonic() + 40  # the backlog is sampled every 15 s
            gauge = 'kalaro_consumer_pending{consumer="history-records",stream="RECORDS"}'
            while gauge not in (await http.get("/metrics")).text:
                assert time.monotonic() < deadline, "no consumer backlog gauge"
                await asyncio.sleep(0.5)
    finally:
        await stop_history(child, nc)
        await engine.dispose()
    text = log.read_text(errors="replace")
    assert "Redis import done" in text, text[-3000:]
    assert child.returncode == 0, text[-3000:]
    for n in range(3):
        ttl = await redis.execute("PTTL", f"handrecord:{unique}.{n}")
        assert 0 < ttl <= 3600 * 1000


async def _has(engine: AsyncEngine, unique: str, count: int) -> bool:
    return (await counts(engine, unique))[0] == count
