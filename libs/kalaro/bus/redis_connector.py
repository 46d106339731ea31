"""Reaching the Redis server to send commands to: open a socket, log in, and through
Sentinel find the master.

:class:`Connector` turns a :class:`~kalaro.bus.redis_address.RedisAddress` into a ready
:class:`~kalaro.bus.redis_protocol.RedisConnection`: for a plain URL the server it names,
after ``AUTH`` and ``SELECT``; for a Sentinel URL it asks the sentinels in turn where
the master is (``SENTINEL get-master-addr-by-name``), connects there and checks that the
server says ``ROLE`` master (during a failover the old one may still be named). It is
asked again on every reconnect, so after a failover the next connection reaches the new
master. Any failure is a :class:`RedisUnavailable` naming where and why.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from typing import Any

from kalaro.bus.redis_address import RedisAddress, TlsOptions
from kalaro.bus.redis_protocol import (
    Arg,
    RedisConnection,
    RedisUnavailable,
    ResponseError,
    pack,
)

log = logging.getLogger("kalaro.redis")


class Connector:
    """Opens connections to the Redis an address names (the master, through Sentinel)."""

    def __init__(self, address: RedisAddress, tls: TlsOptions, connect_timeout: float) -> None:
        self.address = address
        self._ssl: ssl.SSLContext | None = tls.context() if address.tls else None
        self._timeout = connect_timeout
        self.master: tuple[str, int] | None = None  # where the sentinels sent us last

    async def connect(self) -> RedisConnection:
        """A connection, logged in, to the server commands go to."""
        address = self.address
        if address.sentinels:
            return await self._connect_master()
        conn = await self._open(address.host, address.port, address.unix_path)
        await self._handshake(conn, str(address))
        return conn

    async def _open(self, host: str, port: int, unix_path: str | None = None) -> RedisConnection:
        loop = asyncio.get_running_loop()
        where = unix_path or f"{host}:{port}"
        try:
            if unix_path is not None:
                opening = loop.create_unix_connection(lambda: RedisConnection(loop), unix_path)
            else:
                opening = loop.create_connection(
                    lambda: RedisConnection(loop),
                    host,
                    port,
                    ssl=self._ssl,
                    server_hostname=host if self._ssl is not None else None,
                )
            _, conn = await asyncio.wait_for(opening, self._timeout)
        except (TimeoutError, OSError) as exc:
            raise RedisUnavailable(f"cannot reach redis at {where}: {exc or 'timed out'}") from exc
        return conn

    async def _ask(
        self, conn: RedisConnection, command: tuple[Arg, ...], where: str, *, keep: bool = False
    ) -> Any:
        """One command on a connection being set up; Redis's refusal word for word (the
        connection is dropped on it unless ``keep``)."""
        (reply,) = conn.send(pack(command))
        name = str(command[0])
        try:
            return await asyncio.wait_for(reply, self._timeout)
        except ResponseError as exc:
            if not keep:
                conn.drop(RedisUnavailable(str(exc)))
            raise RedisUnavailable(f"{where} refused {name}: {exc}") from exc
        except TimeoutError as exc:
            conn.drop(RedisUnavailable("no reply"))
            raise RedisUnavailable(f"{where}: no reply to {name}") from exc

    async def _handshake(self, conn: RedisConnection, where: str) -> None:
        address = self.address
        if address.password is not None:
            await self._ask(conn, ("AUTH", address.username or "default", address.password), where)
        if address.db:
            await self._ask(conn, ("SELECT", address.db), where)

    async def _role(self, conn: RedisConnection, where: str) -> str:
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

    async def _ask_sentinel(self, host: str, port: int) -> Any:
        """Where one sentinel says the master is (``[host, port]``, or None)."""
        address = self.address
        where = f"sentinel {host}:{port}"
        sentinel = await self._open(host, port)
        try:
            if address.sentinel_password is not None:
                auth = ("AUTH", address.sentinel_username or "default")
                await self._ask(sentinel, (*auth, address.sentinel_password), where)
            return await self._ask(
                sentinel, ("SENTINEL", "get-master-addr-by-name", address.master_name), where
            )
        finally:
            sentinel.drop(RedisUnavailable("sentinel query done"))

    async def _connect_master(self) -> RedisConnection:
        """Ask the sentinels, in turn, where the master is; connect there if it says it
        is the master (during a failover the old one may still be named)."""
        address = self.address
        problems: list[str] = []
        for index, (host, port) in enumerate(address.sentinels):
            try:
                found = await self._ask_sentinel(host, port)
            except RedisUnavailable as exc:
                problems.append(str(exc))
                continue
            if not found:
                problems.append(f"sentinel {host}:{port} knows no master named "
                                f"{address.master_name!r}")  # fmt: skip
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
