"""WebSocket fan-out: one NATS subscription per table per gateway process.

Engines and the lobby publish finished client frames on per-table subjects:
``table.<id>.frames`` (one message per move: every seat's private frame and, while
someone watches, the audience's, see :mod:`kalaro.proto.frames`) and
``table.<id>.events`` (table changes, chat, results). A :class:`TableFeed` holds one
subscription (``table.<id>.>``) while it has a socket, and forwards each part as
received: a seat's part only to the sockets of the user sitting there, the audience
part only to spectators, events to everyone. Each part is encoded once, by the engine;
the gateway never re-encodes it. A gateway thus receives the seat parts of seats not
connected to it (the backend is trusted); no socket is ever given another seat's part.

Each socket has a bounded outbound queue drained by its own writer task, so one
slow client can never stall the fan-out; a client that falls too far behind is
disconnected and, on reconnecting, gets a full view. One reaper task per gateway
closes sockets that have sent nothing for too long, so reading a frame costs no timer.

Engines build the audience view only while some gateway marks the table watched (a
Redis key with a TTL, ``subjects.table_audience_key``): a feed sets it when its first
spectator arrives, and the hub refreshes it for every table with a spectator here.
The order (subscribe, flush, mark, then the socket asks for the current view) is what
makes a spectator joining mid-hand miss nothing; see the engine's ``_publish_views``.

Whenever the seated players with a socket on a table here change (a socket subscribes,
leaves or closes; someone sits down or stands up), the feed tells the
:class:`~services.gateway.presence.PresenceReporter`, which reports it to the lobby in
the background.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

import msgspec
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from kalaro.bus import RemoteError
from kalaro.bus import request as bus_request
from kalaro.bus.redislink import RedisLink
from kalaro.proto import endpoints, subjects
from kalaro.proto import errors as codes
from kalaro.proto.engine import GetView
from kalaro.proto.frames import decode_frames
from kalaro.proto.lobby import GetTable, TableInfo
from kalaro.proto.ws import TableChanged
from services.gateway.presence import PresenceReporter

log = logging.getLogger("kalaro.gateway.hub")

_table_changed = msgspec.json.Decoder(TableChanged)
_encode = msgspec.json.Encoder().encode
#: Tables resent at once after the NATS connection came back (each asks the lobby and
#: an engine): thousands of tables must not all ask in the same instant.
RESYNC_AT_ONCE = 16
_TABLE_FRAME_PREFIX = b'{"type":"table"'

OUTBOX_LIMIT = 256


class Flag:
    """``asyncio.Event`` without its deque of waiters: a future only while someone waits."""

    __slots__ = ("_future", "_value")

    def __init__(self) -> None:
        self._value = False
        self._future: asyncio.Future[None] | None = None

    def is_set(self) -> bool:
        return self._value

    def set(self) -> None:
        if not self._value:
            self._value = True
            future, self._future = self._future, None
            if future is not None and not future.done():
                future.set_result(None)

    def clear(self) -> None:
        self._value = False

    async def wait(self) -> bool:
        if self._value:
            return True
        if self._future is None:
            self._future = asyncio.get_running_loop().create_future()
        # Shielded: one waiter's cancellation must not cancel the others' future.
        await asyncio.shield(self._future)
        return True


class Connection:
    """One client socket: who it is, what it watches, and its outbound queue.

    The queue is a plain list with one waiter: ``asyncio.Queue`` cost a few
    microseconds per frame more, and every move fans out to several sockets.

    With ``write_now`` (the server can write encoded frames synchronously, see
    ``wsserver``), frames skip the writer task: whatever was pushed during one turn of
    the event loop goes out in one write from a ``call_soon`` callback. The writer task
    still sends whatever ``write_now`` declines (the socket is paused or closing); with
    ``write_now`` it is only started then, so an idle socket costs no task of its own.
    """

    # Slots: an idle socket's Connection is most of what the gateway holds for it.
    __slots__ = (
        "_flush_pending",
        "_outbox",
        "_send",
        "_wakeup",
        "_write_now",
        "_writer",
        "close_code",
        "closed",
        "display_name",
        "last_heard",
        "on_close",
        "seats",
        "session",
        "user_id",
    )

    def __init__(
        self,
        user_id: str,
        display_name: str,
        send: Callable[[bytes], Awaitable[None]],
        session: str = "",
        write_now: Callable[[list[bytes]], bool] | None = None,
    ):
        self.user_id = user_id
        self.session = session  # the access token's sid: closed when it is revoked
        self.close_code = 1000  # what the socket's handler says when it closes it
        self.display_name = display_name
        self._send = send
        self._write_now = write_now
        self._flush_pending = False
        self._outbox: list[bytes] = []  # [] is 56 bytes, an empty deque 0.6 KiB
        self._wakeup: asyncio.Future[None] | None = None
        self._writer: asyncio.Task[None] | None = None
        self.seats: dict[str, int | None] = {}  # table id -> seat (None: spectator)
        self.closed = Flag()
        # What ends the socket itself (its server's close, with close_code), on close().
        self.on_close: Callable[[], None] | None = None
        self.last_heard = time.monotonic()  # when the client last sent a frame

    def start(self) -> None:
        if self._write_now is None:  # every frame goes through the writer: start it now
            self._start_writer()

    def _start_writer(self) -> None:
        if self._writer is None and not self.closed.is_set():
            self._writer = asyncio.create_task(self._write_loop())

    def push(self, frame: bytes) -> None:
        if self.closed.is_set():
            return
        if len(self._outbox) >= OUTBOX_LIMIT:
            log.warning("socket of %s is too slow; disconnecting it", self.user_id)
            self.close()
            return
        self._outbox.append(frame)
        if self._write_now is not None:
            if not self._flush_pending:
                self._flush_pending = True
                asyncio.get_running_loop().call_soon(self._flush)
            return
        self._wake()

    def _flush(self) -> None:
        self._flush_pending = False
        outbox = self._outbox
        if self.closed.is_set() or not outbox:
            return
        # Nothing of the writer's is in flight: it was never needed, or waits for more.
        idle = self._writer is None or (self._wakeup is not None and not self._wakeup.done())
        if idle and self._write_now is not None:
            try:
                written = self._write_now(list(outbox))
            except Exception:
                log.debug("socket write failed", exc_info=True)
                self.close()
                return
            if written:
                outbox.clear()
                return
        self._start_writer()
        self._wake()  # the writer sends them, in order, after what it is sending

    def close(self) -> None:
        """Stop sending (frames still queued are dropped), end the writer, and have the
        socket's server say goodbye (``on_close``), which then cleans up."""
        if not self.closed.is_set():
            self.closed.set()
            self._wake()
            if self.on_close is not None:
                self.on_close()

    def _wake(self) -> None:
        if self._wakeup is not None and not self._wakeup.done():
            self._wakeup.set_result(None)

    async def wait_closed(self) -> None:
        if self._writer is not None:
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer

    async def _write_loop(self) -> None:
        outbox = self._outbox
        loop = asyncio.get_running_loop()
        try:
            while not self.closed.is_set():
                if outbox:
                    await self._send(outbox.pop(0))  # at most OUTBOX_LIMIT long
                else:
                    self._wakeup = loop.create_future()
                    await self._wakeup
                    self._wakeup = None
        except Exception:
            log.debug("socket write failed", exc_info=True)
        finally:
            self.close()


def _sitters(table: TableInfo) -> tuple[str | None, ...]:
    return tuple(seat.user_id if seat is not None else None for seat in table.seats)


def seat_of(table: TableInfo, user_id: str) -> int | None:
    for index, seat in enumerate(table.seats):
        if seat is not None and seat.user_id == user_id:
            return index
    return None


class TableFeed:
    """One table's sockets in this gateway process, and the one NATS subscription they
    need (held while any socket is attached).

    Each message is split here: ``seated`` maps a seat to its sockets, so a move's
    frames cost one decode and one push per socket, with no lookup by user.
    """

    def __init__(
        self,
        nc: NATS,
        table: TableInfo,
        presence: PresenceReporter | None = None,
        mark_watched: Callable[[list[str]], Awaitable[None]] | None = None,
    ) -> None:
        self._nc = nc
        self._presence = presence
        self._mark_watched = mark_watched
        self.table_id = table.table_id
        self.game = table.game
        self.table = table
        self.seated: dict[int, set[Connection]] = {}
        self.spectators: set[Connection] = set()
        self._subscription: Subscription | None = None
        self._frames_subject = subjects.table_frames(table.table_id)
        self._watched = False  # marked watched for a spectator here (refreshed by the hub)
        self._syncing = asyncio.Lock()  # joins and table changes may sync at once

    @property
    def empty(self) -> bool:
        return not self.spectators and not any(self.seated.values())

    @property
    def subscribed(self) -> bool:
        return self._subscription is not None

    def attach(self, conn: Connection) -> int | None:
        self.detach(conn)
        seat = seat_of(self.table, conn.user_id)
        if seat is None:
            self.spectators.add(conn)
        else:
            self.seated.setdefault(seat, set()).add(conn)
        conn.seats[self.table_id] = seat
        return seat

    def detach(self, conn: Connection) -> None:
        self.spectators.discard(conn)
        for sockets in self.seated.values():
            sockets.discard(conn)

    def announce(self) -> None:
        """Tell the presence reporter who of the seated has a socket here now."""
        if self._presence is not None:
            users = frozenset(c.user_id for sockets in self.seated.values() for c in sockets)
            self._presence.seated(self.table_id, users)

    def everyone(self) -> list[Connection]:
        out = list(self.spectators)
        for sockets in self.seated.values():
            out.extend(sockets)
        return out

    async def sync_subscriptions(self) -> None:
        """Subscribe to what the attached sockets need; drop the rest."""
        async with self._syncing:
            await self._sync()

    async def _sync(self) -> None:
        if self.empty:
            self._watched = False
            if self._subscription is not None:
                subscription, self._subscription = self._subscription, None
                with contextlib.suppress(Exception):
                    await subscription.unsubscribe()
            return
        if self._subscription is None:
            self._subscription = await self._nc.subscribe(
                subjects.table_all(self.table_id), cb=self._on_message
            )
            # The server has the subscription before the socket asks for the current
            # view or the table is marked watched.
            await self._nc.flush()
        if not self.spectators:
            self._watched = False
        elif not self._watched:
            self._watched = True
            if self._mark_watched is not None:
                await self._mark_watched([self.table_id])

    async def _on_message(self, msg: Msg) -> None:
        if msg.subject == self._frames_subject:
            self.fan_out(msg.data)
        else:
            await self._on_event(msg)

    def fan_out(self, data: bytes) -> None:
        """One move's :class:`~kalaro.proto.frames.TableFrames`: each seated socket gets
        its seat's part, each spectator the audience part (when the engine built one)."""
        frames = decode_frames(data)
        parts = frames.seats
        count = len(parts)
        for seat, sockets in self.seated.items():
            if sockets and seat < count:
                part = parts[seat]
                for conn in tuple(sockets):  # a push may close a socket, which detaches it
                    conn.push(part)
        audience = frames.audience
        if audience is not None and self.spectators:
            for conn in tuple(self.spectators):
                conn.push(audience)

    async def _on_event(self, msg: Msg) -> None:
        if msg.data.startswith(_TABLE_FRAME_PREFIX):
            await self.take_table(_table_changed.decode(msg.data).table)
        for conn in self.everyone():
            conn.push(msg.data)

    async def take_table(self, table: TableInfo) -> None:
        """Hold ``table`` unless it is older than the one held."""
        if table.version < self.table.version:
            return
        seated_before = _sitters(self.table)
        self.table = table
        if _sitters(table) != seated_before:
            # Someone sat down or left: move sockets between seat and audience.
            # (Most table frames are Ready taps and hand ends: nothing to move.)
            for conn in self.everyone():
                self.attach(conn)
            self.announce()
            await self.sync_subscriptions()

    async def resync(self) -> None:
        """Send every socket here the table and its hand as they are now: what was
        published while this process's NATS connection was away never arrives, and the
        lobby and the engines publish only on change. (These sockets were let in when
        they subscribed, so the table is asked for without a caller.)"""
        table = await bus_request(
            self._nc, endpoints.LOBBY_GET_TABLE, GetTable(table_id=self.table_id)
        )
        await self.take_table(table)
        frame = _encode(TableChanged(table=self.table))
        for conn in self.everyone():
            conn.push(frame)
        if self.table.hand_id is None:
            return
        audiences: list[tuple[str | None, set[Connection]]] = [
            (next(iter(sockets)).user_id, sockets) for sockets in self.seated.values() if sockets
        ]
        if self.spectators:
            audiences.append((None, self.spectators))
        view = endpoints.to_owner(endpoints.engine_view(self.game), self.table_id)
        for user_id, sockets in audiences:
            try:
                seen = await bus_request(
                    self._nc, view, GetView(table_id=self.table_id, user_id=user_id)
                )
            except RemoteError as exc:
                if exc.code == codes.NOT_FOUND:  # the hand is gone: the table says so
                    return
                raise
            frame = _encode(seen)
            for conn in list(sockets):
                conn.push(frame)


class Hub:
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
