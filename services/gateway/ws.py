"""``/ws``: one WebSocket per client — table views, moves, chat — over the hub.

Authenticate on connect with the access token (as the subprotocol pair ``kalaro.bearer,
<token>`` — browsers cannot set other headers on a WebSocket — an ``Authorization``
header, or ``?token=``, which older clients use), then exchange the frames
of :mod:`kalaro.proto.ws`. Every bad frame gets an ``error`` frame with a stable code
and changes nothing; the socket stays open.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

import msgspec
from litestar import Litestar, asgi
from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError
from kalaro.bus import request as bus_request
from kalaro.proto import engine as e
from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from kalaro.proto import subjects
from kalaro.proto import ws as w
from kalaro.tokens import AccessClaims, TokenError
from services.gateway.hub import Connection, Hub
from services.gateway.limits import MAX_BODY_BYTES, MAX_DEPTH, scan, too_deep
from services.gateway.routes import SLOW_REQUEST_SECONDS
from services.gateway.security import KeyCache

log = logging.getLogger("kalaro.gateway.ws")

IDLE_HEARTBEATS = 3  # a socket that sends nothing for this many heartbeats is closed
RATE_PER_SECOND = 20.0
RATE_BURST = 40.0

# Plain ASGI shapes (Litestar's TypedDicts are stricter than this handler needs).
Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

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


class TokenBucket:
    def __init__(self, rate: float = RATE_PER_SECOND, burst: float = RATE_BURST) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class Session:
    """The frames of one socket, handled with the gateway's shared dependencies."""

    def __init__(self, nc: NATS, hub: Hub, conn: Connection, claims: AccessClaims) -> None:
        self.nc = nc
        self.hub = hub
        self.conn = conn
        self.caller = lb.Caller(claims.user_id, claims.name, tuple(claims.roles))

    def send(self, frame: w.ServerFrame) -> None:
        self.conn.push(_encode(frame))

    async def handle(self, raw: bytes) -> None:
        if len(raw) > MAX_BODY_BYTES:
            log.warning("refused a %d-byte frame from %s", len(raw), self.conn.user_id)
            self.send(w.Error(codes.BAD_REQUEST, f"frame larger than {MAX_BODY_BYTES} bytes"))
            return
        if too_deep(raw):
            log.warning("refused a frame nested too deep from %s", self.conn.user_id)
            message = f"frame nested deeper than {MAX_DEPTH} levels"
            self.send(w.Error(codes.BAD_REQUEST, message, scan(raw)[1]))
            return
        try:
            frame = _frames.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            self.send(w.Error(codes.BAD_REQUEST, f"malformed frame: {exc}", _ref_of(raw)))
            return
        try:
            await self.dispatch(frame)
        except RemoteError as exc:
            self.send(w.Error(exc.code, exc.message, getattr(frame, "ref", None)))

    async def dispatch(self, frame: w.AnyClientFrame) -> None:
        match frame:
            case w.Ping(ref=ref):
                self.send(w.Pong(ref))
            case w.Subscribe(table_id=table_id, ref=ref, invite_code=invite_code):
                await self.subscribe(table_id, ref, invite_code)
            case w.Unsubscribe(table_id=table_id, ref=ref):
                await self.hub.leave(self.conn, table_id)
                self.send(w.Unsubscribed(table_id, ref))
            case w.Resync(table_id=table_id, ref=ref):
                self.require_subscribed(table_id)
                await self.send_view(table_id)
            case w.Act(table_id=table_id, version=version, action=action, ref=ref):
                await self.act(table_id, version, action, ref)
            case w.Ready(table_id=table_id, ready=ready, entropy=entropy, ref=ref):
                ready_ = lb.SetReady(self.caller, table_id, ready, entropy)
                await bus_request(self.nc, subjects.LOBBY_SET_READY, ready_, lb.TableInfo)
                self.send(w.Ack(ref))
            case w.Deal(table_id=table_id, ref=ref):
                deal = lb.Deal(self.caller, table_id)
                await bus_request(
                    self.nc, subjects.LOBBY_DEAL, deal, lb.TableInfo, timeout=SLOW_REQUEST_SECONDS
                )
                self.send(w.Ack(ref))
            case w.Chat(table_id=table_id, text=text, ref=ref):
                self.require_subscribed(table_id)
                message = lb.SendChat(self.caller, table_id, text)
                await bus_request(self.nc, subjects.LOBBY_SEND_CHAT, message, lb.ChatSent)
                self.send(w.Ack(ref))

    def require_subscribed(self, table_id: str) -> None:
        if table_id not in self.conn.seats or self.hub.feed(table_id) is None:
            raise RemoteError("not_subscribed", f"subscribe to table {table_id} first")

    async def subscribe(self, table_id: str, ref: int | None, invite_code: str | None) -> None:
        # The lobby answers a private table only to those who may watch it.
        message = lb.GetTable(table_id, self.caller, invite_code)
        table = await bus_request(self.nc, subjects.LOBBY_GET_TABLE, message, lb.TableInfo)
        seat = await self.hub.join(self.conn, table)
        self.send(w.Subscribed(table, seat, ref))
        if table.hand_id is not None:
            await self.send_view(table_id)

    async def send_view(self, table_id: str) -> None:
        feed = self.hub.feed(table_id)
        if feed is None:
            return
        seat = self.conn.seats.get(table_id)
        message = e.GetView(table_id, self.conn.user_id if seat is not None else None)
        try:
            view = await bus_request(self.nc, subjects.engine_view(feed.game), message, w.HandView)
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
        message = e.Act(table_id, self.conn.user_id, version, msgspec.Raw(_encode(action)))
        acted = await bus_request(self.nc, subjects.engine_act(feed.game), message, e.Acted)
        self.send(w.Ack(ref, acted.version))


#: The subprotocol a client names to pass its token in ``Sec-WebSocket-Protocol``
#: (``new WebSocket(url, ["kalaro.bearer", token])``); the server accepts with it.
BEARER_PROTOCOL = "kalaro.bearer"


def _token(scope: Scope) -> tuple[str, str | None]:
    """The access token, and the subprotocol to accept with (when it came as one).

    In order: ``Sec-WebSocket-Protocol: kalaro.bearer, <token>``, an ``Authorization:
    Bearer`` header, then ``?token=`` (kept for older clients; the access log redacts it).
    """
    authorization = ""
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            authorization = token.strip() if scheme.lower() == "bearer" else ""
    offered = [str(p) for p in scope.get("subprotocols", [])]
    if BEARER_PROTOCOL in offered:
        rest = [p for p in offered if p != BEARER_PROTOCOL]
        if rest:
            return rest[0], BEARER_PROTOCOL
    if authorization:
        return authorization, None
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    if query.get("token"):
        return str(query["token"][0]), None
    return "", None


@asgi("/ws", copy_scope=False)
async def ws_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
    """The socket, as a plain ASGI app: frames are forwarded with no framework layer
    in between (the fan-out's hot path is ``send``)."""
    if scope["type"] != "websocket":
        await send({"type": "http.response.start", "status": 426, "headers": []})
        await send({"type": "http.response.body", "body": b"use a WebSocket"})
        return
    if (await receive())["type"] != "websocket.connect":
        return
    token, subprotocol = _token(scope)
    accept: dict[str, Any] = {"type": "websocket.accept"}
    if subprotocol is not None:
        accept["subprotocol"] = subprotocol
    await send(accept)
    state = Litestar.from_scope(scope).state  # type: ignore[arg-type]
    keys: KeyCache = state.key_cache
    try:
        claims = await keys.verify(token)
    except (TokenError, RemoteError) as exc:
        text = _encode(w.Error(exc.code, exc.message)).decode()
        await send({"type": "websocket.send", "text": text})
        await send({"type": "websocket.close", "code": 4401, "reason": exc.code})
        return

    async def send_frame(frame: bytes) -> None:
        await send({"type": "websocket.send", "text": frame.decode()})

    conn = Connection(claims.user_id, claims.name, send_frame, claims.session)
    conn.reader = asyncio.current_task()  # closing the connection (slow, idle) ends us
    conn.start()
    hub: Hub = state.hub
    hub.connections.add(conn)
    session = Session(state.nc, hub, conn, claims)
    session.send(w.Welcome(claims.user_id, state.settings.ws_heartbeat_seconds))
    bucket = TokenBucket()
    try:
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return
            allowed = bucket.take()
            conn.last_heard = bucket.stamp  # take() has just read the clock
            data = message.get("text")
            raw = data.encode() if data is not None else (message.get("bytes") or b"")
            if not allowed:
                # Answer the request's ref, so the client fails fast instead of waiting.
                session.send(w.Error("rate_limited", "too many frames; slow down", _ref_of(raw)))
                continue
            await session.handle(raw)
    except asyncio.CancelledError:
        if not conn.closed.is_set():
            raise  # the server is stopping, not this socket
        # Too slow, silent too long, or signed out (see Connection.close): say goodbye.
        with contextlib.suppress(Exception):
            await send({"type": "websocket.close", "code": conn.close_code})
    finally:
        conn.reader = None  # cleaning up must not cancel this task
        hub.connections.discard(conn)
        conn.close()
        await hub.leave_all(conn)
        await conn.wait_closed()
