"""The NATS connection of a service process: connect, fail over, reconnect forever,
and log connection trouble as a few lines (:class:`ConnectionLog`), not a traceback
per retry."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import random
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from nats import errors as nats_errors
from nats.aio.client import Client as NATS

from kalaro.settings import nats_servers

# The runner's logger name, kept: operators' filters and dashboards know it.
log = logging.getLogger("kalaro.bus.runner")


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
                        describe(exc),
                    )
                return
            if self.down_since is not None and now - self._last_reminder >= _OUTAGE_REMINDER_EVERY:
                self._last_reminder = now
                log.warning(
                    "%s: NATS still unreachable after %.0f s (%d attempts; last: %s)",
                    self.name,
                    now - self.down_since,
                    self.failures,
                    describe(exc),
                )
            else:
                log.debug("%s: NATS connection error: %s", self.name, describe(exc))
            return
        kind = type(exc).__name__
        now = self._clock()
        if now - self._last_logged.get(kind, -_ERROR_LOG_EVERY) < _ERROR_LOG_EVERY:
            log.debug("%s: NATS error: %s", self.name, describe(exc))
            return
        self._last_logged[kind] = now
        log.warning("%s: NATS error: %s", self.name, describe(exc))

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


def describe(exc: BaseException) -> str:
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
