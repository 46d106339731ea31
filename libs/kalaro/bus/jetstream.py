"""JetStream helpers for what must not be lost.

Publishers set ``Nats-Msg-Id`` so JetStream drops duplicates inside its window;
consumers are durable pull consumers with explicit ack, and their handlers are
idempotent (keyed in SQL) so a redelivery past the window changes nothing either.

The streams are declared once (:func:`stream_specs`): file storage, replicated
``KALARO_STREAM_REPLICAS`` times or, unset, as many times as the cluster has nodes, up
to 3 (:mod:`kalaro.bus.replicas`), kept for an age and up to a size from settings.
Every service that publishes or consumes ensures the same declaration.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from nats.aio.client import Client as NATS
from nats.errors import TimeoutError as NatsTimeout
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, StorageType, StreamConfig, StreamInfo
from nats.js.errors import (
    BadRequestError,
    NotFoundError,
    ServerError,
    ServiceUnavailableError,
)

from kalaro.bus import replicas as _replicas
from kalaro.bus.codec import decoder, encode
from kalaro.logs import bind_from, outgoing_headers
from kalaro.proto import subjects
from kalaro.settings import Settings

log = logging.getLogger("kalaro.bus.jetstream")


@dataclass(frozen=True)
class StreamSpec:
    """What one durable stream is: its subjects and how much of it is kept."""

    name: str
    subjects: tuple[str, ...]
    max_age_seconds: float
    max_bytes: int
    #: 0: derived from the cluster when the stream is ensured (``KALARO_STREAM_REPLICAS``
    #: unset); :func:`ensure_stream` settles it before it uses :meth:`config`.
    replicas: int = 0

    def config(self) -> StreamConfig:
        return StreamConfig(
            name=self.name,
            subjects=list(self.subjects),
            num_replicas=self.replicas,
            max_age=self.max_age_seconds,
            max_bytes=self.max_bytes,
            storage=StorageType.FILE,
            # Publishers retry with the same Nats-Msg-Id; within this window JetStream
            # stores the message once (the consumers are idempotent beyond it).
            duplicate_window=min(DUPLICATE_WINDOW_SECONDS, self.max_age_seconds),
        )


DUPLICATE_WINDOW_SECONDS = 3600.0
_DAY = 86400.0


def stream_specs(settings: Settings | None = None) -> dict[str, StreamSpec]:
    """Every durable stream, declared once: each service ensures exactly these."""
    s = settings if settings is not None else Settings()
    return {
        spec.name: spec
        for spec in (
            StreamSpec(
                subjects.RESULTS_STREAM,
                (subjects.RESULTS_SUBJECTS,),
                max_age_seconds=s.results_stream_max_age_days * _DAY,
                max_bytes=s.results_stream_max_bytes,
                replicas=s.stream_replicas,
            ),
            StreamSpec(
                subjects.EVENTS_STREAM,
                (subjects.EVENTS_SUBJECTS,),
                max_age_seconds=s.events_stream_max_age_days * _DAY,
                max_bytes=s.events_stream_max_bytes,
                replicas=s.stream_replicas,
            ),
        )
    }


class _ClusterNotReady(Exception):
    """A stream could not be placed yet: the cluster is still finding its peers."""


class _Unplaceable(Exception):
    """JetStream refused to place a stream's replicas: a cluster still finding its
    nodes, or one with too few of them (which, we cannot tell at once)."""

    def __init__(self, refusal: BaseException) -> None:
        super().__init__(str(refusal))
        self.refusal = refusal


# JetStream answers "not now" while a cluster elects leaders or moves a stream's replicas.
_TRANSIENT = (NatsTimeout, TimeoutError, ServiceUnavailableError, ServerError, _ClusterNotReady)
_ATTEMPTS = 20
#: How long a new stream's replicas may be refused before it is created with fewer: a
#: cluster that has just elected its leader refuses R3 ("no suitable peers") until it
#: knows every node, which took 3 s on a loopback cluster; a cluster really too small
#: only makes each start wait this long.
PLACEMENT_PATIENCE_SECONDS = 15.0


async def ensure_stream(
    js: JetStreamContext,
    name: str,
    subject_list: list[str] | None = None,
    *,
    settings: Settings | None = None,
) -> StreamInfo:
    """Create the stream, or bring its replicas and limits to the declared ones.

    ``name`` is one of :func:`stream_specs` (limits and replicas from ``settings``,
    defaults without); ``subject_list`` matters only for a stream not declared there.
    Replicas the server refuses are logged as an error and the stream keeps (or is
    created with) as many as it places: see :mod:`kalaro.bus.replicas`.
    Safe to call from every replica at once: creating an existing stream with the same
    configuration is a no-op, and an update to the same configuration changes nothing.
    """
    s = settings if settings is not None else Settings()
    spec = stream_specs(s).get(name)
    if spec is None:
        if not subject_list:
            raise ValueError(f"stream {name!r} is not declared; give its subjects")
        spec = StreamSpec(
            name,
            tuple(subject_list),
            max_age_seconds=s.results_stream_max_age_days * _DAY,
            max_bytes=s.results_stream_max_bytes,
        )
    # Settled once per call, logged below: what this process asks of every stream.
    target = await _replicas.replicas_target(js._nc, s)
    spec = dataclasses.replace(spec, replicas=target.replicas)
    refused_since: float | None = None
    for attempt in range(_ATTEMPTS):
        try:
            info = await _ensure(js, spec, target)
            break
        except _Unplaceable as exc:
            now = time.monotonic()
            refused_since = now if refused_since is None else refused_since
            if now - refused_since >= PLACEMENT_PATIENCE_SECONDS or attempt == _ATTEMPTS - 1:
                info = await _ensure(js, spec, target, settle=True)
                break
            log.info("stream %s: replicas not placed yet (%s); retrying", name, exc)
            await asyncio.sleep(min(2.0, 0.1 * 2**attempt))
        except _TRANSIENT as exc:
            if attempt == _ATTEMPTS - 1:
                raise
            log.info("stream %s: JetStream not ready (%r); retrying", name, exc)
            await asyncio.sleep(min(2.0, 0.1 * 2**attempt))
    else:
        raise AssertionError("unreachable")
    have = info.config.num_replicas or 1
    log.info(
        "stream %s: %d replicas (target %d from %s%s)",
        name,
        have,
        target.replicas,
        target.basis,
        "; KALARO_STREAM_REPLICAS overrides" if target.derived else "",
    )
    return info


async def _ensure(
    js: JetStreamContext, spec: StreamSpec, target: _replicas.Target, *, settle: bool = False
) -> StreamInfo:
    """One try. Replicas the server will not place raise :class:`_Unplaceable`, or with
    ``settle`` are given up on: fewer for a new stream, its own for an existing one."""
    wanted = spec.config()
    try:
        info = await js.stream_info(spec.name)
    except NotFoundError:
        try:
            return await js.add_stream(wanted)
        except (BadRequestError, ServerError) as refused:
            # Another replica created it (perhaps from an older configuration) between
            # our look-up and our create: bring that one up to date below. Or a forming
            # cluster does not know enough peers yet ("no suitable peers for placement"),
            # or the cluster is too small for these replicas.
            try:
                info = await js.stream_info(spec.name)
            except NotFoundError:
                if _replicas.placement_refused(refused):
                    if settle:
                        return await _create_with_fewer(js, spec, target, refused)
                    raise _Unplaceable(refused) from refused
                if isinstance(refused, ServerError):
                    raise
                raise _ClusterNotReady(str(refused)) from refused
    have = info.config
    changes = _differences(have, wanted, raise_only=target.derived)
    if not changes:
        return info
    if have.storage is not None and have.storage != StorageType.FILE:
        log.warning("stream %s: stored in %s, not file; left as it is", spec.name, have.storage)
        changes.pop("storage", None)
    try:
        info = await _update(js, have, changes)
    except (BadRequestError, ServerError) as refused:
        if "num_replicas" not in changes or not _replicas.placement_refused(refused):
            raise
        if not settle:
            raise _Unplaceable(refused) from refused
        # Keep the replicas it has (loudly: /readyz says so) and apply the rest.
        before = changes.pop("num_replicas")[0]
        _replicas.refused(spec.name, before, target, refused)
        info = await _update(js, have, changes) if changes else info
    else:
        if "num_replicas" in changes:
            _replicas.SHORTFALL.pop(spec.name, None)
    if changes:
        log.info(
            "stream %s updated: %s",
            spec.name,
            ", ".join(f"{field} {old} -> {new}" for field, (old, new) in changes.items()),
        )
    return info


async def _update(
    js: JetStreamContext, have: StreamConfig, changes: dict[str, tuple[Any, Any]]
) -> StreamInfo:
    return await js.update_stream(have.evolve(**{f: after for f, (_, after) in changes.items()}))


async def _create_with_fewer(
    js: JetStreamContext, spec: StreamSpec, target: _replicas.Target, refusal: BaseException
) -> StreamInfo:
    """Create the stream with as many replicas as the cluster places (fewer than
    ``target``), noting the shortfall: a stream with fewer copies loses nothing today,
    none at all stops every service. Readiness checks raise it once the nodes are there."""
    wanted = spec.config()
    for count in range(spec.replicas - 1, 0, -1):
        try:
            info = await js.add_stream(wanted.evolve(num_replicas=count))
        except (BadRequestError, ServerError) as exc:
            if not _replicas.placement_refused(exc):
                raise
            continue
        _replicas.refused(spec.name, count, target, refusal)
        return info
    raise refusal


def _differences(
    have: StreamConfig, wanted: StreamConfig, *, raise_only: bool = False
) -> dict[str, tuple[Any, Any]]:
    """The fields ``ensure_stream`` manages whose values differ (before, after).
    ``raise_only``: replicas may go up, not down (a derived count: see kalaro.bus.replicas)."""
    changes: dict[str, tuple[Any, Any]] = {}
    replicas, wanted_replicas = have.num_replicas or 1, wanted.num_replicas or 1
    if replicas < wanted_replicas or (replicas > wanted_replicas and not raise_only):
        changes["num_replicas"] = (replicas, wanted_replicas)
    assert wanted.max_age is not None and wanted.max_bytes is not None
    if not have.max_age or abs(have.max_age - wanted.max_age) > 0.001:
        changes["max_age"] = (have.max_age or 0, wanted.max_age)
    if have.max_bytes != wanted.max_bytes:
        changes["max_bytes"] = (have.max_bytes, wanted.max_bytes)
    # The window is kept at least as long as declared; a longer one is left alone.
    if have.duplicate_window + 0.001 < wanted.duplicate_window:
        changes["duplicate_window"] = (have.duplicate_window, wanted.duplicate_window)
    if have.storage not in (None, StorageType.FILE):
        changes["storage"] = (have.storage, StorageType.FILE)
    return changes


async def publish_once(js: JetStreamContext, subject: str, message: Any, msg_id: str) -> None:
    """Publish with ``Nats-Msg-Id`` so a retried publish is stored once."""
    await js.publish(subject, encode(message), headers=outgoing_headers({"Nats-Msg-Id": msg_id}))


_stored_at: contextvars.ContextVar[float | None] = contextvars.ContextVar("stored_at", default=None)


def _timestamp(msg: Any) -> float | None:
    try:
        return float(msg.metadata.timestamp.timestamp())
    except Exception:  # not a JetStream message (tests), or no metadata
        return None


def message_age() -> float | None:
    """Inside a :class:`DurableConsumer` handler: seconds since JetStream stored the
    message being handled (how long it waited for us), or None."""
    stored = _stored_at.get()
    return None if stored is None else max(0.0, time.time() - stored)


_batch_stored_at: contextvars.ContextVar[tuple[float | None, ...]] = contextvars.ContextVar(
    "batch_stored_at", default=()
)


def batch_ages() -> tuple[float | None, ...]:
    """Inside a batch handler: :func:`message_age` of each message of the batch, in order."""
    now = time.time()
    return tuple(None if t is None else max(0.0, now - t) for t in _batch_stored_at.get())


#: How long JetStream waits for an ack before it delivers a message again. A message
#: handed to a pull request whose connection then died (its NATS node was killed) is
#: redelivered only after this: 30 s held a settlement up for 30 s in the chaos test.
#: Handlers take milliseconds; a slow one is merely repeated, and they are idempotent.
ACK_WAIT_SECONDS = 5.0


#: (stream, durable) of every consumer running in this process: the runner samples
#: their backlog into ``kalaro_consumer_pending``.
RUNNING: set[tuple[str, str]] = set()

#: How long :meth:`DurableConsumer.stop` lets a fetch in hand finish before cancelling.
STOP_GRACE_SECONDS = 10.0


class DurableConsumer:
    """A pull consumer loop: fetch, decode, handle, ack; nak (redeliver) on failure."""

    def __init__(
        self,
        nc: NATS,
        *,
        stream: str,
        subject: str,
        durable: str,
        message_type: Any,
        handler: Callable[[Any], Awaitable[None]],
        batch: int = 32,
        batch_handler: Callable[[list[Any]], Awaitable[list[BaseException | None]]] | None = None,
    ) -> None:
        self._nc = nc
        self._stream = stream
        self._subject = subject
        self._durable = durable
        self._decoder = decoder(message_type)
        self._handler = handler
        # Optional: handles a whole fetch at once (e.g. one SQL transaction) and answers
        # per message: None to ack (after the handler returned, i.e. after its commit),
        # or the exception that makes it redelivered.
        self._batch_handler = batch_handler
        self._batch = batch
        self._task: asyncio.Task[None] | None = None
        self._sub: Any = None
        self._stopping = asyncio.Event()
        self._handling = False  # a fetch is being handled (its SQL may be mid-transaction)

    async def start(self) -> None:
        js = self._nc.jetstream()
        config = ConsumerConfig(
            durable_name=self._durable,
            ack_policy=AckPolicy.EXPLICIT,
            ack_wait=ACK_WAIT_SECONDS,
            filter_subject=self._subject,
        )
        # Create it, or bring an existing durable's ack wait to this one (pull_subscribe
        # alone would bind to the old configuration).
        with contextlib.suppress(Exception):
            await js.add_consumer(self._stream, config=config)
        sub = await js.pull_subscribe(
            self._subject, durable=self._durable, stream=self._stream, config=config
        )
        self._sub = sub
        self._task = asyncio.create_task(self._loop(sub))
        RUNNING.add((self._stream, self._durable))

    def _fetching_again(self, failures: int) -> int:
        if failures:
            log.warning("%s: fetching again after %d failed fetches", self._durable, failures)
        return 0

    async def stop(self) -> None:
        """Stop fetching. A fetch being handled is let finish (bounded by
        ``STOP_GRACE_SECONDS``): cancelled mid-transaction, a handler could leave its
        connection holding SQLite's write lock, and the next writer waits it out."""
        self._stopping.set()
        RUNNING.discard((self._stream, self._durable))
        if self._task is not None:
            if self._handling:
                await asyncio.wait({self._task}, timeout=STOP_GRACE_SECONDS)
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._sub is not None:
            # A message delivered to a pull request still open would otherwise sit unread
            # (JetStream redelivers it after ack_wait) and hold up ``nc.drain()`` until
            # its timeout.
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
            self._sub = None

    async def _loop(self, sub: Any) -> None:
        failures = 0  # fetches failed in a row: logged once, not twice a second
        while not self._stopping.is_set():
            try:
                messages = await sub.fetch(self._batch, timeout=1.0)
            except (TimeoutError, NatsTimeout):
                failures = self._fetching_again(failures)
                continue  # nothing new within the fetch window
            except Exception as exc:
                if self._stopping.is_set():
                    return
                if failures == 0:
                    # While NATS is down the connection's own log line says why.
                    log.warning(
                        "%s: fetch failed, retrying: %r",
                        self._durable,
                        exc,
                        exc_info=self._nc.is_connected,
                    )
                failures += 1
                await asyncio.sleep(0.5)
                continue
            failures = self._fetching_again(failures)
            self._handling = True
            try:
                await self._handle(messages)
            finally:
                self._handling = False

    async def _handle(self, messages: list[Any]) -> None:
        if self._batch_handler is not None:
            await self._handle_batch(messages)
            return
        for msg in messages:
            try:
                payload = self._decoder.decode(msg.data)
            except Exception:
                # A message nobody can ever read: keep it out of the way.
                log.error("%s: undecodable message dropped: %r", self._durable, msg.data)
                await msg.term()
                continue
            bind_from(payload, msg.headers)
            _stored_at.set(_timestamp(msg))
            try:
                await self._handler(payload)
            except Exception:
                log.exception("%s: handler failed, will be redelivered", self._durable)
                await msg.nak(delay=1.0)
            else:
                await msg.ack()

    async def _handle_batch(self, messages: list[Any]) -> None:
        assert self._batch_handler is not None
        readable, payloads = [], []
        for msg in messages:
            try:
                payloads.append(self._decoder.decode(msg.data))
            except Exception:
                log.error("%s: undecodable message dropped: %r", self._durable, msg.data)
                await msg.term()
                continue
            readable.append(msg)
        if not readable:
            return
        _batch_stored_at.set(tuple(_timestamp(msg) for msg in readable))
        try:
            outcomes = await self._batch_handler(payloads)
        except Exception as exc:
            outcomes = [exc] * len(readable)
        for msg, outcome in zip(readable, outcomes, strict=True):
            if outcome is None:
                await msg.ack()
            else:
                log.error("%s: handler failed, will be redelivered: %r", self._durable, outcome)
                await msg.nak(delay=1.0)
