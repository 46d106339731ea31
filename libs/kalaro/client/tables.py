"""What a table socket knows of its tables, kept from the frames it receives.

:class:`TableFrames` is the half of :class:`~kalaro.client.socket.TableSocket` that
does no I/O: each decoded server frame updates the newest view and table per table
(frames older than what is held are ignored; every view is complete, so a gap heals
itself), records results, chat and errors, resolves the request a ``ref`` answers and
wakes :meth:`TableFrames.wait_for` callers. The socket (connection, requests,
reconnects) feeds it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from kalaro.proto import ws as w
from kalaro.proto.lobby import TableInfo


class FrameError(Exception):
    """The server answered a frame with an ``error`` frame."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class SeatView:
    """A ``view`` frame: the hand as this socket may see it.

    ``view`` and ``events`` are decoded on first use: a bot or load generator reads
    only the views it acts on, and most views are superseded unread.
    """

    __slots__ = ("_events", "_frame", "_view")

    def __init__(self, frame: w.HandView) -> None:
        self._frame = frame
        self._view: dict[str, Any] | None = None
        self._events: list[Any] | None = None

    @property
    def table_id(self) -> str:
        return self._frame.table_id

    @property
    def hand_id(self) -> str:
        return self._frame.hand_id

    @property
    def version(self) -> int:
        return self._frame.version

    @property
    def seat(self) -> int | None:
        return self._frame.seat

    @property
    def deadline_ms(self) -> int | None:
        return self._frame.deadline_ms

    @property
    def view(self) -> dict[str, Any]:
        if self._view is None:
            self._view = msgspec.json.decode(self._frame.view)
        return self._view

    @property
    def events(self) -> list[Any]:
        if self._events is None:
            self._events = msgspec.json.decode(self._frame.events)
        return self._events


@dataclass
class TableState:
    table: TableInfo | None = None
    seat: int | None = None
    view: SeatView | None = None
    results: list[w.HandResult] = field(default_factory=list)
    chat: list[w.ChatPosted] = field(default_factory=list)


class TableFrames:
    """Tables, views, results, chat and errors, from the frames a socket receives."""

    def __init__(self) -> None:
        self.tables: dict[str, TableState] = {}
        self.errors: list[w.Error] = []
        #: called with every accepted (newer) view; load generators time arrivals here
        self.view_listeners: list[Callable[[SeatView], None]] = []
        self._pending: dict[int, asyncio.Future[w.ServerFrame]] = {}  # by ref
        self._watchers: list[asyncio.Future[None]] = []  # wait_for() callers

    # --- state ------------------------------------------------------------------------
    def state(self, table_id: str) -> TableState:
        return self.tables.setdefault(table_id, TableState())

    def view(self, table_id: str) -> SeatView | None:
        return self.state(table_id).view

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 15) -> None:
        """Wait until ``predicate()`` holds; it is checked after every frame."""
        async with asyncio.timeout(timeout):
            while not predicate():
                changed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                self._watchers.append(changed)
                await changed

    def _wake_watchers(self) -> None:
        watchers, self._watchers = self._watchers, []
        for changed in watchers:
            if not changed.done():
                changed.set_result(None)

    def _on_frame(self, frame: w.ServerFrame) -> None:
        ref = getattr(frame, "ref", None)
        match frame:
            case w.HandView():
                self._on_view(frame)
            case w.Subscribed(table=table, seat=seat):
                state = self.state(table.table_id)
                state.seat = seat
                self._keep_newest(state, table)
            case w.TableChanged(table=table):
                self._keep_newest(self.state(table.table_id), table)
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
        if self._watchers:
            self._wake_watchers()

    @staticmethod
    def _keep_newest(state: TableState, table: TableInfo) -> None:
        # A table frame queued while the socket subscribed may come before the
        # subscription's own (older) snapshot: the newest version wins, as for views.
        if state.table is None or table.version >= state.table.version:
            state.table = table

    def _on_view(self, frame: w.HandView) -> None:
        state = self.state(frame.table_id)
        current = state.view
        # The newest view wins; a version jump needs no resync (every view is complete).
        stale = current is not None and current.hand_id == frame.hand_id
        if stale and current is not None and frame.version <= current.version:
            return
        state.view = SeatView(frame)
        for listener in self.view_listeners:
            listener(state.view)
