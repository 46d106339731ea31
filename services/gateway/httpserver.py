"""A deadline for each HTTP request to arrive, around uvicorn's own HTTP protocol.

uvicorn waits for ever on a connection that sends no request, or sends its headers or
body one byte at a time (it arms a timer only between keep-alive requests): a few
thousand such connections ("slowloris") hold as many file descriptors and keep players
out. Here a request, headers and body, must arrive whole within ``seconds`` of the
connection opening, or of the request's first byte on a kept-alive connection;
otherwise the client gets ``408 Request Timeout`` (unless a response has begun) and the
connection is closed. A request without a body is done with its headers, so a
WebSocket upgrade (then served by ``wsserver``) is not limited by the deadline.

Through uvicorn's public API only: :class:`RequestDeadline` is the protocol class given
to ``uvicorn.Config(http=...)``, built as uvicorn builds any protocol class, and it
wraps the HTTP protocol uvicorn itself picks for ``http="httptools"`` (resolved by
``uvicorn.Config``), calling it only through the ``asyncio.Protocol`` interface. It
learns where requests begin and end by reading the same bytes with its own
``httptools`` parser, and that a response has begun from the first write the wrapped
protocol makes (:class:`_WatchedTransport`). No uvicorn internals are subclassed.
The second parse costs about 1-1.5 µs of CPU a request over the subclass of uvicorn's
private protocol this replaced, 4 µs over bare uvicorn (``bench/bench_http_deadline.py``,
bench/README.md); WebSocket frames never pass through here.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, ClassVar, cast

import httptools
import uvicorn

from services.gateway.limits import header_lines, security_headers

log = logging.getLogger("kalaro.gateway.http")

_TIMEOUT_BODY = b"the request did not arrive in time\n"
_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: %d\r\nconnection: close\r\n%s\r\n%s"
    % (len(_TIMEOUT_BODY), header_lines(security_headers("")), _TIMEOUT_BODY)
)
#: At most one log line a minute, however many connections are cut.
_LOG_EVERY_SECONDS = 60.0


class _TimeoutLog:
    """Counts the connections cut and says so at most once a period."""

    def __init__(self) -> None:
        self.cut = 0
        self._unlogged = 0
        self._last = -_LOG_EVERY_SECONDS

    def record(self, client: Any, seconds: float) -> None:
        self.cut += 1
        self._unlogged += 1
        now = time.monotonic()
        if now - self._last < _LOG_EVERY_SECONDS:
            return
        self._last = now
        log.warning(
            "closed %d connection(s) whose request did not arrive whole within %.0f s "
            "(latest from %s); many of these at once look like a slow-request attack",
            self._unlogged,
            seconds,
            f"{client[0]}:{client[1]}" if client else "?",
        )
        self._unlogged = 0


TIMEOUTS = _TimeoutLog()


def uvicorn_http_protocol(name: str = "httptools") -> type[asyncio.Protocol]:
    """The protocol class uvicorn serves ``http=name`` with, as its ``Config`` resolves it."""
    config = uvicorn.Config(_no_app, http=name, lifespan="off", log_config=None)
    config.load()
    return config.http_protocol_class


async def _no_app(scope: Any, receive: Any, send: Any) -> None:  # pragma: no cover
    raise RuntimeError("only resolves a protocol class; never serves")


class _WatchedTransport:
    """The transport as the wrapped protocol sees it: the same, but its first write
    tells the deadline that a response has begun. Every other call goes straight
    through; the WebSocket server takes the real transport back (``unwrapped``)."""

    __slots__ = ("_owner", "unwrapped")

    def __init__(self, transport: asyncio.Transport, owner: RequestDeadline) -> None:
        self.unwrapped = transport
        self._owner: RequestDeadline | None = owner

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._owner is not None:
            self._owner.responded = True
        self.unwrapped.write(data)

    def release(self) -> None:
        """The connection is a WebSocket now: let the deadline go (it is not kept alive
        by uvicorn's spent HTTP protocol, which still holds this view)."""
        self._owner = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.unwrapped, name)


class RequestDeadline(asyncio.Protocol):
    """uvicorn's HTTP protocol (``inner``), with the request deadline around it. Use
    :func:`http_with_request_deadline`, which binds the two class attributes."""

    inner: ClassVar[type[asyncio.Protocol]]
    request_seconds: ClassVar[float] = 10.0

    __slots__ = (
        "_deadline",
        "_has_body",
        "_http",
        "_loop",
        "_parser",
        "_transport",
        "_watched",
        "responded",
    )

    def __init__(
        self,
        config: Any,
        server_state: Any,
        app_state: Any = None,
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        # Built as uvicorn builds any protocol class (uvicorn.Config's http= contract).
        make = cast(Any, self.inner)
        self._http: asyncio.Protocol = make(
            config=config, server_state=server_state, app_state=app_state, _loop=_loop
        )
        self._loop = _loop or asyncio.get_event_loop()
        self._parser: httptools.HttpRequestParser | None = httptools.HttpRequestParser(self)
        self._transport: asyncio.Transport | None = None
        self._watched: _WatchedTransport | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._has_body = False
        self.responded = False  # the wrapped protocol has written this request's response

    # --- asyncio.Protocol: ours, then the wrapped protocol's ----------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)
        self._watched = _WatchedTransport(self._transport, self)
        self._http.connection_made(cast(asyncio.Transport, self._watched))
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._parser is not None:
            try:
                self._parser.feed_data(data)
            except httptools.HttpParserUpgrade:
                self._stop_watching()  # a WebSocket now (its headers ended the deadline)
                if self._watched is not None:
                    self._watched.release()
            except httptools.HttpParserError:
                self._stop_watching()  # uvicorn answers 400 and closes
        self._http.data_received(data)

    def eof_received(self) -> bool | None:
        return self._http.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._http.connection_lost(exc)

    def pause_writing(self) -> None:
        self._http.pause_writing()

    def resume_writing(self) -> None:
        self._http.resume_writing()

    def shutdown(self) -> None:  # uvicorn's server, stopping, asks each connection
        self._http.shutdown()  # type: ignore[attr-defined]

    # --- httptools' callbacks: where requests begin and end ----------------------------
    def on_message_begin(self) -> None:
        self._has_body = False
        self.responded = False
        if self._deadline is None:  # the next request on a kept-alive connection
            self._arm()

    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name == b"transfer-encoding":
            self._has_body = True
        elif name == b"content-length":
            self._has_body = value.strip() not in (b"", b"0")

    def on_headers_complete(self) -> None:
        if not self._has_body:
            self._disarm()  # the headers were the whole request (a GET, an upgrade)

    def on_message_complete(self) -> None:
        self._disarm()

    # --- the deadline -------------------------------------------------------------------
    def _stop_watching(self) -> None:
        self._parser = None
        self._disarm()

    def _arm(self) -> None:
        self._deadline = self._loop.call_later(self.request_seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        TIMEOUTS.record(transport.get_extra_info("peername"), self.request_seconds)
        if not self.responded:
            transport.write(_TIMEOUT_RESPONSE)
        transport.close()  # a handler waiting for the body sees a disconnect


def http_with_request_deadline(
    seconds: float, inner: type[asyncio.Protocol] | None = None
) -> type[RequestDeadline]:
    """uvicorn's ``http=`` protocol class: ``inner`` (uvicorn's httptools protocol by
    default) cutting connections whose request takes longer than ``seconds`` to arrive."""
    if seconds <= 0:
        raise ValueError("the request deadline must be positive")
    attributes = {
        "__slots__": (),
        "request_seconds": seconds,
        "inner": inner or uvicorn_http_protocol(),
    }
    return type("RequestDeadlineProtocol", (RequestDeadline,), attributes)
