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

URLs (``KALARO_REDIS_URL``):

- ``redis://[[user]:password@]host[:port][/db]`` (or ``?db=N``); ``rediss://`` for TLS;
  ``unix:///path/to/redis.sock[?db=N]``.
- Sentinel (high availability):
  ``redis+sentinel://[[user]:password@]host1:26379,host2:26379,host3:26379/<master>[/db]``
  (``rediss+sentinel://`` for TLS to the sentinels and the master). The user and
  password are the master's (``AUTH``); ``?sentinel_password=...`` (and
  ``&sentinel_username=...``) authenticate to the sentinels when they require it. The
  client asks the sentinels in turn for the master (``SENTINEL
  get-master-addr-by-name``), checks that the server there says ``ROLE`` master, and
  asks again on every reconnect, so after a failover the next command reaches the new
  master. A ``READONLY`` reply (we reached a demoted master) drops the connection and
  the command is sent once more to the master the sentinels name now.

TLS options (certificate authority, client certificate, how strictly to verify) come
from :class:`TlsOptions`, built from settings by :func:`tls_options`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import ssl
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, cast
from urllib.parse import parse_qs, unquote, urlsplit

import hiredis

if TYPE_CHECKING:
    from kalaro.settings import Settings

log = logging.getLogger("kalaro.redis")

CONNECT_TIMEOUT = 5.0
COMMAND_TIMEOUT = 10.0

Arg = bytes | str | int | float
# hiredis' stub types the argument as a 1-tuple; it takes any number of arguments.
_pack = cast(Callable[[tuple[Arg, ...]], bytes], hiredis.pack_command)


class RedisError(Exception):
    """Anything that went wrong talking to Redis."""


class ResponseError(RedisError):
    """Redis answered with an error (``-ERR ...``, ``-NOSCRIPT ...``)."""


class RedisUnavailable(RedisError, ConnectionError):
    """No connection to Redis, or it dropped before the reply came."""


Verify = Literal["full", "ca", "none"]


@dataclass(frozen=True)
class TlsOptions:
    """How ``rediss://`` connections are secured.

    ``verify``: ``full`` checks the server's certificate against ``ca_file`` (or the
    system's authorities) and its name against the host; ``ca`` checks the certificate
    but not the name (a master found through Sentinel is named by its IP address, which
    certificates seldom list); ``none`` encrypts without checking anything (tests only).
    ``cert_file``/``key_file``: a client certificate, for servers with
    ``tls-auth-clients yes``.
    """

    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    verify: Verify = "full"

    def context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=self.ca_file or None)
        if self.verify != "full":
            context.check_hostname = False
        if self.verify == "none":
            context.verify_mode = ssl.CERT_NONE
        if self.cert_file:
            context.load_cert_chain(self.cert_file, self.key_file or None)
        return context


def tls_options(settings: Settings) -> TlsOptions:
    """The TLS options in ``KALARO_REDIS_TLS_*`` settings."""
    return TlsOptions(
        ca_file=settings.redis_tls_ca_file,
        cert_file=settings.redis_tls_cert_file,
        key_file=settings.redis_tls_key_file,
        verify=settings.redis_tls_verify,
    )


_SCHEMES = ("redis", "rediss", "unix", "redis+sentinel", "rediss+sentinel")


class _Address:
    """Where and how to connect, from a ``redis://``, ``rediss://``, ``unix://`` or
    ``redis+sentinel://`` URL (see the module's documentation)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        query = parse_qs(parts.query)
        if parts.scheme not in _SCHEMES:
            raise ValueError(
                f"not a Redis URL: {url!r} (redis://, rediss://, unix:// or redis+sentinel://)"
            )
        self.unix_path = parts.path if parts.scheme == "unix" else None
        self.tls = parts.scheme.startswith("rediss")
        self.sentinels: list[tuple[str, int]] = []
        self.master_name = ""
        self.sentinel_username = query.get("sentinel_username", [""])[0] or None
        self.sentinel_password = query.get("sentinel_password", [""])[0] or None
        userinfo, _, hosts = parts.netloc.rpartition("@")
        user, _, password = userinfo.partition(":")
        self.username = unquote(user) if user else None
        self.password = unquote(password) if password else None
        db = query.get("db", [""])[0]
        if parts.scheme.endswith("+sentinel"):
            # urlsplit cannot read several hosts; the netloc is split by hand.
            for host in hosts.split(","):
                name, port = _host_port(host.strip(), 26379)
                self.sentinels.append((name, port))
            path = [p for p in parts.path.split("/") if p]
            if not path or not self.sentinels:
                raise ValueError(f"a Sentinel URL names sentinels and a master: {url!r}")
            self.master_name = unquote(path[0])
            db = db or (path[1] if len(path) > 1 else "")
            self.host, self.port = "", 0  # the master: found when connecting
        else:
            self.host = parts.hostname or "127.0.0.1"
            self.port = parts.port or 6379
            db = db or (parts.path.strip("/") if parts.scheme != "unix" else "")
        self.db = int(db or 0)

    def __str__(self) -> str:
        if self.sentinels:
            where = ",".join(f"{h}:{p}" for h, p in self.sentinels)
            return f"redis master {self.master_name!r} via sentinels {where} (db {self.db})"
        where = self.unix_path or f"{self.host}:{self.port}"
        return f"redis at {where} (db {self.db})"


def _host_port(text: str, default_port: int) -> tuple[str, int]:
    if text.startswith("["):  # [::1]:26379
        host, _, rest = text[1:].partition("]")
        return host, int(rest.lstrip(":") or default_port)
    host, _, port = text.rpartition(":") if ":" in text else (text, "", "")
    return host or "127.0.0.1", int(port or default_port)


class _Connection(asyncio.Protocol):
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
        self._address = _Address(url)
        self._tls = tls or TlsOptions()
        self._ssl: ssl.SSLContext | None = self._tls.context() if self._address.tls else None
        self.master: tuple[str, int] | None = None  # where the sentinels sent us last
        self._connect_timeout = connect_timeout
        self._command_timeout = command_timeout
        self._conn: _Connection | None = None
        self._connecting: asyncio.Lock | None = None
        self._watchdog: asyncio.Task[None] | None = None
        self._closed = False

    def __repr__(self) -> str:
        return f"RedisLink({self._address})"

    # --- the core -----------------------------------------------------------------

    async def execute(self, *args: Arg) -> Any:
        """Send one command; its reply (bytes, int, list or None), or raise."""
        conn = self._conn
        if conn is None or not conn.usable:
            conn = await self._connect()
        (future,) = conn.send(_pack(args))
        try:
            return await future
        except ResponseError as exc:
            # A demoted master refused a write (Sentinel failed over): nothing was
            # applied, so ask the sentinels for the new master and send it there once.
            if not self._address.sentinels or not str(exc).startswith("READONLY"):
                raise
            log.warning("%s: %s; asking the sentinels for the master again", self, exc)
        conn = await self._connect()
        (future,) = conn.send(_pack(args))
        return await future

    async def execute_many(self, commands: Iterable[tuple[Arg, ...]]) -> list[Any]:
        """Send several commands in one write; their replies, in order. If any command
        failed, the first error is raised once every reply is in."""
        packed = [_pack(command) for command in commands]
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

    async def _connect(self) -> _Connection:
        if self._closed:
            raise RedisUnavailable("this Redis client is closed")
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if self._conn is not None and self._conn.usable:
                return self._conn  # another caller connected while we waited
            address = self._address
            if address.sentinels:
                conn = await self._connect_master()
            else:
                conn = await self._open(address.host, address.port, address.unix_path)
                await self._handshake(conn, str(address))
            if self._conn is not None and self._conn.retired:
                self._conn.drop(RedisUnavailable("the server is no longer the master"))
            self._conn = conn
            if self._watchdog is None or self._watchdog.done():
                self._watchdog = asyncio.create_task(self._watch(), name="redis-watchdog")
            return conn

    async def _open(self, host: str, port: int, unix_path: str | None = None) -> _Connection:
        loop = asyncio.get_running_loop()
        where = unix_path or f"{host}:{port}"
        try:
            if unix_path is not None:
                opening = loop.create_unix_connection(lambda: _Connection(loop), unix_path)
            else:
                opening = loop.create_connection(
                    lambda: _Connection(loop),
                    host,
                    port,
                    ssl=self._ssl,
                    server_hostname=host if self._ssl is not None else None,
                )
            _, conn = await asyncio.wait_for(opening, self._connect_timeout)
        except (TimeoutError, OSError) as exc:
            raise RedisUnavailable(f"cannot reach redis at {where}: {exc or 'timed out'}") from exc
        return conn

    async def _ask(
        self, conn: _Connection, command: tuple[Arg, ...], where: str, *, keep: bool = False
    ) -> Any:
        """One command on a connection being set up; Redis's refusal word for word (the
        connection is dropped on it unless ``keep``)."""
        (reply,) = conn.send(_pack(command))
        name = str(command[0])
        try:
            return await asyncio.wait_for(reply, self._connect_timeout)
        except ResponseError as exc:
            if not keep:
                conn.drop(RedisUnavailable(str(exc)))
            raise RedisUnavailable(f"{where} refused {name}: {exc}") from exc
        except TimeoutError as exc:
            conn.drop(RedisUnavailable("no reply"))
            raise RedisUnavailable(f"{where}: no reply to {name}") from exc

    async def _handshake(self, conn: _Connection, where: str) -> None:
        address = self._address
        if address.password is not None:
            await self._ask(conn, ("AUTH", address.username or "default", address.password), where)
        if address.db:
            await self._ask(conn, ("SELECT", address.db), where)

    async def _role(self, conn: _Connection, where: str) -> str:
        """The server's ROLE; "master" when an ACL forbids the command (ROLE is in
        @admin): then the sentinels' word stands, and a READONLY reply still finds a
        demoted master."""
        try:
            reply = await self._ask(conn, ("ROLE",), where, keep=True)
        except RedisUnavailable as exc:
            if not isinstance(exc.__cause__, ResponseError) or "NOPERM" not in str(exc):
                conn.drop(exc)
                raise
            log.info("%s: ROLE not permitted; trusting the sentinels", where)
            return "master"
        return str(reply[0].decode())

    async def _connect_master(self) -> _Connection:
        """Ask the sentinels, in turn, where the master is; connect there if it says it
        is the master (during a failover the old one may still be named)."""
        address = self._address
        problems: list[str] = []
        for index, (host, port) in enumerate(address.sentinels):
            where = f"sentinel {host}:{port}"
            try:
                sentinel = await self._open(host, port)
                try:
                    if address.sentinel_password is not None:
                        auth = ("AUTH", address.sentinel_username or "default")
                        await self._ask(sentinel, (*auth, address.sentinel_password), where)
                    found = await self._ask(
                        sentinel,
                        ("SENTINEL", "get-master-addr-by-name", address.master_name),
                        where,
                    )
                finally:
                    sentinel.drop(RedisUnavailable("sentinel query done"))
            except RedisUnavailable as exc:
                problems.append(str(exc))
                continue
            if not found:
                problems.append(f"{where} knows no master named {address.master_name!r}")
                continue
            master = (found[0].decode(), int(found[1]))
            where = f"redis master {master[0]}:{master[1]}"
            try:
                conn = await self._open(*master)
                await self._handshake(conn, where)
                role = await self._role(conn, where)
            except RedisUnavailable as exc:
                problems.append(str(exc))
                continue
            if role != "master":
                conn.drop(RedisUnavailable("not the master"))
                problems.append(f"{where} (named by {host}:{port}) is a {role}")
                continue
            if index:  # ask the sentinel that answered first next time
                address.sentinels.insert(0, address.sentinels.pop(index))
            if master != self.master:
                if self.master is not None:
                    log.warning(
                        "Redis master %r moved from %s:%d to %s:%d",
                        address.master_name, *self.master, *master,
                    )  # fmt: skip
                self.master = master
            return conn
        raise RedisUnavailable(f"no master for {address}: {'; '.join(problems)}")

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
    "RedisError",
    "RedisLink",
    "RedisUnavailable",
    "ResponseError",
    "Script",
    "TlsOptions",
    "tls_options",
]
