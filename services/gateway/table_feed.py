"""One table's sockets in a gateway process and the fan-out of its NATS messages.

Engines and the lobby publish finished client frames on per-table subjects:
``table.<id>.frames`` (one message per move: every seat's private frame and, while
someone watches, the audience's, see :mod:`kalaro.proto.frames`) and
``table.<id>.events`` (table changes, chat, results). A :class:`TableFeed` holds one
subscription (``table.<id>.>``) while it has a socket, and forwards each part as
received: a seat's part only to the sockets of the user sitting there, the audience
part only to spectators, events to everyone. Each part is encoded once, by the engine;
the gateway never re-encodes it. A gateway thus receives the seat parts of seats not
connected to it (the backend is trusted); no socket is ever given another seat's part.

Engines build the audience view only while some gateway marks the table watched (a
Redis key with a TTL, ``subjects.table_audience_key``): a feed sets it when its first
spectator arrives, and the hub refreshes it for every table with a spectator here.
The order (subscribe, flush, mark, then the socket asks for the current view) is what
makes a spectator joining mid-hand miss nothing; see the engine's ``_publish_views``.

Whenever the seated players with a socket on a table here change (a socket subscribes,
leaves or closes; someone sits down or stands up), the feed tells the
:class:`~services.gateway.presence.PresenceReporter`, which reports it to the lobby in
the background.

Which feeds exist, and when, is the hub's business (:mod:`services.gateway.hub`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import msgspec
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from kalaro.bus import RemoteError
from kalaro.bus import request as bus_request
from kalaro.proto import endpoints, subjects
from kalaro.proto import errors as codes
from kalaro.proto.engine import GetView
from kalaro.proto.frames import decode_frames
from kalaro.proto.lobby import GetTable, TableInfo
from kalaro.proto.ws import TableChanged
from services.gateway.connection import Connection
from services.gateway.presence import PresenceReporter
from services.gateway.watch_delay import AudienceDelay

_table_changed = msgspec.json.Decoder(TableChanged)
_encode = msgspec.json.Encoder().encode
_TABLE_FRAME_PREFIX = b'{"type":"table"'
_IN_HAND = ("dealing", "playing")


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
        # A ranked table's spectators see it some moves late (issue 34).
        self.delay: AudienceDelay | None = AudienceDelay() if table.ranked else None

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
        if audience is not None and self.delay is not None and self.table.status in _IN_HAND:
            audience = self.delay.hold(audience)  # held back (watch_delay.py)
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
        hand_before = self.table.hand_id
        self.table = table
        if self.delay is not None:
            self._delay_follows(hand_before)
        if _sitters(table) != seated_before:
            # Someone sat down or left: move sockets between seat and audience.
            # (Most table frames are Ready taps and hand ends: nothing to move.)
            for conn in self.everyone():
                self.attach(conn)
            self.announce()
            await self.sync_subscriptions()

    def _delay_follows(self, hand_before: str | None) -> None:
        """A ranked table's hand ended: show the spectators what was held; a new one
        began: show newcomers nothing of the last one."""
        assert self.delay is not None
        if self.table.status not in _IN_HAND:
            for frame in self.delay.release():
                for conn in tuple(self.spectators):
                    conn.push(frame)
        elif self.table.hand_id != hand_before:
            self.delay.forget()

    def delayed_view(self) -> bytes | None:
        """What a spectator arriving now at a ranked table in a hand is shown (None:
        nothing yet); see :mod:`services.gateway.watch_delay`."""
        return None if self.delay is None else self.delay.shown

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
        shown = self.delayed_view()  # a ranked table's spectators: never the current view
        if self.spectators and self.delay is None:
            audiences.append((None, self.spectators))
        elif shown is not None:
            for conn in list(self.spectators):
                conn.push(shown)
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
