"""Run a service process: connect, serve, expose health and metrics, drain on SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import inspect
import json
import logging
import random
import signal
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from nats import errors as nats_errors
from nats.aio.client import Client as NATS
from prometheus_client import CONTENT_TYPE_LATEST, Gauge, Histogram, generate_latest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import jetstream, replicas
from kalaro.bus.redislink import RedisLink
from kalaro.bus.service import Service
from kalaro.logs import redact
from kalaro.settings import Settings, nats_servers

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


# Reconnecting: the first pass over the servers is immediate (fail over to another
# node at once); later passes back off exponentially, with jitter, up to this cap, so
# a service is back within ~2 s of NATS coming back and N replicas do not stampede it.
_RECONNECT_FIRST_WAIT = 0.1
_RECONNECT_MAX_WAIT = 2.0
# Connecting at start-up: how long to wait between probes of an unreachable NATS.
_CONNECT_MAX_WAIT = 5.0
# A NATS error that is not about the connection is logged at most this often per kind.
_ERROR_LOG_EVERY = 30.0
# While NATS is unreachable, one reminder line this often.
_OUTAGE_REMINDER_EVERY = 60.0

_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    TimeoutError,
    asyncio.TimeoutError,
    nats_errors.UnexpectedEOF,
    nats_errors.StaleConnectionError,
    nats_errors.ConnectionClosedError,
    nats_errors.NoServersError,
    nats_errors.TimeoutError,
)


def _backoff(attempt: int, servers: int) -> float:
    """Seconds to wait before reconnect attempt ``attempt`` (0-based) over ``servers``."""
    rounds = attempt // max(1, servers)
    if rounds == 0:
        return 0.0
    wait = min(_RECONNECT_MAX_WAIT, _RECONNECT_FIRST_WAIT * 2.0 ** (rounds - 1))
    return wait * random.uniform(0.5, 1.0)


class ConnectionLog:
    """NATS connection events as a few log lines, not a traceback per retry.

    One line when the connection is lost, one when it is back (with how long it took),
    a reminder a minute while it stays down; errors about the connection itself are
    folded into those lines, other errors are logged at most every 30 s per kind.
    Also chooses where and when to reconnect (:meth:`choose_server`).
    """

    def __init__(self, name: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self._clock = clock
        self.down_since: float | None = None
        self.failures = 0
        self.last_error: BaseException | None = None
        self._last_reminder = 0.0
        self._last_logged: dict[str, float] = {}
        self._attempt = 0
        self.last_server = ""  # netloc of the server we were connected to
        self._nc: NATS | None = None

    def connected(self, nc: NATS) -> None:
        self._nc = nc
        url = nc.connected_url
        self.last_server = url.netloc if url is not None else ""

    async def on_disconnected(self) -> None:
        if self._nc is not None and (self._nc.is_closed or self._nc.is_draining):
            return  # our own drain or close (a stop), not an outage: on_closed says it
        if self.down_since is None:
            self.down_since = self._clock()
            self._last_reminder = self.down_since
            self.failures = 0
            self._attempt = 0
            log.warning(
                "%s: lost the NATS connection%s; reconnecting",
                self.name,
                f" to {self.last_server}" if self.last_server else "",
            )

    async def on_reconnected(self, nc: NATS) -> None:
        self.connected(nc)
        down = 0.0 if self.down_since is None else self._clock() - self.down_since
        log.warning(
            "%s: reconnected to NATS at %s after %.1f s (%d failed attempts)",
            self.name,
            self.last_server,
            down,
            self.failures,
        )
        self.down_since = None
        self.failures = 0
        self._attempt = 0

    async def on_error(self, exc: Exception) -> None:
        self.last_error = exc
        if isinstance(exc, _CONNECTION_ERRORS):
            self.failures += 1
            now = self._clock()
            if self._nc is None:
                # Still starting, with a server that takes TCP (connect() probed that):
                # a certificate it cannot verify, a wrong password... Say why we wait.
                if self.failures == 1 or now - self._last_reminder >= _OUTAGE_REMINDER_EVERY:
                    self._last_reminder = now
                    log.warning(
                        "%s: cannot connect to NATS yet (%d attempts; last: %s); retrying",
                        self.name,
                        self.failures,
                        _describe(exc),
                    )
                return
            if self.down_since is not None and now - self._last_reminder >= _OUTAGE_REMINDER_EVERY:
                self._last_reminder = now
                log.warning(
                    "%s: NATS still unreachable after %.0f s (%d attempts; last: %s)",
                    self.name,
                    now - self.down_since,
                    self.failures,
                    _describe(exc),
                )
            else:
                log.debug("%s: NATS connection error: %s", self.name, _describe(exc))
            return
        kind = type(exc).__name__
        now = self._clock()
        if now - self._last_logged.get(kind, -_ERROR_LOG_EVERY) < _ERROR_LOG_EVERY:
            log.debug("%s: NATS error: %s", self.name, _describe(exc))
            return
        self._last_logged[kind] = now
        log.warning("%s: NATS error: %s", self.name, _describe(exc))

    async def on_closed(self) -> None:
        log.info("%s: NATS connection closed", self.name)

    def choose_server(self, servers: list[Any], _info: dict[str, Any]) -> tuple[Any | None, float]:
        """nats-py's ``reconnect_to_server_handler``: the least-tried server (not the one
        just lost, on a tie), after a wait that grows once every server has failed."""
        attempt = self._attempt
        self._attempt += 1
        if not servers:
            return None, _backoff(attempt, 1)
        best = min(servers, key=lambda s: (s.reconnects, s.uri.netloc == self.last_server))
        return best, _backoff(attempt, len(servers))


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def _reachable(servers: list[str], timeout: float = 2.0) -> bool:
    """Whether any of ``servers`` accepts a TCP connection (a cheap probe)."""
    for server in servers:
        parsed = urlsplit(server if "://" in server else f"nats://{server}")
        default_port = {"ws": 80, "wss": 443}.get(parsed.scheme, 4222)
        try:
            port = parsed.port or default_port
            _, writer = await asyncio.wait_for(
                asyncio.open_connection(parsed.hostname or "127.0.0.1", port), timeout
            )
        except (OSError, TimeoutError, ValueError):
            continue
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()
        return True
    return False


_HANDLER_SUPPORTED = "reconnect_to_server_handler" in inspect.signature(NATS.connect).parameters


async def connect(
    url: str,
    name: str,
    *,
    on_reconnected: Callable[[], None] | None = None,
) -> NATS:
    """Connect to NATS and stay connected: services outlive NATS restarts and failovers.

    ``url`` is one server or several comma-separated (every node of a cluster); the
    client fails over between them and reconnects forever with a jittered backoff.
    Until some server answers at start-up, it keeps probing (backing off up to 5 s),
    logging once. Connection losses and returns are logged once each.
    ``on_reconnected`` is called each time the connection is back (after it subscribed
    again): what was published to its subscriptions meanwhile was lost.
    """
    servers = nats_servers(url)
    events = ConnectionLog(name)
    waited = 0.0
    attempt = 0
    while not await _reachable(servers):
        if attempt == 0:
            log.warning(
                "%s: no NATS server reachable at %s; waiting for one", name, ",".join(servers)
            )
        wait = min(_CONNECT_MAX_WAIT, 0.1 * 2**attempt) * random.uniform(0.75, 1.0)
        attempt += 1
        waited += wait
        await asyncio.sleep(wait)
    if attempt:
        log.warning("%s: NATS reachable after %.1f s", name, waited)
    nc = NATS()

    async def reconnected() -> None:
        await events.on_reconnected(nc)
        if on_reconnected is not None:
            on_reconnected()

    # nats-py waits reconnect_time_wait between tries of one server at start-up (and
    # when reconnecting without the handler, in versions before 2.16).
    options: dict[str, Any] = {"reconnect_time_wait": 0.5}
    if _HANDLER_SUPPORTED:
        options["reconnect_to_server_handler"] = events.choose_server
    await nc.connect(
        servers,
        name=name,
        max_reconnect_attempts=-1,
        connect_timeout=2,
        error_cb=events.on_error,
        disconnected_cb=events.on_disconnected,
        reconnected_cb=reconnected,
        closed_cb=events.on_closed,
        **options,
    )
    events.connected(nc)
    return nc


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
