"""SQL unreachable under a running ``python -m services.history``: /readyz names the
database (and only it), ingest acknowledges nothing while it retries, and once the
database answers again every hand arrives. The fault is real: the service reaches
PostgreSQL through a TCP relay this test cuts (connections reset, port closed)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path

import httpx
import pytest
from nats.aio.client import Client as NATS
from sqlalchemy import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.devstack import NatsServer, RedisServer, free_port
from kalaro.proto import subjects
from kalaro.sql import create_engine
from tests.integration.history.history_helpers import (
    counts,
    eventually,
    publish,
    stop_history,
    stored,
)

REPO = Path(__file__).resolve().parents[3]


class Relay:
    """A TCP relay to one address that can be cut (every connection reset, nothing
    listening: what a database host going away looks like) and opened again."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.listen_port = free_port()
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    async def open(self) -> None:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", self.listen_port)

    async def cut(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for writer in list(self._open):
            writer.transport.abort()
        await self._server.wait_closed()
        self._server = None

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.port)
        except OSError:
            writer.transport.abort()
            return
        self._open |= {writer, up_writer}

        async def pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, OSError):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            sink.transport.abort()

        await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))
        self._open -= {writer, up_writer}


async def _consumer(nc: NATS) -> tuple[int, int, int]:
    """(not yet delivered, delivered and not acked, acked up to stream seq)."""
    info = await nc.jetstream().consumer_info(
        subjects.RECORDS_STREAM, subjects.HISTORY_RECORDS_CONSUMER
    )
    return info.num_pending, info.num_ack_pending, info.ack_floor.stream_seq


@pytest.mark.parametrize(
    "database_url", [pytest.param("postgresql", marks=pytest.mark.postgres)], indirect=True
)
async def test_sql_unreachable_readyz_names_the_database_and_nothing_is_acked(
    nc: NATS,
    nats_server: NatsServer,
    redis_server: RedisServer,
    database_url: str,
    tmp_path: Path,
    unique: str,
) -> None:
    direct = make_url(database_url)
    relay = Relay(direct.host or "127.0.0.1", direct.port or 5432)
    await relay.open()
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "libs"), str(REPO)]),
        "KALARO_NATS_URL": nats_server.url,
        "KALARO_REDIS_URL": redis_server.url,
        "KALARO_DATABASE_URL": direct.set(
            host="127.0.0.1", port=relay.listen_port
        ).render_as_string(hide_password=False),
        "KALARO_HEALTH_PORT": str(port),
        "KALARO_HEALTH_HOST": "127.0.0.1",
    }
    log = tmp_path / "history.log"
    with log.open("wb") as out:
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "services.history", env=env, stdout=out, stderr=out
        )
    engine = create_engine(database_url)  # the test's own way in, not through the relay
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:

            async def checks() -> dict[str, str] | None:
                with contextlib.suppress(httpx.TransportError):
                    found: dict[str, str] = (await http.get("/readyz")).json()["checks"]
                    return found
                return None

            async def all_ok() -> bool:
                found = await checks()
                return found is not None and set(found.values()) == {"ok"}

            async def database_down() -> bool:
                found = await checks()
                return found is not None and found["database"] != "ok"

            await eventually(all_ok, timeout=60)
            await publish(nc, stored(unique, 0))
            await eventually(lambda: _stored(engine, unique, 1), timeout=30)
            await eventually(lambda: _drained(nc), timeout=30)

            await relay.cut()
            await eventually(database_down, timeout=30)
            for n in range(1, 4):
                await publish(nc, stored(unique, n))
            seq = (await nc.jetstream().stream_info(subjects.RECORDS_STREAM)).state.last_seq
            await eventually(lambda: _redelivered(nc), timeout=30)  # tried, failed, again
            pending, unacked, acked_to = await _consumer(nc)
            assert pending + unacked == 3 and acked_to <= seq - 3, "acked while SQL was away"
            found = await checks()
            assert found is not None
            assert "Connection refused" in found["database"], found  # why, said
            assert {k: v for k, v in found.items() if k != "database"} == {
                "nats": "ok", "redis": "ok", "jetstream": "ok"
            }  # fmt: skip
            assert (await http.get("/readyz")).status_code == 503
            assert await counts(engine, unique) == (1, 2)

            await relay.open()
            await eventually(lambda: _stored(engine, unique, 4), timeout=60)
            await eventually(lambda: _drained(nc), timeout=30)
            await eventually(all_ok, timeout=30)
        assert await counts(engine, unique) == (4, 8)  # each hand once
    finally:
        await stop_history(child, nc)
        await relay.cut()
        await engine.dispose()
    text = log.read_text(errors="replace")
    assert "failed" in text and "again in" in text, text[-3000:]  # the retries, logged


async def _stored(engine: AsyncEngine, unique: str, count: int) -> bool:
    return (await counts(engine, unique))[0] == count


async def _drained(nc: NATS) -> bool:
    pending, unacked, _ = await _consumer(nc)
    return pending == 0 and unacked == 0


async def _redelivered(nc: NATS) -> bool:
    info = await nc.jetstream().consumer_info(
        subjects.RECORDS_STREAM, subjects.HISTORY_RECORDS_CONSUMER
    )
    return bool(info.num_redelivered)
