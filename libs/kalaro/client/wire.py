"""The fast reader: a client WebSocket that hands each message over as soon as it is parsed.

Opt-in (``table_socket(transport="fast")``), for the load generator; the SDK's default
is the ``websockets`` library (:mod:`kalaro.client.transport`).

Why it is kept beside the library: it costs the client about 40% less CPU per message.
``bench/bench_client_transports.py`` (both transports in one run, a server in another
process) measured, on the 2-core dev machine 2026-12-05, 3.8 µs of client CPU per
1,500-character message received against the library's 6.4 (1.7x), and 3.1 µs per message
sent against 5.5 (1.8x). For the load generator, which shares the cores with the stack
it measures, that is CPU the services get back (``bench/bench_tables.py --transport``);
for an app or a bot (a few messages a second) it is nothing, hence the default.

``websockets``' sans-I/O protocol does the opening handshake and frames what we send
(masked, as a client must). Frames from the server are parsed by
:class:`kalaro.wsframes.FrameReader` (the gateway's server reads with it too): for the
text frames that make up nearly all traffic that is a few byte reads, where
``websockets``' generator-based parser and its reader task cost the rest. Messages are
delivered by calling ``on_message`` from ``data_received``, with no reader task or queue
in between.

RFC 6455 as a client sees it: fragments are joined; pings are answered; a close frame
is answered with a close frame and the server then ends TCP; a masked or reserved-bit
frame, an unknown opcode, bad UTF-8 or a message over ``max_size`` closes the socket
with the matching code.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Callable, Sequence
from typing import cast

from websockets.client import ClientProtocol
from websockets.exceptions import InvalidURI
from websockets.http11 import Response
from websockets.protocol import OPEN
from websockets.uri import parse_uri

from kalaro.wsframes import BAD_DATA, CLOSE, PING, FrameReader

CLOSE_TIMEOUT_SECONDS = 2.0
MAX_SIZE = 2**22  # the largest message either transport accepts by default (4 MiB)


def _redact(record: logging.LogRecord) -> bool:
    """``websockets`` logs every handshake header at DEBUG: keep the token out."""
    args = record.args
    if isinstance(args, tuple) and len(args) == 2 and str(args[0]).lower() == "authorization":
        record.args = (args[0], "Bearer [redacted]")
    return True


#: The logger both transports give ``websockets`` (instead of ``websockets.client``).
HANDSHAKE_LOG = logging.getLogger("kalaro.client.websocket")
HANDSHAKE_LOG.addFilter(_redact)


class WireClosed(ConnectionError):
    """The socket is closed (by either side, or by the network)."""


class Wire(asyncio.Protocol):
    """One WebSocket connection; see :func:`open_wire`."""

    def __init__(
        self,
        protocol: ClientProtocol,
        on_message: Callable[[str], None],
        on_lost: Callable[[Exception | None], None],
        max_size: int = MAX_SIZE,
        headers: Sequence[tuple[str, str]] = (),
    ) -> None:
        self._protocol = protocol
        self._headers = tuple(headers)
        self._on_message = on_message
        self._on_lost = on_lost
        self._transport: asyncio.Transport | None = None
        self._received = bytearray()  # bytes after the handshake not yet parsed
        # Text is decoded (and so checked) once, in _on_data.
        self._frames = FrameReader(
            masked=False,
            max_size=max_size,
            on_message=self._on_data,
            on_control=self._on_control,
            on_error=self._fail,
            check_text=False,
        )
        self._abort_armed = False
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    # --- asyncio.Protocol ---------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but behave as one.
        self._transport = cast(asyncio.Transport, transport)
        request = self._protocol.connect()
        for name, value in self._headers:
            request.headers[name] = value
        self._protocol.send_request(request)
        self._flush()

    def data_received(self, data: bytes) -> None:
        self._received += data  # before the handshake: kept until it shows where frames begin
        if self.opened.done():
            self._frames.feed(self._received)
            return
        self._protocol.receive_data(data)
        for event in self._protocol.events_received():
            if isinstance(event, Response):
                self._on_handshake(event)
                break
        self._flush()

    def eof_received(self) -> bool | None:
        return None  # let the transport close itself

    def connection_lost(self, exc: Exception | None) -> None:
        error = exc or WireClosed("connection closed")
        if not self.opened.done():
            self.opened.set_exception(error)
        if not self.lost.done():
            self.lost.set_result(None)
        self._on_lost(exc)

    # --- sending ------------------------------------------------------------------------
    @property
    def is_open(self) -> bool:
        return self._protocol.state is OPEN and not self.lost.done()

    def send_text(self, text: str | bytes) -> None:
        """Send a text message (``bytes`` must be UTF-8 already)."""
        if not self.is_open:
            raise WireClosed("the socket is closed")
        self._protocol.send_text(text.encode() if isinstance(text, str) else text)
        self._flush()

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """The closing handshake, bounded: the transport is aborted if it hangs."""
        if self._transport is None or self.lost.done():
            return
        if self.is_open:
            self._protocol.send_close(code, reason)
            self._flush()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.lost), CLOSE_TIMEOUT_SECONDS)
        if not self.lost.done():
            self._transport.abort()
            await self.lost

    async def send(self, text: str | bytes) -> None:
        """:meth:`send_text`, in the shape every transport shares (never waits here)."""
        self.send_text(text)

    # --- internals ----------------------------------------------------------------------
    def _flush(self) -> None:
        transport = self._transport
        assert transport is not None
        for data in self._protocol.data_to_send():
            if data:
                transport.write(data)
            elif transport.can_write_eof():
                transport.write_eof()  # the protocol's signal to half-close
        if self._protocol.close_expected() and not self._abort_armed:
            # The peer should close TCP now; make sure it happens even if it does not.
            self._abort_armed = True
            asyncio.get_running_loop().call_later(CLOSE_TIMEOUT_SECONDS, transport.abort)

    def _on_handshake(self, response: Response) -> None:
        failure = self._protocol.handshake_exc
        if failure is not None:
            self.opened.set_exception(failure)
            self._frames.failed = True  # whatever follows a refusal is not frames
            self._received.clear()
            return
        self.opened.set_result(None)
        # Frames the server sent right behind its response came in the same bytes:
        # everything after the response's blank line is ours to parse.
        end = self._received.find(b"\r\n\r\n")
        del self._received[: end + 4]
        self._frames.feed(self._received)

    def _on_data(self, opcode: int, payload: bytes) -> None:
        try:
            text = payload.decode()
        except UnicodeDecodeError:
            self._frames.fail(BAD_DATA, "a message that is not UTF-8")
            return
        self._on_message(text)

    def _on_control(self, opcode: int, payload: bytes) -> None:
        if not self.is_open:
            return
        if opcode == PING:
            self._protocol.send_pong(payload)
        elif opcode == CLOSE:
            code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1000
            self._protocol.send_close(code if 1000 <= code < 5000 else 1000)
        self._flush()

    def _fail(self, code: int, reason: str) -> None:
        """The server broke the protocol: close with ``code`` (the reader reads no more)."""
        if self.is_open:
            self._protocol.send_close(code, reason)
            self._flush()


async def open_wire(
    url: str,
    on_message: Callable[[str], None],
    on_lost: Callable[[Exception | None], None],
    *,
    max_size: int = MAX_SIZE,
    timeout: float = 10,
    token: str | None = None,
) -> Wire:
    """Connect to ``url`` (``ws://`` or ``wss://``) and finish the opening handshake.

    ``token`` (an access token) is sent as ``Authorization: Bearer``, never in the URL.

    ``on_message`` gets every text message in order; ``on_lost`` is called once when
    the connection ends, whoever ended it.
    """
    try:
        uri = parse_uri(url)
    except InvalidURI as exc:
        raise ValueError(f"not a WebSocket URL: {url}") from exc
    loop = asyncio.get_running_loop()
    # No extensions offered: no permessage-deflate (see kalaro.settings.ws_compression).
    protocol = ClientProtocol(uri, max_size=max_size, logger=HANDSHAKE_LOG)
    headers = [("Authorization", f"Bearer {token}")] if token else []
    context = ssl.create_default_context() if uri.secure else None
    async with asyncio.timeout(timeout):
        _, wire = await loop.create_connection(
            lambda: Wire(protocol, on_message, on_lost, max_size, headers),
            uri.host,
            uri.port,
            ssl=context,
        )
        try:
            await wire.opened
        except BaseException:
            await wire.close()
            raise
    return wire
