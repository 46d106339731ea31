"""uvicorn's HTTP protocol with a deadline for each request to arrive.

uvicorn waits for ever on a connection that sends no request, or sends its headers or
body one byte at a time (it arms a timer only between keep-alive requests): a few
thousand such connections ("slowloris") hold as many file descriptors and keep players
out. Here a request, headers and body, must arrive whole within ``seconds`` of the
connection opening, or of the request's first byte on a kept-alive connection;
otherwise the client gets ``408 Request Timeout`` (unless a response has begun) and the
connection is closed. A request without a body is done with its headers, so a
WebSocket upgrade (then served by ``wsserver``) is not limited by the deadline.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

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


class _RequestDeadlineProtocol(HttpToolsProtocol):
    request_seconds: ClassVar[float] = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._deadline is None:  # the next request on a kept-alive connection
            self._arm()

    def on_headers_complete(self) -> None:
        if not self._expects_body():
            self._disarm()  # the headers were the whole request (a GET, an upgrade)
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _expects_body(self) -> bool:
        for name, value in self.headers:  # names are lower case (uvicorn's on_header)
            if name == b"transfer-encoding":
                return True
            if name == b"content-length":
                return value.strip() not in (b"", b"0")
        return False

    def _arm(self) -> None:
        self._deadline = self.loop.call_later(self.request_seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        TIMEOUTS.record(self.client, self.request_seconds)
        cycle = self.cycle
        if cycle is None or not cycle.response_started:
            self.transport.write(_TIMEOUT_RESPONSE)
        self.transport.close()  # a handler waiting for the body sees a disconnect


def http_with_request_deadline(seconds: float) -> type[HttpToolsProtocol]:
    """uvicorn's ``http=`` protocol class, cutting connections whose request takes
    longer than ``seconds`` to arrive."""
    if seconds <= 0:
        raise ValueError("the request deadline must be positive")
    bases = (_RequestDeadlineProtocol,)
    return type("RequestDeadlineProtocol", bases, {"request_seconds": seconds})
