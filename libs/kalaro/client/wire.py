"""A client WebSocket that hands each message over as soon as it is parsed.

``websockets``' sans-I/O protocol does the handshake, framing, ping/pong and the
closing handshake; this module only moves bytes between it and an asyncio transport.
Messages are delivered by calling ``on_message`` from ``data_received``, with no
reader task or queue in between: a load generator holding 1,500 sockets spent a
third of its time in that machinery (``bench/bench_tables.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Callable
from typing import cast

from websockets.client import ClientProtocol
from websockets.exceptions import InvalidURI
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.protocol import CLOSED
from websockets.uri import parse_uri

CLOSE_TIMEOUT_SECONDS = 2.0


class WireClosed(ConnectionError):
    """The socket is closed (by either side, or by the network)."""


class Wire(asyncio.Protocol):
    """One WebSocket connection; see :func:`open_wire`."""

    def __init__(
        self,
        protocol: ClientProtocol,
        on_message: Callable[[str], None],
        on_lost: Callable[[Exception | None], None],
    ) -> None:
        self._protocol = protocol
        self._on_message = on_message
        self._on_lost = on_lost
        self._transport: asyncio.Transport | None = None
        self._fragments: list[bytes] = []
        self._abort_armed = False
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    # --- asyncio.Protocol ---------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but behave as one.
        self._transport = cast(asyncio.Transport, transport)
        self._protocol.send_request(self._protocol.connect())
        self._flush()

    def data_received(self, data: bytes) -> None:
        self._protocol.receive_data(data)
        self._deliver()

    def eof_received(self) -> bool | None:
        self._protocol.receive_eof()
        self._deliver()
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
        return self.opened.done() and not self.lost.done() and self._protocol.state is not CLOSED

    def send_text(self, text: str) -> None:
        if not self.is_open:
            raise WireClosed("the socket is closed")
        self._protocol.send_text(text.encode())
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

    def _deliver(self) -> None:
        for event in self._protocol.events_received():
            if isinstance(event, Response):
                self._on_handshake(event)
            elif isinstance(event, Frame):
                self._on_frame(event)
        self._flush()  # pongs and close replies queued by the protocol

    def _on_handshake(self, response: Response) -> None:
        if self.opened.done():
            return
        failure = self._protocol.handshake_exc
        if failure is not None:
            self.opened.set_exception(failure)
        else:
            self.opened.set_result(None)

    def _on_frame(self, frame: Frame) -> None:
        if frame.opcode in (Opcode.TEXT, Opcode.BINARY, Opcode.CONT):
            self._fragments.append(bytes(frame.data))
            if frame.fin:
                data = b"".join(self._fragments)
                self._fragments.clear()
                self._on_message(data.decode())


async def open_wire(
    url: str,
    on_message: Callable[[str], None],
    on_lost: Callable[[Exception | None], None],
    *,
    max_size: int = 2**22,
    timeout: float = 10,
) -> Wire:
    """Connect to ``url`` (``ws://`` or ``wss://``) and finish the opening handshake.

    ``on_message`` gets every text message in order; ``on_lost`` is called once when
    the connection ends, whoever ended it.
    """
    try:
        uri = parse_uri(url)
    except InvalidURI as exc:
        raise ValueError(f"not a WebSocket URL: {url}") from exc
    loop = asyncio.get_running_loop()
    # No extensions offered: no permessage-deflate (see kalaro.settings.ws_compression).
    protocol = ClientProtocol(uri, max_size=max_size)
    context = ssl.create_default_context() if uri.secure else None
    async with asyncio.timeout(timeout):
        _, wire = await loop.create_connection(
            lambda: Wire(protocol, on_message, on_lost), uri.host, uri.port, ssl=context
        )
        try:
            await wire.opened
        except BaseException:
            await wire.close()
            raise
    return wire
