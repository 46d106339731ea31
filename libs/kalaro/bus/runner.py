"""Run a service process: connect, serve, expose health and metrics, drain on SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import signal
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import nats
from nats.aio.client import Client as NATS
from prometheus_client import CONTENT_TYPE_LATEST, Histogram, generate_latest

from kalaro.bus.service import Service

log = logging.getLogger("kalaro.bus.runner")


LOOP_LAG = Histogram(
    "kalaro_event_loop_lag_seconds",
    "How late the event loop runs a timer: time it spent blocked",
    buckets=(0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0),
)
# A 10 ms tick cost every process 1.2% of a core even when idle (~10% of a core for the
# whole stack); blocks of 50 ms and more are still seen at 100 ms.
_LAG_TICK = 0.1
_LAG_WARN = 0.05

GC_PAUSE = Histogram(
    "kalaro_gc_pause_seconds",
    "Time the process spent in one garbage collection (every request waits that long)",
    ["generation"],
    buckets=(0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0),
)
GC_YOUNG_THRESHOLD = 20_000
_gc_started = 0.0


def tune_gc(young: int = GC_YOUNG_THRESHOLD) -> None:
    """A larger nursery, so objects that live for one request die young; time every pass.

    With CPython's default thresholds (700, 10, 10) an object that lives a few
    milliseconds (a move waiting on Redis, a frame in an outbox) is promoted to the
    oldest generation, which fills up and sets off full collections that walk every
    socket's objects: 50-240 ms pauses in the gateway and the engine at 500 bench
    tables. With a 20,000-object nursery the full collections all but stopped (gateway:
    5 in a 70 s run before, none after; engine: 14 before, 1 after).
    """
    if young > 0:
        # The middle generation stays small (5 nurseries): a burst of new sockets made
        # 150 ms middle-generation passes when it could hold 20.
        gc.set_threshold(young, 5, 10)
    if _record_gc not in gc.callbacks:
        gc.callbacks.append(_record_gc)


def _record_gc(phase: str, info: dict[str, int]) -> None:
    global _gc_started
    now = time.perf_counter()
    if phase == "start":
        _gc_started = now
        return
    pause = now - _gc_started
    GC_PAUSE.labels(str(info["generation"])).observe(pause)
    if pause > _LAG_WARN:
        log.warning(
            "garbage collection (generation %d) took %.0f ms", info["generation"], pause * 1000
        )


async def watch_event_loop(name: str) -> None:
    """Measure how long the loop is blocked (every request waits that long); warn on 50 ms."""
    loop = asyncio.get_running_loop()
    while True:
        started = loop.time()
        await asyncio.sleep(_LAG_TICK)
        lag = loop.time() - started - _LAG_TICK
        LOOP_LAG.observe(max(0.0, lag))
        if lag > _LAG_WARN:
            log.warning("%s: event loop blocked for %.0f ms", name, lag * 1000)


def run_until_stopped(main: Coroutine[Any, Any, None]) -> None:
    """Run a service's main coroutine on uvloop when it is installed (a faster event loop
    for the socket-heavy work every service does), else on asyncio's own."""
    tune_gc()
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
    else:
        uvloop.run(main)


async def connect(url: str, name: str) -> NATS:
    """Connect to NATS, retrying forever on reconnect (services outlive blips)."""
    return await nats.connect(url, name=name, max_reconnect_attempts=-1, reconnect_time_wait=0.5)


class HealthServer:
    """``GET /healthz`` (JSON, 200 when NATS is connected) and ``GET /metrics``."""

    def __init__(self, service: str, nc: NATS) -> None:
        self._service = service
        self._nc = nc
        self._server: asyncio.Server | None = None
        self.port = 0

    async def start(self, host: str, port: int) -> None:
        self._server = await asyncio.start_server(self._handle, host, port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = await asyncio.wait_for(reader.readline(), 5)
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass
            parts = request_line.decode("latin-1").split()
            path = parts[1] if len(parts) > 1 else "/"
            if path == "/metrics":
                status, ctype, body = 200, CONTENT_TYPE_LATEST, generate_latest()
            elif path in ("/healthz", "/health"):
                ok = self._nc.is_connected
                body = json.dumps({"service": self._service, "nats": ok}).encode()
                status, ctype = (200 if ok else 503), "application/json"
            else:
                status, ctype, body = 404, "text/plain", b"not found"
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


async def serve(
    service: Service,
    nc: NATS,
    *,
    health_port: int = -1,
    on_start: Callable[[], Awaitable[None]] | None = None,
    on_stop: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Serve until SIGTERM/SIGINT, then drain: stop taking requests, finish, close."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    health = HealthServer(service.name, nc)
    if health_port >= 0:
        await health.start("127.0.0.1", health_port)
        log.info("%s health and metrics on http://127.0.0.1:%d/healthz", service.name, health.port)
    await service.start(nc)
    watcher = asyncio.create_task(watch_event_loop(service.name))
    if on_start is not None:
        await on_start()
    log.info("%s ready", service.name)
    await stop.wait()
    log.info("%s draining", service.name)
    watcher.cancel()
    await service.stop()
    if on_stop is not None:
        await on_stop()
    await health.stop()
    with contextlib.suppress(Exception):
        await nc.drain()
    log.info("%s stopped", service.name)
