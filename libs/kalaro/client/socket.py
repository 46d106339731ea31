"""WebSocket side of the SDK: subscribe to tables, keep the newest views, send moves.

The connection is the ``websockets`` library by default; ``transport="fast"`` picks the
SDK's own frame reader, for load generators (:mod:`kalaro.client.transport`). Every
frame is decoded as it arrives and kept by :class:`~kalaro.client.tables.TableFrames`
(the newest view per table, results, chat, errors, the request a ``ref`` answers),
which this class extends with the connection and the requests. It pings whenever it
has been quiet for half a heartbeat. With ``reconnect=True`` a dropped connection is
re-established and every table re-subscribed, which brings a full view of each. Moves
and subscriptions answered ``unavailable`` (no service answered the gateway) are sent
again with the client's backoff (:mod:`kalaro.client.retry`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

import msgspec
from websockets.exceptions import InvalidHandshake

from kalaro.client.tables import FrameError, SeatView, TableFrames, TableState
from kalaro.client.transport import Connection, Transport, open_connection
from kalaro.client.wire import MAX_SIZE, WireClosed
from kalaro.proto import ws as w
from kalaro.proto.errors import FORBIDDEN, NOT_FOUND

if TYPE_CHECKING:
    from kalaro.client.http import KalaroClient

log = logging.getLogger("kalaro.client")

_decode_frame = msgspec.json.Decoder(w.AnyServerFrame).decode
_encode = msgspec.json.Encoder().encode
_PING = _encode(w.Ping())


def _expire(future: asyncio.Future[Any], timeout: float) -> None:
    if not future.done():
        future.set_exception(TimeoutError(f"no reply from the gateway in {timeout} s"))


class TableSocket(TableFrames):
    """A WebSocket to the gateway: see the module's docstring and :class:`TableFrames`."""

    def __init__(
        self,
        client: KalaroClient,
        *,
        reconnect: bool = True,
        keep_frames: bool = True,
        transport: Transport = "websockets",
        max_size: int = MAX_SIZE,
    ) -> None:
        self._client = client
        self.transport: Transport = transport
        self._max_size = max_size  # a larger message closes the socket with 1009
        super().__init__()
        self._reconnect = reconnect
        self._keep_frames = keep_frames
        self._wire: Connection | None = None
        self._reconnecting: asyncio.Task[None] | None = None
        self._heartbeat: asyncio.Task[None] | None = None
        self._last_sent = time.monotonic()
        self._refs = itertools.count(1)
        self._closing = False
        self._invites: dict[str, str] = {}  # table id -> invite code, for resubscribing
        self.raw_frames: list[str] = []  # everything received, for audits in tests
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
        return f"{base}/ws"  # the token goes in a header (see _open), never in the URL

    async def _open(self) -> Connection:
        welcome: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        opened = False

        def on_message(text: str) -> None:
            if not welcome.done():
                welcome.set_result(text)  # the first frame: welcome, or why not
            else:
                self._on_text(text)

        def on_lost(exc: Exception | None) -> None:
            if opened:
                self._on_lost(exc)
            elif not welcome.done():
                welcome.set_exception(WireClosed(f"closed before the welcome frame: {exc}"))

        try:
            wire = await open_connection(
                self.transport,
                self.url,
                on_message,
                on_lost,
                max_size=self._max_size,
                token=self._client.access_token,
            )
        except BaseException:
            if welcome.done() and not welcome.cancelled():
                welcome.exception()  # seen: the handshake's own error is the one raised
            raise
        try:
            first = await asyncio.wait_for(welcome, 10)
        except BaseException:
            await wire.close()
            raise
        self.raw_frames.append(first)
        frame = _decode_frame(first)
        if isinstance(frame, w.Error):
            await wire.close()
            raise FrameError(frame.code, frame.message)
        if isinstance(frame, w.Welcome) and self._heartbeat is None:
            # The gateway closes a socket that sends nothing for three heartbeats; a
            # seat waiting for its turn (or a spectator) must not be dropped for that.
            every = frame.heartbeat_seconds / 2
            self._heartbeat = asyncio.get_running_loop().create_task(self._beat(every))
        self.connects += 1
        opened = True
        return wire

    async def connect(self) -> None:
        self._closing = False
        self._wire = await self._open()

    async def close(self) -> None:
        self._closing = True
        if self._reconnecting is not None:
            self._reconnecting.cancel()
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            self._heartbeat = None  # a later connect() starts a new one
        if self._wire is not None:
            await self._wire.close()

    async def drop(self) -> None:
        """Close the connection as a network failure would (tests of reconnection)."""
        if self._wire is not None:
            await self._wire.close(4000, "dropped by test")

    # --- requests ---------------------------------------------------------------------
    async def _send(self, text: str | bytes) -> None:
        if self._wire is None:
            raise WireClosed("not connected")
        await self._wire.send(text)
        self._last_sent = time.monotonic()

    async def _beat(self, every: float) -> None:
        """Send a ``ping`` whenever nothing else was sent for ``every`` seconds."""
        while not self._closing:
            await asyncio.sleep(every)
            if time.monotonic() - self._last_sent >= every:
                with contextlib.suppress(WireClosed):  # reconnecting: nothing to keep alive
                    await self._send(_PING)

    async def send_raw(self, text: str) -> None:
        await self._send(text)

    async def _request(
        self, frame_factory: Callable[[int], w.ClientFrame], timeout: float = 10
    ) -> w.ServerFrame:
        ref = next(self._refs)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[w.ServerFrame] = loop.create_future()
        self._pending[ref] = future
        # A timer, not asyncio.wait_for: that wraps every request in more futures and
        # callbacks, which a load generator sending a thousand moves a second feels.
        timer = loop.call_later(timeout, _expire, future, timeout)
        try:
            await self._send(_encode(frame_factory(ref)))
            reply = await future
        finally:
            timer.cancel()
            self._pending.pop(ref, None)
        if isinstance(reply, w.Error):
            raise FrameError(reply.code, reply.message)
        return reply

    async def subscribe(self, table_id: str, invite_code: str | None = None) -> w.Subscribed:
        """Join the table's frames (a read: tried again while nobody answers). A private
        table needs its ``invite_code`` unless you host or sit there; it is remembered
        for subscribing again after a reconnect."""
        if invite_code is not None:
            self._invites[table_id] = invite_code
        code = self._invites.get(table_id)
        reply = await self._client.retry.run(
            lambda: self._request(
                lambda ref: w.Subscribe(table_id=table_id, ref=ref, invite_code=code)
            ),
            what=f"subscribe {table_id}",
        )
        assert isinstance(reply, w.Subscribed)
        return reply

    async def unsubscribe(self, table_id: str) -> None:
        await self._request(lambda ref: w.Unsubscribe(table_id=table_id, ref=ref))
        self.tables.pop(table_id, None)

    async def act(
        self,
        table_id: str,
        action: dict[str, Any],
        version: int | None = None,
        *,
        retry: bool = True,
    ) -> w.Ack:
        """Send a move decided on hand ``version`` (default: the newest view's).

        While the gateway answers ``unavailable`` (the game's engine is restarting) the
        same move, at the same version, is sent again with the client's backoff until
        its deadline: the engine applies a version once, so a repeat of a move that did
        apply is refused ``stale_version`` (:class:`FrameError`): resync and decide
        again. ``retry=False`` raises the first refusal.
        """
        if version is None:
            view = self.view(table_id)
            if view is None:
                raise RuntimeError(f"no view of table {table_id} yet")
            version = view.version
        at = version

        def send() -> Awaitable[w.ServerFrame]:
            return self._request(
                lambda ref: w.Act(table_id=table_id, version=at, action=action, ref=ref)
            )

        if retry:
            reply = await self._client.retry.run(send, what=f"move at {table_id} v{at}")
        else:
            reply = await send()
        assert isinstance(reply, w.Ack)
        return reply

    async def resync(self, table_id: str) -> None:
        await self._send(_encode(w.Resync(table_id=table_id)))

    async def chat(self, table_id: str, text: str) -> None:
        await self._request(lambda ref: w.Chat(table_id=table_id, text=text, ref=ref))

    async def ready(self, table_id: str, ready: bool = True, entropy: str = "") -> None:
        await self._request(
            lambda ref: w.Ready(table_id=table_id, ready=ready, entropy=entropy, ref=ref)
        )

    async def deal(self, table_id: str) -> None:
        await self._request(lambda ref: w.Deal(table_id=table_id, ref=ref))

    async def ping(self) -> None:
        await self._request(lambda ref: w.Ping(ref=ref))

    # --- reading ----------------------------------------------------------------------
    def _on_text(self, text: str) -> None:
        """Called by the wire for every frame, in order, as soon as it is parsed."""
        if self._keep_frames:
            self.raw_frames.append(text)
        try:
            self._on_frame(_decode_frame(text))
        except Exception:
            log.exception("client socket could not handle a frame")

    def _on_lost(self, exc: Exception | None) -> None:
        self._wire = None
        lost = WireClosed(f"connection lost: {exc}" if exc else "connection closed")
        for future in self._pending.values():
            if not future.done():
                future.set_exception(lost)
        self._wake_watchers()
        if not self._closing and self._reconnect:
            self._reconnecting = asyncio.get_running_loop().create_task(self._reconnect_loop())

    async def _reconnect_loop(self) -> None:
        delay = 0.1
        while not self._closing:
            try:
                self._wire = await self._open()
                break
            except (OSError, TimeoutError, FrameError, InvalidHandshake):  # WireClosed too
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
        for table_id in list(self.tables):
            await self._subscribe_again(table_id)

    async def _subscribe_again(self, table_id: str) -> None:
        """After a reconnect: join the table again, and make sure it took (a gateway that
        just came up may refuse while its peers are still starting)."""
        delay = 0.2
        while not self._closing and self._wire is not None:
            try:
                await self.subscribe(table_id)
                return
            except WireClosed:
                return  # lost again: the next reconnect subscribes again
            except (FrameError, TimeoutError) as exc:
                # a table gone, or one we may no longer join: retrying will not change it
                if isinstance(exc, FrameError) and exc.code in (NOT_FOUND, FORBIDDEN):
                    log.info("table %s: not subscribed again after a reconnect: %s", table_id, exc)
                    return
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)


__all__ = ["FrameError", "SeatView", "TableSocket", "TableState"]
