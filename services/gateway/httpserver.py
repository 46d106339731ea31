"""uvicorn's HTTP protocol with a deadline for a request's headers.

uvicorn waits for ever on a connection that sends no request, or one header byte at a
time (it arms a timer only between keep-alive requests): a few thousand such
connections ("slowloris") hold as many file descriptors and keep players out. Here a
request's headers must arrive whole within ``seconds`` of the connection opening, or of
the request's first byte on a kept-alive connection; otherwise the client gets
``408 Request Timeout`` and the connection is closed. The deadline ends with the
headers, so a WebSocket upgrade (then served by ``wsserver``) and a request body are not
limited by it; the body size is (``limits.MAX_BODY_BYTES``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger("kalaro.gateway.http")

_TIMEOUT_BODY = b"no complete request headers in time\n"
_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(_TIMEOUT_BODY), _TIMEOUT_BODY)
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
            "closed %d connection(s) that sent no complete request headers within %.0f s "
            "(latest from %s); many of these at once look like a slow-headers attack",
            self._unlogged,
            seconds,
            f"{client[0]}:{client[1]}" if client else "?",
        )
        self._unlogged = 0


TIMEOUTS = _TimeoutLog()


class _HeaderDeadlineProtocol(HttpToolsProtocol):
    header_seconds: ClassVar[float] = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._header_timer is None:  # the next request on a kept-alive connection
            self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._header_timer = self.loop.call_later(self.header_seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _too_slow(self) -> None:
        self._header_timer = None
        if self.transport.is_closing():
            return
        TIMEOUTS.record(self.client, self.header_seconds)
        self.transport.write(_TIMEOUT_RESPONSE)
        self.transport.close()


def http_with_header_deadline(seconds: float) -> type[HttpToolsProtocol]:
    """uvicorn's ``http=`` protocol class, cutting connections whose request headers
    take longer than ``seconds``."""
    if seconds <= 0:
        raise ValueError("the header deadline must be positive")
    return type("HeaderDeadlineProtocol", (_HeaderDeadlineProtocol,), {"header_seconds": seconds})
