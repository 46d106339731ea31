"""The frames of one signed-in WebSocket: rate limit, decode, answer, in arrival order.

A :class:`Session` is what a socket becomes once :mod:`services.gateway.ws` has let it
in: it checks each client frame (size, depth, the schema of :mod:`kalaro.proto.ws`) and
hands it to the lobby or the table's engine over NATS, or to the hub for subscriptions.
Every bad frame gets an ``error`` frame with a stable code and changes nothing; the
socket stays open.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import assert_never

import msgspec
from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError
from kalaro.bus import request as bus_request
from kalaro.logs import new_request_id
from kalaro.proto import endpoints
from kalaro.proto import engine as e
from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from kalaro.proto import ws as w
from kalaro.tokens import AccessClaims
from services.gateway.connection import Connection
from services.gateway.hub import Hub
from services.gateway.limits import MAX_BODY_BYTES, MAX_DEPTH, TokenBucket, scan, too_deep
from services.gateway.routes import SLOW_REQUEST_SECONDS

log = logging.getLogger("kalaro.gateway.ws")

INBOX_LIMIT = 64  # frames waiting to be handled; more is refused as rate_limited

_frames = msgspec.json.Decoder(w.AnyClientFrame)


class _RefOnly(msgspec.Struct):
    ref: int | None = None


_refs = msgspec.json.Decoder(_RefOnly)


def _ref_of(raw: bytes) -> int | None:
    """The ``ref`` of a frame we will not handle, if it has a readable one."""
    if len(raw) > MAX_BODY_BYTES:
        return None
    if too_deep(raw):
        return scan(raw)[1]
    try:
        return _refs.decode(raw).ref
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


_encode = msgspec.json.Encoder().encode


class Session:
    """The frames of one socket, handled with the gateway's shared dependencies.

    Whatever serves the socket (:mod:`services.gateway.wsserver`, or the ASGI endpoint
    in :mod:`services.gateway.ws` when compression is on) hands each message to
    :meth:`received` and calls :meth:`end` once when the socket is gone. Frames are
    handled one at a time, in order, by a task that exists only while frames wait: an
    idle socket has none.
    """

    __slots__ = ("_handler", "_inbox", "bucket", "caller", "conn", "hub", "nc")

    def __init__(
        self,
        nc: NATS,
        hub: Hub,
        conn: Connection,
        claims: AccessClaims,
        rate: float,
        burst: float,
    ) -> None:
        self.nc = nc
        self.hub = hub
        self.conn = conn
        self.caller = lb.Caller(
            user_id=claims.user_id,
            display_name=claims.name,
            roles=tuple(claims.roles),
            email_verified=claims.email_verified,
        )
        # Frames a second and burst (KALARO_WS_FRAME_RATE/_BURST); None: no limit.
        self.bucket = TokenBucket(rate, burst) if rate > 0 else None
        # Frames waiting for the handler: decoded, or raw while the handler was busy.
        self._inbox: list[w.AnyClientFrame | bytes] = []
        self._handler: asyncio.Task[None] | None = None

    def send(self, frame: w.ServerFrame) -> None:
        self.conn.push(_encode(frame))

    def received(self, raw: bytes) -> None:
        """A message from the client: rate-limited here, handled in arrival order.

        With nothing waiting before it, the message is decoded at once, and a ping (an
        idle socket's only traffic: one per heartbeat) is answered at once, with no task.
        """
        bucket = self.bucket
        if bucket is None:
            within_budget = True
            self.conn.last_heard = time.monotonic()
        else:
            within_budget = bucket.take()
            self.conn.last_heard = bucket.stamp  # take() has just read the clock
        if not within_budget or len(self._inbox) >= INBOX_LIMIT:
            # Answer the request's ref, so the client fails fast instead of waiting.
            message = "too many frames; slow down"
            self.send(w.Error(code=codes.RATE_LIMITED, message=message, ref=_ref_of(raw)))
            return
        if self._handler is not None:
            self._inbox.append(raw)  # decoded in turn, after what waits before it
            return
        frame = self.decode(raw)
        if frame is None:
            return
        if type(frame) is w.Ping:
            self.send(w.Pong(ref=frame.ref))
            return
        self._inbox.append(frame)
        self._handler = asyncio.create_task(self._handle_inbox())

    async def _handle_inbox(self) -> None:
        try:
            while self._inbox and not self.conn.closed.is_set():
                item = self._inbox.pop(0)
                frame = self.decode(item) if isinstance(item, bytes) else item
                if frame is not None:
                    await self.handle(frame)
        except Exception:
            # A bug, not a bad frame (those get error frames): end this socket only.
            log.exception("a frame from %s failed; closing its socket", self.conn.user_id)
            self.conn.close_code = 1011
            self.conn.close()
        finally:
            self._handler = None

    async def end(self) -> None:
        """The socket is gone: stop handling its frames, leave its tables, stop writing."""
        if self._handler is not None:
            self._handler.cancel()
        self._inbox.clear()
        self.hub.discard(self.conn)
        self.conn.on_close = None  # closing is under way: nothing more to stop
        self.conn.close()
        await self.hub.leave_all(self.conn)
        await self.conn.wait_closed()

    def decode(self, raw: bytes) -> w.AnyClientFrame | None:
        """The frame, or None when it was refused (an error frame says why)."""
        if len(raw) > MAX_BODY_BYTES:
            log.warning("refused a %d-byte frame from %s", len(raw), self.conn.user_id)
            self.send(
                w.Error(code=codes.BAD_REQUEST, message=f"frame larger than {MAX_BODY_BYTES} bytes")
            )
            return None
        if too_deep(raw):
            log.warning("refused a frame nested too deep from %s", self.conn.user_id)
            message = f"frame nested deeper than {MAX_DEPTH} levels"
            self.send(w.Error(code=codes.BAD_REQUEST, message=message, ref=scan(raw)[1]))
            return None
        try:
            return _frames.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            self.send(
                w.Error(code=codes.BAD_REQUEST, message=f"malformed frame: {exc}", ref=_ref_of(raw))
            )
            return None

    async def handle(self, frame: w.AnyClientFrame) -> None:
        new_request_id()  # this frame's id, for log lines here and in the services
        try:
            await self.dispatch(frame)
        except RemoteError as exc:
            self.send(w.Error(code=exc.code, message=exc.message, ref=getattr(frame, "ref", None)))

    async def dispatch(self, frame: w.AnyClientFrame) -> None:
        match frame:
            case w.Ping(ref=ref):
                self.send(w.Pong(ref=ref))
            case w.Subscribe(table_id=table_id, ref=ref, invite_code=invite_code):
                await self.subscribe(table_id, ref, invite_code)
            case w.Unsubscribe(table_id=table_id, ref=ref):
                await self.hub.leave(self.conn, table_id)
                self.send(w.Unsubscribed(table_id=table_id, ref=ref))
            case w.Resync(table_id=table_id, ref=ref):
                self.require_subscribed(table_id)
                await self.send_view(table_id)
            case w.Act(table_id=table_id, version=version, action=action, ref=ref):
                await self.act(table_id, version, action, ref)
            case w.Ready(table_id=table_id, ready=ready, entropy=entropy, ref=ref):
                ready_ = lb.SetReady(
                    caller=self.caller, table_id=table_id, ready=ready, entropy=entropy
                )
                await bus_request(self.nc, endpoints.LOBBY_SET_READY, ready_)
                self.send(w.Ack(ref=ref))
            case w.Deal(table_id=table_id, ref=ref):
                deal = lb.Deal(caller=self.caller, table_id=table_id)
                await bus_request(self.nc, endpoints.LOBBY_DEAL, deal, timeout=SLOW_REQUEST_SECONDS)
                self.send(w.Ack(ref=ref))
            case w.Chat(table_id=table_id, text=text, ref=ref):
                self.require_subscribed(table_id)
                message = lb.SendChat(caller=self.caller, table_id=table_id, text=text)
                await bus_request(self.nc, endpoints.LOBBY_SEND_CHAT, message)
                self.send(w.Ack(ref=ref))
            case _:
                # A frame type added to AnyClientFrame without a case here fails mypy.
                assert_never(frame)

    def require_subscribed(self, table_id: str) -> None:
        if table_id not in self.conn.seats or self.hub.feed(table_id) is None:
            raise RemoteError(codes.NOT_SUBSCRIBED, f"subscribe to table {table_id} first")

    async def subscribe(self, table_id: str, ref: int | None, invite_code: str | None) -> None:
        # The lobby answers a private table only to those who may watch it.
        message = lb.GetTable(table_id=table_id, caller=self.caller, invite_code=invite_code)
        table = await bus_request(self.nc, endpoints.LOBBY_GET_TABLE, message)
        seat = await self.hub.join(self.conn, table)
        # The feed holds the newest table it has seen (one that changed while this socket
        # joined may have its frame queued already): the snapshot must not be older.
        feed = self.hub.feed(table_id)
        table = feed.table if feed is not None else table
        self.send(w.Subscribed(table=table, seat=seat, ref=ref))
        if table.hand_id is not None:
            await self.send_view(table_id)

    async def send_view(self, table_id: str) -> None:
        feed = self.hub.feed(table_id)
        if feed is None:
            return
        seat = self.conn.seats.get(table_id)
        if seat is None and feed.delay is not None:
            # A ranked table's spectator: only what the delay has released (issue 34).
            shown = feed.delayed_view()
            if shown is not None:
                self.conn.push(shown)
            return
        message = e.GetView(
            table_id=table_id, user_id=self.conn.user_id if seat is not None else None
        )
        try:
            view = await bus_request(
                self.nc, endpoints.to_owner(endpoints.engine_view(feed.game), table_id), message
            )
        except RemoteError as exc:
            if exc.code == codes.NOT_FOUND:  # no hand in progress: nothing to show
                return
            raise
        self.send(view)

    async def act(
        self, table_id: str, version: int, action: dict[str, object], ref: int | None
    ) -> None:
        self.require_subscribed(table_id)
        feed = self.hub.feed(table_id)
        assert feed is not None
        message = e.Act(
            table_id=table_id,
            user_id=self.conn.user_id,
            version=version,
            action=msgspec.Raw(_encode(action)),
        )
        # Straight to the table's owning engine replica (its partition's subject).
        acted = await bus_request(
            self.nc, endpoints.to_owner(endpoints.engine_act(feed.game), table_id), message
        )
        self.send(w.Ack(ref=ref, version=acted.version))
