"""The services' Redis client: one pipelined connection, hiredis to pack and parse.

Under load redis-py spent more CPU per command than the command itself: the pool, the
retry wrapper, a timeout context per call and its metrics hooks made Redis access a
third of the engine's CPU and more of the lobby's (CPU samples at 500 bench tables).
Services use a dozen commands, so they send them over one connection instead: each
command is packed by hiredis and written at once, and replies, parsed by hiredis, are
matched in order to a queue of futures. Any number of requests share the connection
(pipelining), so there is no pool to size or run dry, and a burst of commands that
arrive together leaves in one write.

The methods mirror redis-py's for the commands we use (``hmget``, ``zadd``,
``register_script``...), and return what redis-py returns, so the stores read the same.

Failures: a dropped connection fails every command in flight with
:class:`RedisUnavailable` and the next command connects again. A command whose reply
takes longer than ``command_timeout`` means the server or the path to it is stuck: the
connection is dropped the same way, so nothing waits forever. What Redis says when it
refuses us (``DENIED`` in protected mode, ``NOAUTH``, ``WRONGPASS``) reaches the caller
word for word.

Where to connect (the URL, TLS, Sentinel): :mod:`kalaro.bus.redis_address` and
:mod:`kalaro.bus.redis_connector`; the socket itself: :mod:`kalaro.bus.redis_protocol`.
The names callers use are all importable from here.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any

from kalaro.bus.redis_address import RedisAddress, TlsOptions, tls_options
from kalaro.bus.redis_connector import Connector
from kalaro.bus.redis_protocol import (
    Arg,
    RedisConnection,
    RedisError,
    RedisUnavailable,
    ResponseError,
    pack,
)

log = logging.getLogger("kalaro.redis")

CONNECT_TIMEOUT = 5.0
COMMAND_TIMEOUT = 10.0


class RedisLink:
    """A Redis client for services: ``await link.execute("GET", key)`` and friends.

    Connects on first use (and again after a drop). ``aclose`` ends it.
    """

    def __init__(
        self,
        url: str,
        *,
        connect_timeout: float = CONNECT_TIMEOUT,
        command_timeout: float = COMMAND_TIMEOUT,
        tls: TlsOptions | None = None,
    ) -> None:
        self._address = RedisAddress(url)
        self._connector = Connector(self._address, tls or TlsOptions(), connect_timeout)
        self._command_timeout = command_timeout
        self._conn: RedisConnection | None = None
        self._connecting: asyncio.Lock | None = None
        self._watchdog: asyncio.Task[None] | None = None
        self._closed = False

    def __repr__(self) -> str:
        return f"RedisLink({self._address})"

    @property
    def master(self) -> tuple[str, int] | None:
        """Where the sentinels sent us last (None without Sentinel)."""
        return self._connector.master

    # --- the core -----------------------------------------------------------------

    async def execute(self, *args: Arg) -> Any:
        """Send one command; its reply (bytes, int, list or None), or raise."""
        conn = self._conn
        if conn is None or not conn.usable:
            conn = await self._connect()
        (future,) = conn.send(pack(args))
        try:
            return await future
        except ResponseError as exc:
            # A demoted master refused a write (Sentinel failed over): nothing was
            # applied, so ask the sentinels for the new master and send it there once.
            if not self._address.sentinels or not str(exc).startswith("READONLY"):
                raise
            log.warning("%s: %s; asking the sentinels for the master again", self, exc)
        conn = await self._connect()
        (future,) = conn.send(pack(args))
        return await future

    async def execute_many(self, commands: Iterable[tuple[Arg, ...]]) -> list[Any]:
        """Send several commands in one write; their replies, in order. If any command
        failed, the first error is raised once every reply is in."""
        packed = [pack(command) for command in commands]
        if not packed:
            return []
        conn = self._conn
        if conn is None or not conn.usable:
            conn = await self._connect()
        futures = conn.send(b"".join(packed), replies=len(packed))
        results = await asyncio.gather(*futures, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return results

    async def _connect(self) -> RedisConnection:
        if self._closed:
            raise RedisUnavailable("this Redis client is closed")
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if self._conn is not None and self._conn.usable:
                return self._conn  # another caller connected while we waited
            conn = await self._connector.connect()
            if self._conn is not None and self._conn.retired:
                self._conn.drop(RedisUnavailable("the server is no longer the master"))
            self._conn = conn
            if self._watchdog is None or self._watchdog.done():
                self._watchdog = asyncio.create_task(self._watch(), name="redis-watchdog")
            return conn

    async def _watch(self) -> None:
        """Drop a connection whose oldest command has waited past the timeout."""
        while not self._closed:
            await asyncio.sleep(min(1.0, self._command_timeout / 4))
            conn = self._conn
            if conn is not None and conn.oldest_wait() > self._command_timeout:
                log.warning("Redis gave no reply in %.0f s; reconnecting", self._command_timeout)
                conn.drop(RedisUnavailable(f"no reply from Redis in {self._command_timeout} s"))

    async def aclose(self) -> None:
        self._closed = True
        if self._conn is not None:
            self._conn.drop(RedisUnavailable("the Redis client was closed"))
            self._conn = None
        if self._watchdog is not None:
            self._watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watchdog
            self._watchdog = None

    # --- commands, as redis-py names and returns them -----------------------------

    async def ping(self) -> bool:
        return bool(await self.execute("PING") == b"PONG")

    async def get(self, key: str) -> bytes | None:
        result: bytes | None = await self.execute("GET", key)
        return result

    async def set(self, key: str, value: Arg, *, px: int | None = None) -> bool:
        args: tuple[Arg, ...] = ("SET", key, value) if px is None else ("SET", key, value, "PX", px)
        return bool(await self.execute(*args) == b"OK")

    async def delete(self, *keys: str) -> int:
        return int(await self.execute("DEL", *keys))

    async def exists(self, *keys: str) -> int:
        return int(await self.execute("EXISTS", *keys))

    async def keys(self, pattern: str = "*") -> list[bytes]:
        return list(await self.execute("KEYS", pattern))

    async def hset(self, key: str, field: str, value: Arg) -> int:
        return int(await self.execute("HSET", key, field, value))

    async def hmget(self, key: str, fields: Iterable[str]) -> list[bytes | None]:
        return list(await self.execute("HMGET", key, *fields))

    async def hgetall(self, key: str) -> dict[bytes, bytes]:
        flat = await self.execute("HGETALL", key)
        return dict(zip(flat[::2], flat[1::2], strict=True))

    async def zadd(self, key: str, mapping: Mapping[str, int | float]) -> int:
        args: list[Arg] = ["ZADD", key]
        for member, score in mapping.items():
            args += (score, member)
        return int(await self.execute(*args))

    async def zrem(self, key: str, *members: str) -> int:
        return int(await self.execute("ZREM", key, *members))

    async def zcard(self, key: str) -> int:
        return int(await self.execute("ZCARD", key))

    async def zrange(self, key: str, start: int, stop: int) -> list[bytes]:
        return list(await self.execute("ZRANGE", key, start, stop))

    async def zrevrange(self, key: str, start: int, stop: int) -> list[bytes]:
        return list(await self.execute("ZREVRANGE", key, start, stop))

    def register_script(self, source: str) -> Script:
        return Script(self, source)

    def pipeline(self, transaction: bool = False) -> Pipeline:
        if transaction:
            raise ValueError("RedisLink pipelines are not transactions; use a Lua script")
        return Pipeline(self)


class Script:
    """A Lua script run by its SHA1 (``EVALSHA``), sent whole once the server lacks it."""

    def __init__(self, link: RedisLink, source: str) -> None:
        self._link = link
        self._source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    async def __call__(self, keys: Iterable[str] = (), args: Iterable[Arg] = ()) -> Any:
        keys = tuple(keys)
        args = tuple(args)
        try:
            return await self._link.execute("EVALSHA", self.sha, len(keys), *keys, *args)
        except ResponseError as exc:
            if not str(exc).startswith("NOSCRIPT"):
                raise
            # A restarted or new server: EVAL runs the script and caches it there.
            return await self._link.execute("EVAL", self._source, len(keys), *keys, *args)


class Pipeline:
    """Commands collected, then sent in one write by ``execute`` (no transaction)."""

    def __init__(self, link: RedisLink) -> None:
        self._link = link
        self._commands: list[tuple[Arg, ...]] = []

    async def __aenter__(self) -> Pipeline:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._commands.clear()

    def hmget(self, key: str, fields: Iterable[str]) -> Pipeline:
        self._commands.append(("HMGET", key, *fields))
        return self

    async def execute(self) -> list[Any]:
        commands, self._commands = self._commands, []
        return await self._link.execute_many(commands)


__all__ = [
    "Pipeline",
    "RedisAddress",
    "RedisError",
    "RedisLink",
    "RedisUnavailable",
    "ResponseError",
    "Script",
    "TlsOptions",
    "tls_options",
]
