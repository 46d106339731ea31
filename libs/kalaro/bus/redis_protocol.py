"""One socket to Redis: commands packed by hiredis, replies parsed by hiredis and
matched in order to a queue of futures (so any number of callers share it, pipelined).

A dropped connection fails every command in flight with :class:`RedisUnavailable`; what
Redis says when it refuses us (``DENIED`` in protected mode, ``-ERR max number of
clients``) is passed on word for word; a ``READONLY`` reply retires the connection (the
server is no longer the master). :class:`~kalaro.bus.redislink.RedisLink` owns these.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any, cast

import hiredis

Arg = bytes | str | int | float
# hiredis' stub types the argument as a 1-tuple; it takes any number of arguments.
pack = cast(Callable[[tuple[Arg, ...]], bytes], hiredis.pack_command)


class RedisError(Exception):
    """Anything that went wrong talking to Redis."""


class ResponseError(RedisError):
    """Redis answered with an error (``-ERR ...``, ``-NOSCRIPT ...``)."""


class RedisUnavailable(RedisError, ConnectionError):
    """No connection to Redis, or it dropped before the reply came."""


class RedisConnection(asyncio.Protocol):
    """One socket to Redis: writes packed commands, resolves their futures in order."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._transport: asyncio.Transport | None = None
        self._reader = hiredis.Reader(replyError=ResponseError)
        self._pending: deque[tuple[asyncio.Future[Any], float]] = deque()
        self._lost: Exception | None = None
        # Set on a READONLY reply: this server is no longer the master. Commands already
        # sent still get their replies; new ones go to a new connection.
        self.retired = False
        # Protected mode answers "-DENIED ..." and hangs up: the reason the connection
        # ends is that text, not the reset that follows it.
        self._refusal: str | None = None

    @property
    def usable(self) -> bool:
        return self._transport is not None and self._lost is None and not self.retired

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def send(self, packed: bytes, replies: int = 1) -> list[asyncio.Future[Any]]:
        """Write ``packed`` (one or more commands); a future per reply, in order."""
        if self._lost is not None or self._transport is None:
            raise RedisUnavailable(f"connection to Redis lost: {self._lost}")
        now = self._loop.time()
        futures = [self._loop.create_future() for _ in range(replies)]
        self._pending.extend((future, now) for future in futures)
        self._transport.write(packed)
        return futures

    def data_received(self, data: bytes) -> None:
        reader = self._reader
        pending = self._pending
        reader.feed(data)
        try:
            while (reply := reader.gets()) is not False:
                if not pending:
                    # Redis speaks first only to refuse us (protected mode's "-DENIED",
                    # "-ERR max number of clients reached"): pass its words on.
                    if isinstance(reply, ResponseError):
                        self.drop(RedisUnavailable(f"Redis refused the connection: {reply}"))
                    else:
                        self.drop(
                            RedisUnavailable(f"Redis sent a reply nobody asked for: {reply!r}")
                        )
                    return
                future, _ = pending.popleft()
                if isinstance(reply, ResponseError):
                    if str(reply).startswith("READONLY"):
                        self.retired = True
                    elif str(reply).startswith("DENIED"):
                        self._refusal = str(reply)
                if future.done():  # its caller gave up; the reply still had to be read
                    continue
                if isinstance(reply, ResponseError):
                    future.set_exception(reply)
                else:
                    future.set_result(reply)
        except hiredis.ProtocolError as exc:
            self.drop(RedisUnavailable(f"unreadable reply from Redis: {exc}"))
            return
        if self.retired and not pending and self._transport is not None:
            self._transport.close()

    def oldest_wait(self) -> float:
        """Seconds the oldest unanswered command has waited (0 when none)."""
        return self._loop.time() - self._pending[0][1] if self._pending else 0.0

    def drop(self, reason: Exception) -> None:
        """Fail everything in flight with ``reason`` and close the socket."""
        if self._lost is None:
            self._lost = reason
        while self._pending:
            future, _ = self._pending.popleft()
            if not future.done():
                future.set_exception(self._lost)
        if self._transport is not None:
            self._transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._refusal is not None:
            self.drop(RedisUnavailable(f"Redis refused the connection: {self._refusal}"))
        else:
            self.drop(RedisUnavailable(f"connection to Redis closed: {exc or 'by the server'}"))
