"""``/ws`` served straight from the socket: the gateway's own WebSocket server protocol.

uvicorn parses each HTTP request; when one asks to upgrade to a WebSocket it hands the
connection to its ``ws`` protocol class, and for the gateway that is this one (see
``__main__.server_config``). Most of a gateway's sockets sit idle, and the general
path cost an idle socket about 18 KiB: ``websockets``' protocol and parser generator,
uvicorn's protocol and ASGI scope, and the ASGI app's task with its coroutine frames
(uvicorn → Litestar → the endpoint) for the socket's whole life. Here a socket is this
object, a :class:`~kalaro.wsframes.FrameReader` and the hub's ``Connection``; a task
exists only while a frame is being handled (``ws_session.Session``) or the token is checked.
Frames to the client are written straight to the transport, several in one write.

The opening handshake (RFC 6455 section 4.2): ``GET /ws`` with ``Upgrade: websocket``,
``Connection: Upgrade``, ``Sec-WebSocket-Version: 13`` and a 16-byte base64 key, else
an HTTP error and the connection closes. No extension is negotiated (a deployment that
wants permessage-deflate sets ``ws_compression`` and gets uvicorn's own protocol and
the ASGI endpoint). The token (see ``ws.bearer_token``) is checked after the 101, as
before: a bad one gets an ``error`` frame and close code 4401.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import logging
from typing import Any, ClassVar, NamedTuple, cast

import msgspec
from litestar import Litestar

from kalaro.bus import RemoteError
from kalaro.proto import ws as w
from kalaro.tokens import TokenError
from kalaro.wsframes import (
    CLOSE,
    PING,
    PONG,
    TEXT,
    FrameReader,
    close_code,
    close_payload,
    control_frame,
    frame_header,
    text_frame,
)
from services.gateway.limits import RateLimited, header_lines, redact, security_headers
from services.gateway.security import limit_handshake
from services.gateway.ws import TooManySockets, bearer_token, open_session
from services.gateway.ws_session import Session

log = logging.getLogger("kalaro.gateway.ws")

PATH = "/ws"
GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455's, for Sec-WebSocket-Accept
CLOSE_TIMEOUT_SECONDS = 2.0  # after our close frame, how long the client has to answer
EARLY_FRAMES = 16  # frames a client may send before its token is checked
MAX_HEAD_BYTES = 16 * 1024

_OPENING, _OPEN, _CLOSING, _CLOSED = range(4)
_encode = msgspec.json.Encoder().encode
# Close codes a peer may send (RFC 6455 section 7.4): anything else is answered with 1002.
_SENDABLE = frozenset((*range(1000, 1004), *range(1007, 1015), *range(3000, 5000)))


def _address(peer: Any) -> str:
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) and len(peer) >= 2 else "?"


def accept_key(key: str) -> str:
    """``Sec-WebSocket-Accept`` for a client's ``Sec-WebSocket-Key``."""
    return base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()


class HandshakeRefused(Exception):
    def __init__(self, status: int, reason: str, message: str, headers: bytes = b"") -> None:
        super().__init__(message)
        self.status, self.reason, self.message = status, reason, message
        self.headers = headers  # extra response header lines, each ending in CRLF


class Handshake(NamedTuple):
    query: str
    headers: list[tuple[bytes, bytes]]  # names lower case, as in an ASGI scope
    key: str
    subprotocols: list[str]  # offered, in order


def read_handshake(head: bytes) -> Handshake:
    """What an opening handshake asks for, or :class:`HandshakeRefused`."""
    request_line, *lines = head.decode("latin-1").split("\r\n")
    parts = request_line.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise HandshakeRefused(400, "Bad Request", "not an HTTP/1.1 request")
    method, target, _ = parts
    path, _, query = target.partition("?")
    if path != PATH:
        raise HandshakeRefused(404, "Not Found", f"no WebSocket at {path[:100]}")
    if method != "GET":
        raise HandshakeRefused(405, "Method Not Allowed", "a WebSocket opens with GET")
    headers: list[tuple[bytes, bytes]] = []
    for line in lines:
        name, colon, value = line.partition(":")
        if not colon:
            raise HandshakeRefused(400, "Bad Request", "a malformed header line")
        headers.append((name.strip().lower().encode("latin-1"), value.strip().encode("latin-1")))

    def values(name: bytes) -> list[str]:
        found = [v.decode("latin-1") for n, v in headers if n == name]
        return [token.strip() for value in found for token in value.split(",") if token.strip()]

    if "websocket" not in (v.lower() for v in values(b"upgrade")):
        raise HandshakeRefused(400, "Bad Request", "missing Upgrade: websocket")
    if "upgrade" not in (v.lower() for v in values(b"connection")):
        raise HandshakeRefused(400, "Bad Request", "missing Connection: Upgrade")
    if values(b"sec-websocket-version") != ["13"]:
        raise HandshakeRefused(426, "Upgrade Required", "only WebSocket version 13 is spoken")
    keys = values(b"sec-websocket-key")
    try:
        valid = len(keys) == 1 and len(base64.b64decode(keys[0], validate=True)) == 16
    except binascii.Error:
        valid = False
    if not valid:
        raise HandshakeRefused(400, "Bad Request", "a missing or malformed Sec-WebSocket-Key")
    return Handshake(query, headers, keys[0], values(b"sec-websocket-protocol"))


class GatewayWebSocket(asyncio.Protocol):
    """One ``/ws`` connection after uvicorn's upgrade. Use :func:`websockets_for`, which
    binds it to the app whose state (hub, NATS, key cache) its sessions use."""

    app: ClassVar[Litestar]

    __slots__ = (
        "_connections",
        "_early",
        "_opening",
        "_paused",
        "_reader",
        "_received",
        "_session",
        "_state",
        "_tasks",
        "_timer",
        "transport",
    )

    def __init__(self, config: Any, server_state: Any, app_state: Any = None, **_: Any) -> None:
        self._connections: set[Any] = server_state.connections  # uvicorn shuts these down
        self._tasks: set[asyncio.Task[None]] = server_state.tasks  # and waits for these
        self._reader = FrameReader(
            masked=True,
            max_size=config.ws_max_size,
            on_message=self._on_message,
            on_control=self._on_control,
            on_error=self._on_error,
        )
        self.transport: asyncio.Transport | None = None
        self._received = bytearray()
        self._state = _OPENING
        self._session: Session | None = None
        self._early: list[bytes] | None = []  # frames before the token is checked
        self._opening: asyncio.Task[None] | None = None
        self._paused: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    # --- asyncio.Protocol ---------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # The socket itself, not the view httpserver gave the HTTP protocol (which only
        # notes that a response began): every frame written skips that hop.
        transport = getattr(transport, "unwrapped", transport)
        self.transport = cast(asyncio.Transport, transport)  # uvloop's behave as one
        self._connections.add(self)

    def data_received(self, data: bytes) -> None:
        self._received += data
        if self._state == _OPENING:
            self._handshake()
        elif self._state != _CLOSED:
            self._reader.feed(self._received)

    def eof_received(self) -> bool | None:
        return None  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self._connections.discard(self)
        self._state = _CLOSED
        self._reader.failed = True
        if self._timer is not None:
            self._timer.cancel()
        if self._paused is not None and not self._paused.done():
            self._paused.set_result(None)  # a waiting writer wakes and finds it closed
        if self._opening is not None:
            self._opening.cancel()
        session, self._session = self._session, None
        if session is not None:
            ending = asyncio.get_running_loop().create_task(session.end())
            self._tasks.add(ending)
            ending.add_done_callback(self._tasks.discard)

    def pause_writing(self) -> None:
        if self._paused is None or self._paused.done():
            self._paused = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        paused, self._paused = self._paused, None
        if paused is not None and not paused.done():
            paused.set_result(None)

    # --- uvicorn's server -------------------------------------------------------------
    def shutdown(self) -> None:
        """The server is stopping: "going away, come back" (1012) to an open socket."""
        if self._state == _OPEN:
            self.close(1012, "server restarting")
        elif self.transport is not None:
            self.transport.close()

    # --- the opening handshake --------------------------------------------------------
    def _handshake(self) -> None:
        end = self._received.find(b"\r\n\r\n")
        if end < 0:
            if len(self._received) > MAX_HEAD_BYTES:
                self._refuse(HandshakeRefused(431, "Request Header Fields Too Large", "too long"))
            return
        head = bytes(self._received[:end])
        del self._received[: end + 4]
        try:
            query, headers, key, offered = read_handshake(head)
        except HandshakeRefused as refused:
            self._refuse(refused)
            return
        try:
            self._limit_address(headers)
        except RateLimited as limited:
            retry = f"Retry-After: {limited.retry_after}\r\n".encode()
            self._refuse(HandshakeRefused(429, "Too Many Requests", str(limited), retry))
            return
        token, subprotocol = bearer_token(headers, offered, query.encode("latin-1"))
        response = [
            b"HTTP/1.1 101 Switching Protocols",
            b"Upgrade: websocket",
            b"Connection: Upgrade",
            b"Sec-WebSocket-Accept: " + accept_key(key).encode(),
        ]
        if subprotocol is not None:
            response.append(b"Sec-WebSocket-Protocol: " + subprotocol.encode())
        assert self.transport is not None
        self.transport.write(b"\r\n".join(response) + b"\r\n\r\n")
        self._state = _OPEN
        if log.isEnabledFor(logging.INFO):  # as uvicorn's line was; the query redacted
            target = PATH + (f"?{redact(query)}" if query else "")
            peer = self.transport.get_extra_info("peername")
            log.info('%s - "WebSocket %s" accepted', _address(peer), target)
        self._opening = asyncio.get_running_loop().create_task(self._sign_in(token))
        if self._received:
            self._reader.feed(self._received)

    def _limit_address(self, headers: list[tuple[bytes, bytes]]) -> None:
        if self.transport is None:
            return
        peer = self.transport.get_extra_info("peername")
        host = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        limit_handshake(self.app.state, host, headers)

    def _refuse(self, refused: HandshakeRefused) -> None:
        peer = self.transport.get_extra_info("peername") if self.transport else None
        log.info("refused a WebSocket handshake from %s: %s", _address(peer), refused.message)
        body = refused.message.encode()
        extra = refused.headers + header_lines(security_headers(PATH))
        if refused.status == 426:
            extra += b"Sec-WebSocket-Version: 13\r\n"
        head = (
            f"HTTP/1.1 {refused.status} {refused.reason}\r\n"
            f"Content-Type: text/plain; charset=utf-8\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n"
        ).encode()
        self._state = _CLOSING
        assert self.transport is not None
        self.transport.write(head + extra + b"\r\n" + body)
        self.transport.close()

    async def _sign_in(self, token: str) -> None:
        state = self.app.state
        try:
            claims = await state.key_cache.verify(token)
        except (TokenError, RemoteError) as exc:
            self._write(text_frame(_encode(w.Error(code=exc.code, message=exc.message))))
            self.close(4401, exc.code)
            return
        except Exception:
            log.exception("could not check a socket's token")
            self.close(1011, "internal error")
            return
        finally:
            self._opening = None
        if self._state != _OPEN:
            return  # closed while the token was checked
        try:
            session = open_session(state, claims, self._send, self._write_frames, self._close_now)
        except TooManySockets as refused:
            self._write(text_frame(refused.error_frame()))
            self.close(refused.close_code, refused.code)
            return
        self._session = session
        early, self._early = self._early or [], None
        for raw in early:
            session.received(raw)

    # --- frames -----------------------------------------------------------------------
    def _on_message(self, opcode: int, payload: bytes) -> None:
        if self._state != _OPEN:
            return
        if self._session is not None:
            self._session.received(payload)
        elif self._early is not None and len(self._early) < EARLY_FRAMES:
            self._early.append(payload)
        else:
            self.close(1008, "too many frames before the token was checked")

    def _on_control(self, opcode: int, payload: bytes) -> None:
        if opcode == PING:
            if self._state == _OPEN:
                self._write(control_frame(PONG, payload))
        elif opcode == CLOSE:
            if self._state == _OPEN:
                code = close_code(payload)
                echo = 1000 if code == 1005 else code if code in _SENDABLE else 1002
                self._state = _CLOSING
                self._write(control_frame(CLOSE, close_payload(echo)))
            if self.transport is not None:
                self.transport.close()  # the closing handshake is done: the server ends TCP

    def _on_error(self, code: int, reason: str) -> None:
        self.close(code, reason)

    # --- writing ------------------------------------------------------------------------
    def _writable(self) -> bool:
        return self._state == _OPEN and self._paused is None

    def _write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def _write_frames(self, frames: list[bytes]) -> bool:
        """The hub's ``write_now``: these frames in one write, or False (paused, closing)."""
        if not self._writable():
            return False
        parts: list[bytes] = []
        for frame in frames:  # headers and payloads joined once: one copy of each view
            parts += (frame_header(TEXT, len(frame)), frame)
        self._write(b"".join(parts))
        return True

    async def _send(self, frame: bytes) -> None:
        """The hub's writer path, for frames ``write_now`` declined: waits out a pause."""
        while self._paused is not None and self._state == _OPEN:
            await asyncio.shield(self._paused)
        if self._state != _OPEN:
            raise ConnectionError("the socket is closed")
        self._write(text_frame(frame))

    def _close_now(self) -> None:
        """The hub closed the connection (slow, idle, signed out): say so to the client."""
        session = self._session
        self.close(session.conn.close_code if session is not None else 1000)

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Start the closing handshake; the client has a moment to answer, then TCP ends."""
        if self._state == _OPEN:
            self._state = _CLOSING  # messages from now on are dropped; its close is awaited
            self._write(control_frame(CLOSE, close_payload(code, reason)))
            if self.transport is not None:
                self._timer = asyncio.get_running_loop().call_later(
                    CLOSE_TIMEOUT_SECONDS, self.transport.abort
                )
        elif self._state == _OPENING and self.transport is not None:
            self.transport.close()
        if self._session is not None and not self._session.conn.closed.is_set():
            self._session.conn.close()


def websockets_for(app: Litestar) -> type[GatewayWebSocket]:
    """The protocol class to give uvicorn (``ws=``) for this app's sockets."""
    return type("GatewayWebSocket", (GatewayWebSocket,), {"__slots__": (), "app": app})
