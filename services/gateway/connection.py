"""One client socket as the hub sees it: who it is, what it watches, its outbound queue.

Kept apart from the fan-out (:mod:`services.gateway.table_feed`) and the registry
(:mod:`services.gateway.hub`) because it is the part tuned per frame: every move is
pushed to several sockets, so its queue is a plain list with one waiter and no task
while idle.

Each socket has a bounded outbound queue drained by its own writer task, so one
slow client can never stall the fan-out; a client that falls too far behind is
disconnected and, on reconnecting, gets a full view.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

# The hub's logger, as before these modules were split from it: log filters name it.
log = logging.getLogger("kalaro.gateway.hub")

#: Frames queued for one socket; one more and the socket is too slow: it is closed.
OUTBOX_LIMIT = 256


class Flag:
    """``asyncio.Event`` without its deque of waiters: a future only while someone waits."""

    __slots__ = ("_future", "_value")

    def __init__(self) -> None:
        self._value = False
        self._future: asyncio.Future[None] | None = None

    def is_set(self) -> bool:
        return self._value

    def set(self) -> None:
        if not self._value:
            self._value = True
            future, self._future = self._future, None
            if future is not None and not future.done():
                future.set_result(None)

    def clear(self) -> None:
        self._value = False

    async def wait(self) -> bool:
        if self._value:
            return True
        if self._future is None:
            self._future = asyncio.get_running_loop().create_future()
        # Shielded: one waiter's cancellation must not cancel the others' future.
        await asyncio.shield(self._future)
        return True


class Connection:
    """One client socket: who it is, what it watches, and its outbound queue.

    The queue is a plain list with one waiter: ``asyncio.Queue`` cost a few
    microseconds per frame more, and every move fans out to several sockets.

    With ``write_now`` (the server can write encoded frames synchronously, see
    ``wsserver``), frames skip the writer task: whatever was pushed during one turn of
    the event loop goes out in one write from a ``call_soon`` callback. The writer task
    still sends whatever ``write_now`` declines (the socket is paused or closing); with
    ``write_now`` it is only started then, so an idle socket costs no task of its own.
    """

    # Slots: an idle socket's Connection is most of what the gateway holds for it.
    __slots__ = (
        "_flush_pending",
        "_outbox",
        "_send",
        "_wakeup",
        "_write_now",
        "_writer",
        "close_code",
        "closed",
        "display_name",
        "last_heard",
        "on_close",
        "seats",
        "session",
        "user_id",
    )

    def __init__(
        self,
        user_id: str,
        display_name: str,
        send: Callable[[bytes], Awaitable[None]],
        session: str = "",
        write_now: Callable[[list[bytes]], bool] | None = None,
    ):
        self.user_id = user_id
        self.session = session  # the access token's sid: closed when it is revoked
        self.close_code = 1000  # what the socket's handler says when it closes it
        self.display_name = display_name
        self._send = send
        self._write_now = write_now
        self._flush_pending = False
        self._outbox: list[bytes] = []  # [] is 56 bytes, an empty deque 0.6 KiB
        self._wakeup: asyncio.Future[None] | None = None
        self._writer: asyncio.Task[None] | None = None
        self.seats: dict[str, int | None] = {}  # table id -> seat (None: spectator)
        self.closed = Flag()
        # What ends the socket itself (its server's close, with close_code), on close().
        self.on_close: Callable[[], None] | None = None
        self.last_heard = time.monotonic()  # when the client last sent a frame

    def start(self) -> None:
        if self._write_now is None:  # every frame goes through the writer: start it now
            self._start_writer()

    def _start_writer(self) -> None:
        if self._writer is None and not self.closed.is_set():
            self._writer = asyncio.create_task(self._write_loop())

    def push(self, frame: bytes) -> None:
        if self.closed.is_set():
            return
        if len(self._outbox) >= OUTBOX_LIMIT:
            log.warning("socket of %s is too slow; disconnecting it", self.user_id)
            self.close()
            return
        self._outbox.append(frame)
        if self._write_now is not None:
            if not self._flush_pending:
                self._flush_pending = True
                asyncio.get_running_loop().call_soon(self._flush)
            return
        self._wake()

    def _flush(self) -> None:
        self._flush_pending = False
        outbox = self._outbox
        if self.closed.is_set() or not outbox:
            return
        # Nothing of the writer's is in flight: it was never needed, or waits for more.
        idle = self._writer is None or (self._wakeup is not None and not self._wakeup.done())
        if idle and self._write_now is not None:
            try:
                written = self._write_now(list(outbox))
            except Exception:
                log.debug("socket write failed", exc_info=True)
                self.close()
                return
            if written:
                outbox.clear()
                return
        self._start_writer()
        self._wake()  # the writer sends them, in order, after what it is sending

    def close(self) -> None:
        """Stop sending (frames still queued are dropped), end the writer, and have the
        socket's server say goodbye (``on_close``), which then cleans up."""
        if not self.closed.is_set():
            self.closed.set()
            self._wake()
            if self.on_close is not None:
                self.on_close()

    def _wake(self) -> None:
        if self._wakeup is not None and not self._wakeup.done():
            self._wakeup.set_result(None)

    async def wait_closed(self) -> None:
        if self._writer is not None:
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer

    async def _write_loop(self) -> None:
        outbox = self._outbox
        loop = asyncio.get_running_loop()
        try:
            while not self.closed.is_set():
                if outbox:
                    await self._send(outbox.pop(0))  # at most OUTBOX_LIMIT long
                else:
                    self._wakeup = loop.create_future()
                    await self._wakeup
                    self._wakeup = None
        except Exception:
            log.debug("socket write failed", exc_info=True)
        finally:
            self.close()
