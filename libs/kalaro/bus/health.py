"""A service process's own HTTP port: liveness, readiness (the checks each service
declares: database, Redis, JetStream streams) and Prometheus metrics, plus the JetStream
consumer backlog sampler behind ``kalaro_consumer_pending``."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping

from nats.aio.client import Client as NATS
from prometheus_client import CONTENT_TYPE_LATEST, Gauge, generate_latest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import jetstream, replicas
from kalaro.bus.connection import describe as _describe
from kalaro.bus.redislink import RedisLink
from kalaro.logs import redact
from kalaro.settings import Settings

log = logging.getLogger("kalaro.bus.runner")


#: A readiness check: returns when the dependency answers, raises otherwise.
Check = Callable[[], Awaitable[object]]
_CHECK_TIMEOUT = 2.0


def redis_ready(redis: RedisLink) -> Check:
    async def check() -> None:
        if not await redis.ping():
            raise RuntimeError("PING was not answered PONG")

    return check


def database_ready(engine: AsyncEngine) -> Check:
    async def check() -> None:
        async with engine.connect() as conn:
            await conn.execute(text("SELECT 1"))

    return check


def streams_ready(nc: NATS, names: Iterable[str], settings: Settings | None = None) -> Check:
    """JetStream answers and every stream in ``names`` exists with its replicas (raised
    now if the cluster can hold more; not ready, saying why, if it refuses them)."""
    wanted = tuple(names)
    s = settings if settings is not None else Settings()

    async def check() -> None:
        for name in wanted:
            await replicas.check_replicas(nc, name, s)

    return check


async def readiness(nc: NATS, checks: Mapping[str, Check]) -> tuple[bool, dict[str, str]]:
    """Run every check at once (each bounded to 2 s): whether all passed, and each
    one's result ("ok" or why not)."""

    async def one(check: Check) -> str:
        try:
            await asyncio.wait_for(check(), _CHECK_TIMEOUT)
        except TimeoutError:
            return f"no answer in {_CHECK_TIMEOUT:.0f} s"
        except Exception as exc:
            return redact(_describe(exc))[:300]
        return "ok"

    results = {"nats": "ok" if nc.is_connected else "not connected"}
    names = list(checks)
    for name, result in zip(
        names, await asyncio.gather(*(one(checks[n]) for n in names)), strict=True
    ):
        results[name] = result
    return all(r == "ok" for r in results.values()), results


CONSUMER_PENDING = Gauge(
    "kalaro_consumer_pending",
    "Messages of a JetStream consumer's stream it has not acknowledged yet (not yet "
    "delivered plus delivered and awaiting ack), sampled every 15 s",
    ["stream", "consumer"],
)
_SAMPLE_EVERY = 15.0


async def sample_consumers(nc: NATS, every: float = _SAMPLE_EVERY) -> None:
    """Forever: read the backlog of this process's durable consumers from JetStream."""
    js = nc.jetstream()
    while True:
        for stream, durable in sorted(jetstream.RUNNING):
            try:
                info = await js.consumer_info(stream, durable, timeout=_CHECK_TIMEOUT)
            except Exception as exc:
                log.debug("consumer info %s/%s failed: %s", stream, durable, _describe(exc))
                continue
            backlog = (info.num_pending or 0) + (info.num_ack_pending or 0)
            CONSUMER_PENDING.labels(stream, durable).set(backlog)
        await asyncio.sleep(every)


class HealthServer:
    """The service's own HTTP port (``KALARO_HEALTH_HOST``:``KALARO_HEALTH_PORT``):

    - ``GET /healthz``: liveness, 200 while the process runs and its NATS client has
      not given up for good (a NATS outage is waited out, not cured by a restart);
    - ``GET /readyz``: readiness, 200 when NATS is connected and every check passes
      (database, Redis, JetStream and the service's streams, as the service has
      them), 503 with what failed otherwise, and 503 once draining;
    - ``GET /metrics``: Prometheus.
    """

    def __init__(self, service: str, nc: NATS, checks: Mapping[str, Check] | None = None) -> None:
        self._service = service
        self._nc = nc
        self._checks = dict(checks or {})
        self._server: asyncio.Server | None = None
        self.port = 0
        self.draining = False

    async def start(self, host: str, port: int) -> None:
        self._server = await asyncio.start_server(self._handle, host, port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _answer(self, path: str) -> tuple[int, str, bytes]:
        if path == "/metrics":
            return 200, CONTENT_TYPE_LATEST, generate_latest()
        if path in ("/healthz", "/health"):
            alive = not self._nc.is_closed
            body = {"service": self._service, "nats": self._nc.is_connected, "alive": alive}
            return (200 if alive else 503), "application/json", json.dumps(body).encode()
        if path == "/readyz":
            ready, results = await readiness(self._nc, self._checks)
            if self.draining:
                ready, results["draining"] = False, "stopping"
            body = {"service": self._service, "ready": ready, "checks": results}
            return (200 if ready else 503), "application/json", json.dumps(body).encode()
        return 404, "text/plain", b"not found"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = await asyncio.wait_for(reader.readline(), 5)
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass
            parts = request_line.decode("latin-1").split()
            path = parts[1].split("?", 1)[0] if len(parts) > 1 else "/"
            status, ctype, body = await self._answer(path)
            writer.write(
                f"HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except Exception:
            log.debug("health request failed", exc_info=True)
        finally:
            writer.close()
