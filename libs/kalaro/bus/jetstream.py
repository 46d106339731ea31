"""JetStream helpers for what must not be lost.

Publishers set ``Nats-Msg-Id`` so JetStream drops duplicates inside its window;
consumers are durable pull consumers with explicit ack, and their handlers are
idempotent (keyed in SQL) so a redelivery past the window changes nothing either.

The streams themselves are declared and ensured in :mod:`kalaro.bus.streams`
(re-exported here): file storage, replicated ``KALARO_STREAM_REPLICAS`` times or, unset,
as many times as the cluster has nodes, up to 3, bounded by age and size.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from nats.aio.client import Client as NATS
from nats.errors import TimeoutError as NatsTimeout
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig

from kalaro.bus.codec import decoder, encode
from kalaro.bus.streams import DUPLICATE_WINDOW_SECONDS, StreamSpec, ensure_stream, stream_specs
from kalaro.logs import bind_from, outgoing_headers

__all__ = [
    "ACK_WAIT_SECONDS",
    "DUPLICATE_WINDOW_SECONDS",
    "RUNNING",
    "DurableConsumer",
    "StreamSpec",
    "batch_ages",
    "ensure_stream",
    "message_age",
    "publish_once",
    "stream_specs",
]

log = logging.getLogger("kalaro.bus.jetstream")


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
