"""``python -m services.ranked`` as deployed: migrates its tables (Alembic, version in
``ranked_alembic_version``), reports ready (database, Redis, JetStream), rates a ranked
hand from the RECORDS stream within seconds, and after a restart (SIGTERM, start
again) a repeat of that record changes nothing."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

import httpx
from nats.aio.client import Client as NATS
from nats.js.errors import NotFoundError
from sqlalchemy import text

from kalaro.bus import request as bus_request
from kalaro.bus.jetstream import ensure_stream, publish_once
from kalaro.devstack import NatsServer, RedisServer, free_port
from kalaro.proto import endpoints, subjects
from kalaro.proto import ranked as rk
from kalaro.proto.history import StoredHand
from kalaro.sql import create_engine
from tests.integration.ranked.ranked_helpers import eventually, ranked_record

REPO = Path(__file__).resolve().parents[3]


async def _start(env: dict[str, str], log: Path) -> asyncio.subprocess.Process:
    with log.open("ab") as out:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "services.ranked", env=env, stdout=out, stderr=out
        )


async def _stop(child: asyncio.subprocess.Process) -> None:
    child.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(child.wait(), 30) == 0


async def test_the_service_rates_a_hand_once_across_a_restart(
    nc: NATS, nats_server: NatsServer, redis_server: RedisServer, tmp_path: Path, unique: str
) -> None:
    port = free_port()
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'ranked.db'}"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "libs"), str(REPO)]),
        "KALARO_NATS_URL": nats_server.url,
        "KALARO_REDIS_URL": redis_server.url,
        "KALARO_DATABASE_URL": database_url,
        "KALARO_HEALTH_PORT": str(port),
        "KALARO_HEALTH_HOST": "127.0.0.1",
    }
    log = tmp_path / "ranked.log"
    players = (f"{unique}a", f"{unique}b", f"{unique}c")
    record = ranked_record(f"{unique}.1", players, (20, -10, -10))
    message = StoredHand(record=record, finished_ms=1, practice=False)
    await ensure_stream(nc.jetstream(), subjects.RECORDS_STREAM)

    async def hands() -> int:
        got = await bus_request(nc, endpoints.RANKED_RATINGS, rk.GetRatings(user_id=players[0]))
        return next(g.hands for g in got.games if g.game == "tongits")

    async def rated() -> bool:
        return await hands() == 1

    child = await _start(env, log)
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
            js = nc.jetstream()
            await publish_once(js, subjects.hand_record(record.hand_id), message, record.hand_id)
            assert await eventually(rated, timeout=10) < 5.0
            await _stop(child)
            # While it is down the record comes again (another message id); a new process
            # resumes the durable consumer and finds the hand already rated.
            await publish_once(js, subjects.hand_record(record.hand_id), message, f"again-{unique}")
            child = await _start(env, log)
            await eventually(ready, timeout=60)

            async def drained() -> bool:
                info = await js.consumer_info(
                    subjects.RECORDS_STREAM, subjects.RANKED_RECORDS_CONSUMER
                )
                return bool(info.num_pending == 0 and info.num_ack_pending == 0)

            await eventually(drained, timeout=20)
            assert await hands() == 1
        engine = create_engine(database_url)
        async with engine.connect() as conn:
            version = await conn.scalar(text("SELECT version_num FROM ranked_alembic_version"))
        await engine.dispose()
        assert version == "0001"
    finally:
        if child.returncode is None:
            await _stop(child)
        with contextlib.suppress(NotFoundError):
            await nc.jetstream().delete_consumer(
                subjects.RECORDS_STREAM, subjects.RANKED_RECORDS_CONSUMER
            )
        print(log.read_text()[-3000:])
