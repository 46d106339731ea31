"""WebSocket fan-out: one NATS subscription per table per gateway process.

Engines and the lobby publish finished client frames on per-table subjects:
``table.<id>.seat.<n>`` (one seat's private view), ``table.<id>.public`` (the
audience view) and ``table.<id>.events`` (table changes, chat, results). A
:class:`TableFeed` subscribes to all three for a table and forwards the bytes: a
seat's frames only to the sockets of the user sitting there, public frames only to
spectators. Another player's concealed cards never reach a socket because no socket
is ever attached to another seat's subject.

Each socket has a bounded outbound queue drained by its own writer task, so one
slow client can never stall the fan-out; a client that falls too far behind is
disconnected and, on reconnecting, gets a full view. One reaper task per gateway
closes sockets that have sent nothing for too long, so reading a frame costs no timer.

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
from collections import deque
from collections.abc import Awaitable, Callable

import msgspec
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from kalaro.proto import subjects
from kalaro.proto.lobby import TableInfo
from kalaro.proto.ws import TableChanged
from services.gateway.presence import PresenceReporter

log = logging.getLogger("kalaro.gateway.hub")

_table_changed = msgspec.json.Decoder(TableChanged)
_TABLE_FRAME_PREFIX = b'{"type":"table"'

OUTBOX_LIMIT = 256


class Connection:
    """One client socket: who it is, what it watches, and its outbound queue.

    The queue is a plain deque with one waiter: ``asyncio.Queue`` cost a few
    microseconds per frame more, and every move fans out to several sockets.
    """

    def __init__(
        self,
        user_id: str,
        display_name: str,
        send: Callable[[bytes], Awaitable[None]],
        session: str = "",
    ):
        self.user_id = user_id
        self.session = session  # the access token's sid: closed when it is revoked
        self.close_code = 1000  # what the socket's handler says when it closes it
        self.display_name = display_name
        self._send = send
        self._outbox: deque[bytes] = deque()
        self._wakeup: asyncio.Future[None] | None = None
        self._writer: asyncio.Task[None] | None = None
        self.seats: dict[str, int | None] = {}  # table id -> seat (None: spectator)
        self.closed = asyncio.Event()
        # The task reading the socket: closing cancels it, which ends the socket.
        self.reader: asyncio.Task[None] | None = None
        self.last_heard = time.monotonic()  # when the client last sent a frame

    def start(self) -> None:
        self._writer = asyncio.create_task(self._write_loop())

    def push(self, frame: bytes) -> None:
        if self.closed.is_set():
            return
        if len(self._outbox) >= OUTBOX_LIMIT:
            log.warning("socket of %s is too slow; disconnecting it", self.user_id)
            self.close()
            return
        self._outbox.append(frame)
        self._wake()

    def close(self) -> None:
        """Stop sending (frames still queued are dropped), end the writer, and stop the
        reader, whose handler then says goodbye and cleans up."""
        if not self.closed.is_set():
            self.closed.set()
            self._wake()
            if self.reader is not None:
                self.reader.cancel()

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
                    await self._send(outbox.popleft())
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
    """One table's sockets in this gateway process, and the NATS subscriptions they need.

    The feed subscribes only to what its sockets may see: the table's events, the seat
    subjects of the seats that have a socket here, and the audience view while someone
    watches. A gateway thus receives nothing it would throw away, and a seat's private
    frames reach this process only while that seat's player is connected to it.
    """

    def __init__(
        self, nc: NATS, table: TableInfo, presence: PresenceReporter | None = None
    ) -> None:
        self._nc = nc
        self._presence = presence
        self.table_id = table.table_id
        self.game = table.game
        self.table = table
        self.seated: dict[int, set[Connection]] = {}
        self.spectators: set[Connection] = set()
        self._subscriptions: dict[str, Subscription] = {}
        self._syncing = asyncio.Lock()  # joins and table changes may sync at once

    @property
    def empty(self) -> bool:
        return not self.spectators and not any(self.seated.values())

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
        wanted: dict[str, Callable[[Msg], Awaitable[None]]] = {}
        if not self.empty:
            wanted[subjects.table_events(self.table_id)] = self._on_event
        for seat, sockets in self.seated.items():
            if sockets:
                wanted[subjects.table_seat(self.table_id, seat)] = self._seat_handler(seat)
        if self.spectators:
            wanted[subjects.table_public(self.table_id)] = self._on_public
        for subject in [s for s in self._subscriptions if s not in wanted]:
            with contextlib.suppress(Exception):
                await self._subscriptions.pop(subject).unsubscribe()
        for subject, handler in wanted.items():
            if subject not in self._subscriptions:
                self._subscriptions[subject] = await self._nc.subscribe(subject, cb=handler)

    def _seat_handler(self, seat: int) -> Callable[[Msg], Awaitable[None]]:
        async def on_seat(msg: Msg) -> None:
            for conn in list(self.seated.get(seat, ())):
                conn.push(msg.data)

        return on_seat

    async def _on_public(self, msg: Msg) -> None:
        for conn in list(self.spectators):
            conn.push(msg.data)

    async def _on_event(self, msg: Msg) -> None:
        if msg.data.startswith(_TABLE_FRAME_PREFIX):
            table = _table_changed.decode(msg.data).table
            if table.version >= self.table.version:
                seated_before = _sitters(self.table)
                self.table = table
                if _sitters(table) != seated_before:
                    # Someone sat down or left: move sockets between seat and audience.
                    # (Most table frames are Ready taps and hand ends: nothing to move.)
                    for conn in self.everyone():
                        self.attach(conn)
                    self.announce()
                    await self.sync_subscriptions()
        for conn in self.everyone():
            conn.push(msg.data)


class Hub:
    def __init__(self, nc: NATS, presence: PresenceReporter | None = None) -> None:
        self._nc = nc
        self.presence = presence
        self._feeds: dict[str, TableFeed] = {}
        self._lock = asyncio.Lock()
        self.connections: set[Connection] = set()  # every open socket, for the reaper

    async def reap_idle(self, idle_seconds: float, every: float) -> None:
        """Forever: close sockets that have sent nothing (not even a ping) for
        ``idle_seconds``, checking every ``every`` seconds."""
        while True:
            await asyncio.sleep(every)
            quiet_since = time.monotonic() - idle_seconds
            for conn in [c for c in self.connections if c.last_heard < quiet_since]:
                log.info(
                    "socket of %s was silent for %.0f s; closing it", conn.user_id, idle_seconds
                )
                conn.close()

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
                feed = TableFeed(self._nc, table, self.presence)
                self._feeds[table.table_id] = feed
            elif table.version >= feed.table.version:
                feed.table = table
            seat = feed.attach(conn)
            feed.announce()
            await feed.sync_subscriptions()
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
