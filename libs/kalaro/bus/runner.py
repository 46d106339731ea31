"""Run a service process: connect, serve, expose health and metrics, drain on SIGTERM.

The parts live by responsibility: the NATS connection and its reconnect logging in
:mod:`kalaro.bus.connection`, the health/readiness/metrics port in
:mod:`kalaro.bus.health`, and here the serve loop, the event-loop and GC watchers, and
:func:`run_service` / :func:`service_main`, every service's ``__main__``. Their names
are re-exported here, where services have always imported them.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any

from nats.aio.client import Client as NATS
from prometheus_client import Histogram

from kalaro.bus.connection import ConnectionLog, connect
from kalaro.bus.health import (
    CONSUMER_PENDING,
    Check,
    HealthServer,
    database_ready,
    readiness,
    redis_ready,
    sample_consumers,
    streams_ready,
)
from kalaro.bus.service import Service
from kalaro.logs import setup as setup_logs
from kalaro.settings import Settings, load_settings, production_problem

log = logging.getLogger("kalaro.bus.runner")

__all__ = [
    "CONSUMER_PENDING",
    "Bootstrap",
    "Check",
    "ConnectionLog",
    "HealthServer",
    "Running",
    "checked_settings",
    "connect",
    "database_ready",
    "readiness",
    "redis_ready",
    "run_service",
    "run_until_stopped",
    "sample_consumers",
    "serve",
    "service_main",
    "streams_ready",
    "tune_gc",
    "watch_event_loop",
]


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


async def serve(
    service: Service,
    nc: NATS,
    *,
    health_port: int = -1,
    health_host: str = "127.0.0.1",
    checks: Mapping[str, Check] | None = None,
    on_start: Callable[[], Awaitable[None]] | None = None,
    on_stop: Callable[[], Awaitable[None]] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve until SIGTERM/SIGINT (or ``stop`` is set), then drain: stop taking
    requests, finish, close. ``checks`` are the readiness checks of ``/readyz``."""
    stop = stop if stop is not None else asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    health = HealthServer(service.name, nc, checks)
    if health_port >= 0:
        await health.start(health_host, health_port)
        log.info(
            "%s health and metrics on http://%s:%d/healthz (/readyz, /metrics)",
            service.name, health_host, health.port,
        )  # fmt: skip
    await service.start(nc)
    watcher = asyncio.create_task(watch_event_loop(service.name))
    sampler = asyncio.create_task(sample_consumers(nc))
    if on_start is not None:
        await on_start()
    log.info("%s ready", service.name)
    await stop.wait()
    log.info("%s draining", service.name)
    health.draining = True
    watcher.cancel()
    sampler.cancel()
    await service.stop()
    if on_stop is not None:
        await on_stop()
    await health.stop()
    with contextlib.suppress(Exception):
        await nc.drain()
    log.info("%s stopped", service.name)


@dataclass
class Running:
    """What a service's ``bootstrap`` hands the runner: its endpoints, its readiness
    checks, and what runs beside them (consumers, sweepers, timer loops)."""

    service: Service
    checks: dict[str, Check] = field(default_factory=dict)
    #: Awaited in order once the endpoints serve (consumers start here).
    on_start: list[Callable[[], Awaitable[object]]] = field(default_factory=list)
    #: Started as tasks after ``on_start``; cancelled first when draining.
    background: list[Callable[[], Coroutine[Any, Any, None]]] = field(default_factory=list)
    #: Awaited in order after requests stop and before NATS drains, so no message is
    #: left half-done (consumers, timer loops stop here).
    on_stop: list[Callable[[], Awaitable[object]]] = field(default_factory=list)


#: A service's ``bootstrap(settings, nc, resources)``: builds its deps once (stores,
#: clock, settings, the bus), registers its endpoints; what must be closed at the end
#: (a Redis link, an SQL engine) goes on ``resources``.
Bootstrap = Callable[[Settings, NATS, contextlib.AsyncExitStack], Awaitable[Running]]


async def run_service(
    name: str, bootstrap: Bootstrap, settings: Settings, *, stop: asyncio.Event | None = None
) -> None:
    """Connect to NATS as ``name``, bootstrap, serve until SIGTERM (or ``stop``), drain,
    close what bootstrap opened."""
    async with contextlib.AsyncExitStack() as resources:
        nc = await connect(settings.nats_url, name)
        running = await bootstrap(settings, nc, resources)
        tasks: list[asyncio.Task[None]] = []

        async def on_start() -> None:
            for hook in running.on_start:
                await hook()
            tasks.extend(asyncio.create_task(work()) for work in running.background)

        async def on_stop() -> None:
            for task in tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            for hook in running.on_stop:
                await hook()

        await serve(
            running.service,
            nc,
            health_port=settings.health_port,
            health_host=settings.health_host,
            checks=running.checks,
            on_start=on_start,
            on_stop=on_stop,
            stop=stop,
        )


def checked_settings(name: str, *, owns_sql: bool = False) -> Settings | None:
    """Logs set up as ``name``, then the settings; None (the reason printed) when a
    service owning SQL tables must not start with them (:func:`production_problem`)."""
    setup_logs(name)
    settings = load_settings()
    problem = production_problem(settings) if owns_sql else None
    if problem is not None:
        print(f"{name}: {problem}", file=sys.stderr)
        return None
    return settings


def service_main(name: str, bootstrap: Bootstrap, *, owns_sql: bool = False) -> int:
    """A service's whole ``main()``: settings, logs, bootstrap, run; the exit status."""
    settings = checked_settings(name, owns_sql=owns_sql)
    if settings is None:
        return 2
    run_until_stopped(run_service(name, bootstrap, settings))
    return 0
