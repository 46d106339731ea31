"""The service runner: typed request/reply endpoints on NATS queue groups.

A service is a name plus endpoints. An endpoint (subject, request type, reply type) is
declared once in :mod:`kalaro.proto.endpoints`, which callers send through too; a
service binds each to its handler once, in its ``bootstrap.py``, as a :class:`Route`:
``route(endpoints.WALLET_BALANCE, balance)``, where every handler has one shape,
``async def balance(cmd: GetBalance, deps: WalletDeps) -> Balance``, and
``Service(name).bind(ROUTES, deps)`` serves them all. The runner decodes, calls, encodes, turns
:class:`ServiceError` into a typed error reply, counts and times every request, and
drains gracefully: on stop it takes no new requests and lets in-flight ones finish.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import msgspec
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.errors import Error as NatsError
from prometheus_client import Counter, Histogram
from sqlalchemy.exc import OperationalError

from kalaro.bus.client import ERROR_HEADER
from kalaro.bus.codec import decoder, encode
from kalaro.bus.errors import ServiceError
from kalaro.bus.redislink import ResponseError
from kalaro.logs import bind_from
from kalaro.proto import errors as codes
from kalaro.proto.endpoints import Endpoint
from kalaro.proto.errors import ErrorReply

log = logging.getLogger("kalaro.bus")

Req = TypeVar("Req")
Rep = TypeVar("Rep", bound=msgspec.Struct)
D = TypeVar("D")

REQUESTS = Counter("kalaro_requests_total", "Requests handled", ["service", "subject", "outcome"])
LATENCY = Histogram(
    "kalaro_request_seconds",
    "Time from receiving a request to replying",
    ["service", "subject"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)


@dataclass(frozen=True)
class _Route(Generic[Req]):
    subject: str
    request_type: type[Req]
    handler: Callable[[Req], Awaitable[msgspec.Struct]]
    label: str  # the subject as metrics name it


@dataclass(frozen=True)
class Route(Generic[D]):
    """An endpoint bound to its handler, ``async def handle(cmd, deps) -> reply``."""

    endpoint: Endpoint[Any, Any]
    handler: Callable[[Any, D], Awaitable[Any]]

    def bound(self, deps: D) -> Callable[[Any], Awaitable[Any]]:
        """The handler with its deps, as a service calls it (``await h(cmd)``)."""
        return _bound(self.handler, deps)


def route(endpoint: Endpoint[Req, Rep], handler: Callable[[Req, D], Awaitable[Rep]]) -> Route[D]:
    """Bind ``endpoint`` to ``handler``; mypy checks the handler takes the endpoint's
    request type (and the service's deps) and returns its reply type."""
    return Route(endpoint, handler)


def _bound(handler: Callable[[Any, D], Awaitable[Any]], deps: D) -> Callable[[Any], Awaitable[Any]]:
    async def handle(cmd: Any) -> Any:
        return await handler(cmd, deps)

    return handle


def _is_outage(exc: BaseException) -> bool:
    """A fault of the infrastructure rather than of the request or the code: a dropped
    connection, Redis still loading its data after a restart, the database unreachable,
    a NATS request nobody answered."""
    if isinstance(exc, ConnectionError | TimeoutError | NatsError):
        # NATS's own errors (no responders, no stream leader, a timed-out request) are
        # a cluster electing leaders or reconnecting.
        return True
    if isinstance(exc, ResponseError):
        # ...and the ones that mean it refuses us (a password or ACL to fix), word for word.
        return str(exc).startswith(
            ("LOADING", "MASTERDOWN", "TRYAGAIN", "READONLY", "NOAUTH", "WRONGPASS", "DENIED")
        )
    return isinstance(exc, OperationalError)


class Service:
    """A named set of endpoints served on the queue group ``name``."""

    def __init__(self, name: str, *, max_in_flight: int = 512, queue: bool = True) -> None:
        self.name = name
        # queue=False: every subscriber gets every request (an engine partition's owner
        # is alone on its subjects; a paused former owner must not take requests away).
        self._queue = name if queue else ""
        self._routes: list[_Route[Any]] = []
        self._subscriptions: list[Subscription] = []
        self._in_flight: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(max_in_flight)
        # Metric children by (subject, outcome): labels() hashes and locks on every call.
        self._counted: dict[tuple[str, str], Any] = {}
        self._timed: dict[str, Any] = {}
        self._nc: NATS | None = None

    @property
    def subjects(self) -> list[str]:
        return [e.subject for e in self._routes]

    def add(
        self,
        endpoint: Endpoint[Req, Rep],
        handler: Callable[[Req], Awaitable[Rep]],
        *,
        label: str = "",
    ) -> None:
        """Serve ``endpoint`` with ``handler`` (its request type in, its reply type out).
        ``label``: the subject metrics name instead (one for all of an engine's
        partitions, not one series per partition)."""
        if not isinstance(endpoint, Endpoint):  # the old add(subject, type, handler)
            raise TypeError(f"declare {endpoint!r} as an Endpoint (kalaro.proto.endpoints)")
        self._routes.append(
            _Route(endpoint.subject, endpoint.request, handler, label or endpoint.subject)
        )

    def bind(self, routes: Iterable[Route[D]], deps: D) -> Service:
        """Serve every route, each handler called as ``handler(cmd, deps)``."""
        for r in routes:
            self.add(r.endpoint, r.bound(deps))
        return self

    async def start(self, nc: NATS) -> None:
        self._nc = nc
        for route in self._routes:
            sub = await nc.subscribe(route.subject, queue=self._queue, cb=self._dispatcher(route))
            self._subscriptions.append(sub)
        await nc.flush()
        log.info("%s serving %s", self.name, ", ".join(self.subjects))

    async def stop(self, timeout: float = 10.0) -> None:
        """Stop taking requests, then wait (bounded) for the ones in flight."""
        for sub in self._subscriptions:
            try:
                await sub.unsubscribe()
            except Exception:  # connection already closed: nothing left to stop
                log.debug("unsubscribe failed", exc_info=True)
        self._subscriptions.clear()
        if self._in_flight:
            await asyncio.wait(set(self._in_flight), timeout=timeout)

    def _dispatcher(self, endpoint: _Route[Any]) -> Callable[[Msg], Awaitable[None]]:
        # nats-py runs one callback at a time per subscription; each request gets its
        # own task so a slow request does not hold up the rest.
        async def on_message(msg: Msg) -> None:
            await self._slots.acquire()
            task = asyncio.create_task(self._handle(endpoint, msg))
            self._in_flight.add(task)
            task.add_done_callback(self._finished)

        return on_message

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._in_flight.discard(task)
        self._slots.release()

    async def _handle(self, endpoint: _Route[Any], msg: Msg) -> None:
        started = time.perf_counter()
        outcome = "ok"
        try:
            try:
                request = decoder(endpoint.request_type).decode(msg.data)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise ServiceError(codes.BAD_REQUEST, f"malformed request: {exc}") from exc
            bind_from(request, msg.headers)  # this task's log lines name the request
            reply = await endpoint.handler(request)
            if msg.reply:
                await msg.respond(encode(reply))
        except ServiceError as exc:
            outcome = exc.code
            await self._respond_error(
                msg, exc.code, exc.message, user_ids=exc.user_ids, retry_after=exc.retry_after
            )
        except Exception as exc:
            if _is_outage(exc):
                # Redis or the database is down or restarting: the caller may retry
                # (and clients do retry ``unavailable``); nothing here is a bug.
                outcome = codes.UNAVAILABLE
                log.warning("%s: %s unavailable: %r", self.name, endpoint.subject, exc)
                await self._respond_error(
                    msg, codes.UNAVAILABLE, "a store this service needs is unavailable; retry"
                )
                return
            outcome = codes.INTERNAL
            log.exception("%s: unhandled error on %s", self.name, endpoint.subject)
            await self._respond_error(msg, codes.INTERNAL, "internal error")
        finally:
            subject = endpoint.label
            counter = self._counted.get((subject, outcome))
            if counter is None:
                counter = self._counted[subject, outcome] = REQUESTS.labels(
                    self.name, subject, outcome
                )
            counter.inc()
            timer = self._timed.get(subject)
            if timer is None:
                timer = self._timed[subject] = LATENCY.labels(self.name, subject)
            timer.observe(time.perf_counter() - started)

    async def _respond_error(
        self,
        msg: Msg,
        code: str,
        message: str,
        *,
        user_ids: tuple[str, ...] = (),
        retry_after: int = 0,
    ) -> None:
        if not msg.reply or self._nc is None:
            return
        try:
            await self._nc.publish(
                msg.reply,
                encode(
                    ErrorReply(
                        code=code, message=message, user_ids=user_ids, retry_after=retry_after
                    )
                ),
                headers={ERROR_HEADER: code},
            )
        except Exception:
            log.debug("could not send error reply", exc_info=True)
