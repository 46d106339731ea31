"""JetStream helpers for what must not be lost.

Publishers set ``Nats-Msg-Id`` so JetStream drops duplicates inside its window;
consumers are durable pull consumers with explicit ack, and their handlers are
idempotent (keyed in SQL) so a redelivery past the window changes nothing either.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from nats.aio.client import Client as NATS
from nats.errors import TimeoutError as NatsTimeout
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, StreamConfig
from nats.js.errors import BadRequestError, NotFoundError

from kalaro.bus.codec import decoder, encode

log = logging.getLogger("kalaro.bus.jetstream")


async def ensure_stream(js: JetStreamContext, name: str, subjects: list[str]) -> None:
    """Create the stream if it is missing (safe to call from every replica)."""
    try:
        await js.stream_info(name)
    except NotFoundError:
        try:
            await js.add_stream(StreamConfig(name=name, subjects=subjects, duplicate_window=3600.0))
        except BadRequestError:
            # Another replica created it between our look-up and our create.
            await js.stream_info(name)


async def publish_once(js: JetStreamContext, subject: str, message: Any, msg_id: str) -> None:
    """Publish with ``Nats-Msg-Id`` so a retried publish is stored once."""
    await js.publish(subject, encode(message), headers={"Nats-Msg-Id": msg_id})


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
    ) -> None:
        self._nc = nc
        self._stream = stream
        self._subject = subject
        self._durable = durable
        self._decoder = decoder(message_type)
        self._handler = handler
        self._batch = batch
        self._task: asyncio.Task[None] | None = None
        self._sub: Any = None
        self._stopping = asyncio.Event()

    async def start(self) -> None:
        js = self._nc.jetstream()
        sub = await js.pull_subscribe(
            self._subject,
            durable=self._durable,
            stream=self._stream,
            config=ConsumerConfig(ack_policy=AckPolicy.EXPLICIT, ack_wait=30.0),
        )
        self._sub = sub
        self._task = asyncio.create_task(self._loop(sub))

    async def stop(self) -> None:
        self._stopping.set()
        if self._task is not None:
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
        while not self._stopping.is_set():
            try:
                messages = await sub.fetch(self._batch, timeout=1.0)
            except (TimeoutError, NatsTimeout):
                continue  # nothing new within the fetch window
            except Exception:
                if self._stopping.is_set():
                    return
                log.warning("%s: fetch failed, retrying", self._durable, exc_info=True)
                await asyncio.sleep(0.5)
                continue
            for msg in messages:
                try:
                    payload = self._decoder.decode(msg.data)
                except Exception:
                    # A message nobody can ever read: keep it out of the way.
                    log.error("%s: undecodable message dropped: %r", self._durable, msg.data)
                    await msg.term()
                    continue
                try:
                    await self._handler(payload)
                except Exception:
                    log.exception("%s: handler failed, will be redelivered", self._durable)
                    await msg.nak(delay=1.0)
                else:
                    await msg.ack()
