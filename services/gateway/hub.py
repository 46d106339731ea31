"""The gateway process's registry of open sockets and table feeds, and its chores.

The :class:`Hub` creates a table's :class:`~services.gateway.table_feed.TableFeed` when
a socket first subscribes to it and drops it with the last one; counts each account's
sockets (a per-account limit); and runs what concerns all sockets at once: one reaper
task per gateway closes sockets that have sent nothing for too long (so reading a frame
costs no timer) and refreshes the audience marks of the tables watched here; after the
NATS connection comes back it resends every table its current state; a revoked session
has its sockets closed.

The fan-out of a table's messages is in :mod:`services.gateway.table_feed`; one
socket's outbound queue in :mod:`services.gateway.connection`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from nats.aio.client import Client as NATS

from kalaro.bus.redislink import RedisLink
from kalaro.proto import subjects
from kalaro.proto.lobby import TableInfo
from services.gateway.connection import Connection
from services.gateway.presence import PresenceReporter
from services.gateway.table_feed import TableFeed

log = logging.getLogger("kalaro.gateway.hub")

#: Tables resent at once after the NATS connection came back (each asks the lobby and
#: an engine): thousands of tables must not all ask in the same instant.
RESYNC_AT_ONCE = 16


class Hub:
    """Every open socket and table feed of this gateway process."""

    def __init__(
        self,
        nc: NATS,
        presence: PresenceReporter | None = None,
        redis: RedisLink | None = None,
        *,
        namespace: str = "",
    ) -> None:
        self._nc = nc
        self.namespace = namespace  # prefixes its Redis marks (tests share one server)
        self.presence = presence
        self._redis = redis  # audience marks; without it, engines must publish it always
        self._feeds: dict[str, TableFeed] = {}
        self._lock = asyncio.Lock()
        self.connections: set[Connection] = set()  # every open socket, for the reaper
        self._open_by_user: dict[str, int] = {}
        self._resync: asyncio.Task[None] | None = None
        self._resync_again = False

    def admit(self, conn: Connection, per_user: int) -> bool:
        """Count a signed-in socket in, unless its account already holds ``per_user``
        here (0: no limit): one token must not hold a process's memory and descriptors."""
        held = self._open_by_user.get(conn.user_id, 0)
        if per_user and held >= per_user:
            return False
        self._open_by_user[conn.user_id] = held + 1
        self.connections.add(conn)
        return True

    def discard(self, conn: Connection) -> None:
        """A socket admitted here has gone."""
        if conn not in self.connections:
            return
        self.connections.discard(conn)
        held = self._open_by_user.pop(conn.user_id, 1) - 1
        if held > 0:
            self._open_by_user[conn.user_id] = held

    async def mark_watched(self, table_ids: list[str]) -> None:
        """Tell the engines these tables have a spectator here (for the next TTL)."""
        if self._redis is None or not table_ids:
            return
        try:
            await self._redis.execute_many(
                (
                    "SET",
                    self.namespace + subjects.table_audience_key(t),
                    b"1",
                    "PX",
                    subjects.AUDIENCE_TTL_MS,
                )
                for t in table_ids
            )
        except Exception:
            log.warning("could not mark %d tables watched", len(table_ids), exc_info=True)

    async def reap_idle(self, idle_seconds: float, every: float) -> None:
        """Forever: close sockets that have sent nothing (not even a ping) for
        ``idle_seconds``, checking every ``every`` seconds; and refresh the marks of the
        tables watched here (at least three times per mark's lifetime)."""
        every = min(every, subjects.AUDIENCE_TTL_MS / 3000)
        while True:
            await asyncio.sleep(every)
            await self.mark_watched([t for t, f in self._feeds.items() if f.spectators])
            quiet_since = time.monotonic() - idle_seconds
            for conn in [c for c in self.connections if c.last_heard < quiet_since]:
                log.info(
                    "socket of %s was silent for %.0f s; closing it", conn.user_id, idle_seconds
                )
                conn.close()

    def resync_soon(self) -> None:
        """Resend every table here its current state, in the background (call when the
        tables' NATS connection is back; calls while one runs make it run once more)."""
        if self._resync is not None and not self._resync.done():
            self._resync_again = True
            return
        self._resync = asyncio.create_task(self._resync_all(), name="gateway-resync")

    async def _resync_all(self) -> None:
        slots = asyncio.Semaphore(RESYNC_AT_ONCE)

        async def one(feed: TableFeed) -> bool:
            async with slots:
                try:
                    await feed.resync()
                except Exception as exc:
                    log.debug("table %s not resent: %r", feed.table_id, exc)
                    return False
                return True

        while True:
            self._resync_again = False
            feeds = list(self._feeds.values())
            done = await asyncio.gather(*(one(f) for f in feeds))
            failed = done.count(False)
            if failed:
                log.warning(
                    "NATS is back; %d of %d tables here could not be resent their state "
                    "(their next change will show it)",
                    failed,
                    len(feeds),
                )
            elif feeds:
                log.info("NATS is back; resent %d tables their current state", len(feeds))
            if not self._resync_again:
                return

    async def stop(self) -> None:
        if self._resync is not None:
            self._resync.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._resync

    def close_session(self, session: str) -> int:
        """Close every socket of a revoked session (code 4401); how many there were."""
        doomed = [c for c in self.connections if session and c.session == session]
        for conn in doomed:
            conn.close_code = 4401
            conn.close()
        return len(doomed)

    def feed(self, table_id: str) -> TableFeed | None:
        return self._feeds.get(table_id)

    async def join(self, conn: Connection, table: TableInfo) -> int | None:
        async with self._lock:
            feed = self._feeds.get(table.table_id)
            if feed is None:
                feed = TableFeed(self._nc, table, self.presence, self.mark_watched)
                self._feeds[table.table_id] = feed
            else:
                await feed.take_table(table)  # newer: the others' seats may have moved
            seat = feed.attach(conn)
            # Subscribed first: the lobby publishes the table when this report changes a
            # seat's presence, and a frame published before the subscription is lost for
            # good (the lobby's later re-reports change nothing, so it says it only once).
            await feed.sync_subscriptions()
            feed.announce()
            return seat

    async def leave(self, conn: Connection, table_id: str) -> None:
        async with self._lock:
            conn.seats.pop(table_id, None)
            feed = self._feeds.get(table_id)
            if feed is None:
                return
            feed.detach(conn)
            feed.announce()
            await feed.sync_subscriptions()
            if feed.empty:
                del self._feeds[table_id]

    async def leave_all(self, conn: Connection) -> None:
        for table_id in list(conn.seats):
            await self.leave(conn, table_id)
