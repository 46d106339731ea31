"""WebSocket side of the SDK: subscribe to tables, keep the newest views, send moves.

A reader task decodes every frame, keeps the newest view per table (frames older
than what we hold are ignored; every view is complete, so a gap heals itself), records results,
chat and errors, and resolves the request that a ``ref`` answers. With
``reconnect=True`` a dropped connection is re-established and every table
re-subscribed, which brings a full view of each.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any

import msgspec
import websockets
from websockets.exceptions import ConnectionClosed

from kalaro.proto import ws as w
from kalaro.proto.lobby import TableInfo

if TYPE_CHECKING:
    from kalaro.client.http import KalaroClient

log = logging.getLogger("kalaro.client")

_decode_frame = msgspec.json.Decoder(w.AnyServerFrame).decode
_encode = msgspec.json.Encoder().encode


class FrameError(Exception):
    """The server answered a frame with an ``error`` frame."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass
class SeatView:
    """A decoded ``view`` frame: the hand as this socket may see it."""

    table_id: str
    hand_id: str
    version: int
    seat: int | None
    view: dict[str, Any]
    events: list[Any]
    deadline_ms: int | None


@dataclass
class TableState:
    table: TableInfo | None = None
    seat: int | None = None
    view: SeatView | None = None
    results: list[w.HandResult] = field(default_factory=list)
    chat: list[w.ChatPosted] = field(default_factory=list)


class TableSocket:
    def __init__(
        self, client: KalaroClient, *, reconnect: bool = True, keep_frames: bool = True
    ) -> None:
        self._client = client
        self._reconnect = reconnect
        self._keep_frames = keep_frames
        #: called with every accepted (newer) view; load generators time arrivals here
        self.view_listeners: list[Callable[[SeatView], None]] = []
        self._ws: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._refs = itertools.count(1)
        self._pending: dict[int, asyncio.Future[w.ServerFrame]] = {}
        self._changed = asyncio.Condition()
        self._closing = False
        self.tables: dict[str, TableState] = {}
        self.raw_frames: list[str] = []  # everything received, for audits in tests
        self.errors: list[w.Error] = []
        self.connects = 0

    async def __aenter__(self) -> TableSocket:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def url(self) -> str:
        base = self._client.base_url.replace("https://", "wss://").replace("http://", "ws://")
        return f"{base}/ws?token={self._client.access_token}"

    async def connect(self) -> None:
        self._ws = await websockets.connect(self.url, max_size=2**22)
        self.connects += 1
        welcome = await asyncio.wait_for(self._ws.recv(), 10)
        self.raw_frames.append(welcome)
        frame = _decode_frame(welcome)
        if isinstance(frame, w.Error):
            raise FrameError(frame.code, frame.message)
        if self._reader is None or self._reader.done():
            self._reader = asyncio.create_task(self._read_loop())

    async def close(self) -> None:
        self._closing = True
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader

    async def drop(self) -> None:
        """Close the connection as a network failure would (tests of reconnection)."""
        if self._ws is not None:
            await self._ws.close(code=4000, reason="dropped by test")

    # --- requests ---------------------------------------------------------------------
    async def send_raw(self, text: str) -> None:
        await self._ws.send(text)

    async def _request(
        self, frame_factory: Callable[[int], w.ClientFrame], timeout: float = 10
    ) -> w.ServerFrame:
        ref = next(self._refs)
        future: asyncio.Future[w.ServerFrame] = asyncio.get_running_loop().create_future()
        self._pending[ref] = future
        try:
            await self._ws.send(_encode(frame_factory(ref)).decode())
            reply = await asyncio.wait_for(future, timeout)
        finally:
            self._pending.pop(ref, None)
        if isinstance(reply, w.Error):
            raise FrameError(reply.code, reply.message)
        return reply

    async def subscribe(self, table_id: str) -> w.Subscribed:
        reply = await self._request(lambda ref: w.Subscribe(table_id, ref))
        assert isinstance(reply, w.Subscribed)
        return reply

    async def unsubscribe(self, table_id: str) -> None:
        await self._request(lambda ref: w.Unsubscribe(table_id, ref))
        self.tables.pop(table_id, None)

    async def act(self, table_id: str, action: dict[str, Any], version: int | None = None) -> w.Ack:
        if version is None:
            view = self.view(table_id)
            if view is None:
                raise RuntimeError(f"no view of table {table_id} yet")
            version = view.version
        reply = await self._request(lambda ref: w.Act(table_id, version, action, ref))
        assert isinstance(reply, w.Ack)
        return reply

    async def resync(self, table_id: str) -> None:
        await self._ws.send(_encode(w.Resync(table_id)).decode())

    async def chat(self, table_id: str, text: str) -> None:
        await self._request(lambda ref: w.Chat(table_id, text, ref))

    async def ready(self, table_id: str, ready: bool = True, entropy: str = "") -> None:
        await self._request(lambda ref: w.Ready(table_id, ready, entropy, ref))

    async def deal(self, table_id: str) -> None:
        await self._request(lambda ref: w.Deal(table_id, ref))

    async def ping(self) -> None:
        await self._request(lambda ref: w.Ping(ref))

    # --- state ------------------------------------------------------------------------
    def state(self, table_id: str) -> TableState:
        return self.tables.setdefault(table_id, TableState())

    def view(self, table_id: str) -> SeatView | None:
        return self.state(table_id).view

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 15) -> None:
        async with asyncio.timeout(timeout):
            async with self._changed:
                await self._changed.wait_for(predicate)

    # --- reading ----------------------------------------------------------------------
    async def _read_loop(self) -> None:
        while True:
            try:
                async for text in self._ws:
                    if self._keep_frames:
                        self.raw_frames.append(text)
                    await self._on_frame(_decode_frame(text))
            except ConnectionClosed:
                pass
            except Exception:
                log.exception("client socket reader failed")
            if self._closing or not self._reconnect:
                return
            await self._reconnect_loop()

    async def _reconnect_loop(self) -> None:
        delay = 0.1
        while not self._closing:
            try:
                self._ws = await websockets.connect(self.url, max_size=2**22)
                self.connects += 1
                break
            except OSError:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
        for table_id in list(self.tables):
            await self._ws.send(_encode(w.Subscribe(table_id)).decode())

    async def _on_frame(self, frame: w.ServerFrame) -> None:
        ref = getattr(frame, "ref", None)
        match frame:
            case w.HandView():
                self._on_view(frame)
            case w.Subscribed(table=table, seat=seat):
                state = self.state(table.table_id)
                state.table, state.seat = table, seat
            case w.TableChanged(table=table):
                self.state(table.table_id).table = table
            case w.HandResult(table_id=table_id):
                self.state(table_id).results.append(frame)
            case w.ChatPosted(table_id=table_id):
                self.state(table_id).chat.append(frame)
            case w.Error():
                self.errors.append(frame)
            case _:
                pass
        if ref is not None and ref in self._pending and not self._pending[ref].done():
            self._pending[ref].set_result(frame)
        async with self._changed:
            self._changed.notify_all()

    def _on_view(self, frame: w.HandView) -> None:
        state = self.state(frame.table_id)
        current = state.view
        # The newest view wins; a version jump needs no resync (every view is complete).
        stale = current is not None and current.hand_id == frame.hand_id
        if stale and current is not None and frame.version <= current.version:
            return
        state.view = SeatView(
            frame.table_id, frame.hand_id, frame.version, frame.seat,
            msgspec.json.decode(frame.view), msgspec.json.decode(frame.events),
            frame.deadline_ms,
        )  # fmt: skip
        for listener in self.view_listeners:
            listener(state.view)
