"""``/ws``: one WebSocket per client — table views, moves, chat — over the hub.

Authenticate on connect with the access token (as the subprotocol pair ``kalaro.bearer,
<token>`` — browsers cannot set other headers on a WebSocket — an ``Authorization``
header, or ``?token=``, which older clients use), then exchange the frames
of :mod:`kalaro.proto.ws`. Every bad frame gets an ``error`` frame with a stable code
and changes nothing; the socket stays open.

This module lets a socket in (the token, the handshake and per-account limits) and
holds the ASGI endpoint; what a socket's frames do once it is in is
:mod:`services.gateway.ws_session`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import parse_qs

import msgspec
from litestar import Litestar, asgi

from kalaro.bus import RemoteError
from kalaro.proto import errors as codes
from kalaro.proto import ws as w
from kalaro.tokens import AccessClaims, TokenError
from services.gateway.connection import Connection
from services.gateway.hub import Hub
from services.gateway.limits import RateLimited, security_headers
from services.gateway.security import KeyCache, limit_handshake
from services.gateway.ws_session import Session

log = logging.getLogger("kalaro.gateway.ws")

IDLE_HEARTBEATS = 3  # a socket that sends nothing for this many heartbeats is closed

# Plain ASGI shapes (Litestar's TypedDicts are stricter than this handler needs).
Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

_encode = msgspec.json.Encoder().encode


#: The subprotocol a client names to pass its token in ``Sec-WebSocket-Protocol``
#: (``new WebSocket(url, ["kalaro.bearer", token])``); the server accepts with it.
BEARER_PROTOCOL = "kalaro.bearer"


def bearer_token(
    headers: Iterable[tuple[bytes, bytes]], subprotocols: Iterable[str], query_string: bytes
) -> tuple[str, str | None]:
    """The access token, and the subprotocol to accept with (when it came as one).

    In order: ``Sec-WebSocket-Protocol: kalaro.bearer, <token>``, an ``Authorization:
    Bearer`` header, then ``?token=`` (kept for older clients; the access log redacts it).
    Header names are lower case, as in an ASGI scope.
    """
    authorization = ""
    for name, value in headers:
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            authorization = token.strip() if scheme.lower() == "bearer" else ""
    offered = [str(p) for p in subprotocols]
    if BEARER_PROTOCOL in offered:
        rest = [p for p in offered if p != BEARER_PROTOCOL]
        if rest:
            return rest[0], BEARER_PROTOCOL
    if authorization:
        return authorization, None
    query = parse_qs(query_string.decode("latin-1"))
    if query.get("token"):
        return str(query["token"][0]), None
    return "", None


class TooManySockets(Exception):
    """The account already holds its share of this gateway's sockets."""

    code = codes.RATE_LIMITED
    close_code = 1008  # policy violation: the client should not simply retry at once

    def __init__(self, limit: int) -> None:
        super().__init__(f"this account already has {limit} sockets open; close one")
        self.message = str(self)

    def error_frame(self) -> bytes:
        return _encode(w.Error(code=self.code, message=self.message))


def open_session(
    state: Any,
    claims: AccessClaims,
    send: Callable[[bytes], Awaitable[None]],
    write_now: Callable[[list[bytes]], bool] | None,
    on_close: Callable[[], None],
) -> Session:
    """A signed-in socket joins the hub and is welcomed (``state``: the app's state).

    Raises :class:`TooManySockets` when the account holds its limit here already."""
    conn = Connection(claims.user_id, claims.name, send, claims.session, write_now)
    hub: Hub = state.hub
    limit = state.settings.ws_sockets_per_user
    if not hub.admit(conn, limit):
        log.info("refused a socket of %s: %d open here already", claims.user_id, limit)
        raise TooManySockets(limit)
    conn.on_close = on_close
    conn.start()
    settings = state.settings
    session = Session(state.nc, hub, conn, claims, settings.ws_frame_rate, settings.ws_frame_burst)
    session.send(
        w.Welcome(user_id=claims.user_id, heartbeat_seconds=state.settings.ws_heartbeat_seconds)
    )
    return session


async def _refuse_handshake(scope: Scope, send: Send, limited: RateLimited) -> None:
    """429 with Retry-After, as the gateway's own ``/ws`` answers, where the server can
    answer a handshake with an HTTP response (ASGI's denial response); else a refusal
    before the accept, which uvicorn answers with 403. No socket either way."""
    if "websocket.http.response" in scope.get("extensions", {}):
        await send(
            {
                "type": "websocket.http.response.start",
                "status": 429,
                "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"retry-after", str(limited.retry_after).encode()),
                    *security_headers(scope.get("path", "")),
                ],
            }
        )
        await send({"type": "websocket.http.response.body", "body": str(limited).encode()})
    else:
        await send({"type": "websocket.close", "code": 1008})


@asgi("/ws", copy_scope=False)
async def ws_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
    """The socket through ASGI: used when uvicorn serves ``/ws`` itself, which it does
    only with compression on (``ws_compression``); otherwise :mod:`wsserver` takes the
    upgrade and this answers plain HTTP requests to ``/ws`` with 426."""
    if scope["type"] != "websocket":
        headers = [(b"upgrade", b"websocket"), *security_headers(scope.get("path", ""))]
        await send({"type": "http.response.start", "status": 426, "headers": headers})
        await send({"type": "http.response.body", "body": b"use a WebSocket"})
        return
    if (await receive())["type"] != "websocket.connect":
        return
    state = Litestar.from_scope(scope).state  # type: ignore[arg-type]
    client = scope.get("client")
    try:
        limit_handshake(state, str(client[0]) if client else "", scope.get("headers", []))
    except RateLimited as limited:
        await _refuse_handshake(scope, send, limited)
        return
    token, subprotocol = bearer_token(
        scope.get("headers", []), scope.get("subprotocols", []), scope.get("query_string", b"")
    )
    accept: dict[str, Any] = {"type": "websocket.accept"}
    if subprotocol is not None:
        accept["subprotocol"] = subprotocol
    await send(accept)
    keys: KeyCache = state.key_cache
    try:
        claims = await keys.verify(token)
    except (TokenError, RemoteError) as exc:
        text = _encode(w.Error(code=exc.code, message=exc.message)).decode()
        await send({"type": "websocket.send", "text": text})
        await send({"type": "websocket.close", "code": 4401, "reason": exc.code})
        return

    async def send_frame(frame: bytes) -> None:
        await send({"type": "websocket.send", "text": frame.decode()})

    reader = asyncio.current_task()
    assert reader is not None

    def stop_reading() -> None:
        # Closing the connection (slow, idle, signed out) cancels this task: it says goodbye.
        reader.cancel()

    try:
        session = open_session(state, claims, send_frame, None, stop_reading)
    except TooManySockets as refused:
        await send({"type": "websocket.send", "text": refused.error_frame().decode()})
        await send({"type": "websocket.close", "code": refused.close_code, "reason": refused.code})
        return
    conn = session.conn
    try:
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return
            data = message.get("text")
            session.received(data.encode() if data is not None else (message.get("bytes") or b""))
    except asyncio.CancelledError:
        if not conn.closed.is_set():
            raise  # the server is stopping, not this socket
        with contextlib.suppress(Exception):
            await send({"type": "websocket.close", "code": conn.close_code})
    finally:
        await session.end()
