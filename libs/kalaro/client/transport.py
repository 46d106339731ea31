"""The connection under a :class:`~kalaro.client.socket.TableSocket`, chosen by name.

``"websockets"`` (the default) is the ``websockets`` library's asyncio client: a reader
task delivers each message. ``"fast"`` is the SDK's own frame reader
(:mod:`kalaro.client.wire`), which delivers messages straight from ``data_received``;
it exists for the load generator (``bench/bench_tables.py``), where the library costs
1.7x the client CPU per message received and 1.8x per message sent
(``bench/bench_client_transports.py``; the figures in :mod:`kalaro.client.wire`).
Both send the token as ``Authorization: Bearer`` (never in the URL), offer no
compression, answer pings, close with 1009 on a message over ``max_size`` and report
the end of the connection once, through ``on_lost``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Literal, Protocol

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, ConnectionClosedOK, InvalidURI
from websockets.protocol import State

from kalaro.client.wire import (
    CLOSE_TIMEOUT_SECONDS,
    HANDSHAKE_LOG,
    MAX_SIZE,
    WireClosed,
    open_wire,
)

Transport = Literal["websockets", "fast"]
TRANSPORTS: tuple[Transport, ...] = ("websockets", "fast")


class Connection(Protocol):
    """What the table socket needs of a transport."""

    @property
    def is_open(self) -> bool: ...

    async def send(self, text: str | bytes) -> None:
        """Send one text message (``bytes`` must be UTF-8); :class:`WireClosed` if closed."""

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Close (bounded in time); ``on_lost`` has been called when this returns."""


class LibraryWire:
    """A ``websockets`` client connection, read by a task that calls ``on_message``."""

    def __init__(
        self,
        connection: ClientConnection,
        on_message: Callable[[str], None],
        on_lost: Callable[[Exception | None], None],
    ) -> None:
        self._connection = connection
        self._on_message = on_message
        self._on_lost = on_lost
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @property
    def is_open(self) -> bool:
        return self._connection.state is State.OPEN and not self._reader.done()

    async def send(self, text: str | bytes) -> None:
        try:
            await self._connection.send(text, text=True)
        except ConnectionClosed as exc:
            raise WireClosed("the socket is closed") from exc

    async def close(self, code: int = 1000, reason: str = "") -> None:
        await self._connection.close(code, reason)
        if asyncio.current_task() is not self._reader:
            await asyncio.shield(self._reader)

    async def _read(self) -> None:
        lost: Exception | None = None
        try:
            async for message in self._connection:
                if isinstance(message, bytes):
                    try:
                        message = message.decode()
                    except UnicodeDecodeError:
                        await self._connection.close(1007, "a message that is not UTF-8")
                        continue
                self._on_message(message)
        except ConnectionClosedOK:
            pass
        except ConnectionClosed as exc:  # 1009 for a message over max_size, 1006 ...
            lost = exc
        except Exception as exc:  # a reader must always report the end
            lost = exc
        self._on_lost(lost)


async def open_library_wire(
    url: str,
    on_message: Callable[[str], None],
    on_lost: Callable[[Exception | None], None],
    *,
    max_size: int = MAX_SIZE,
    timeout: float = 10,
    token: str | None = None,
) -> LibraryWire:
    """Connect with the ``websockets`` library; see :func:`open_connection`."""
    headers = [("Authorization", f"Bearer {token}")] if token else None
    try:
        connection = await connect(
            url,
            additional_headers=headers,
            compression=None,  # as the fast reader: see kalaro.settings.ws_compression
            proxy=None,  # straight to the gateway, as the fast reader
            open_timeout=timeout,
            ping_interval=None,  # the table socket sends its own ``ping`` frames
            close_timeout=CLOSE_TIMEOUT_SECONDS,
            max_size=max_size,
            logger=HANDSHAKE_LOG,
        )
    except InvalidURI as exc:
        raise ValueError(f"not a WebSocket URL: {url}") from exc
    return LibraryWire(connection, on_message, on_lost)


async def open_connection(
    transport: Transport,
    url: str,
    on_message: Callable[[str], None],
    on_lost: Callable[[Exception | None], None],
    *,
    max_size: int = MAX_SIZE,
    timeout: float = 10,
    token: str | None = None,
) -> Connection:
    """Connect to ``url`` over ``transport`` and finish the opening handshake.

    ``on_message`` gets every text message in order; ``on_lost`` is called once when the
    connection ends, whoever ended it.
    """
    if transport == "websockets":
        return await open_library_wire(
            url, on_message, on_lost, max_size=max_size, timeout=timeout, token=token
        )
    if transport == "fast":
        return await open_wire(
            url, on_message, on_lost, max_size=max_size, timeout=timeout, token=token
        )
    raise ValueError(f"unknown transport {transport!r}: one of {', '.join(TRANSPORTS)}")


__all__ = [
    "TRANSPORTS",
    "Connection",
    "LibraryWire",
    "Transport",
    "WireClosed",
    "open_connection",
    "open_library_wire",
]
