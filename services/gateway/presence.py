"""Presence: tell the lobby which seated players have a socket on a table here.

Each gateway process has an id of its own, and reports per table the seated players
with at least one socket on it at this process (``lobby.presence``): whenever that set
changes, and again every ``presence_refresh_seconds`` while it is not empty, so a lobby
that lost a report (or restarted) catches up, and a gateway that died is forgotten after
a few silent periods. The lobby derives every seat's presence from what all gateways
said (``connected``, ``reconnecting``, ``offline``) and publishes the table when it
changes.

Reports go out in the background: a socket's subscribe or close never waits for the
lobby. Per table at most one report is in flight and it always carries the newest set,
so reports of one table cannot overtake each other.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid

from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError, request
from kalaro.proto import endpoints
from kalaro.proto import errors as codes
from kalaro.proto.lobby import ReportPresence

log = logging.getLogger("kalaro.gateway.presence")

#: A report the lobby did not take is tried again this many times (pausing 1, 2, 3 s);
#: past that the next change or the periodic re-announce says it again.
RETRIES = 3
REPORT_TIMEOUT = 5.0
#: Reports in flight at once (a re-announce of many tables is spread out by this).
MAX_IN_FLIGHT = 32


class PresenceReporter:
    """This gateway's reports to the lobby: call :meth:`seated` on every change."""

    def __init__(
        self,
        nc: NATS,
        *,
        gateway_id: str | None = None,
        refresh_seconds: float = 30.0,
        retry_pause: float = 1.0,
    ) -> None:
        self._nc = nc
        self.gateway_id = gateway_id or uuid.uuid4().hex[:12]
        self.refresh_seconds = refresh_seconds
        self._retry_pause = retry_pause
        self._wanted: dict[str, frozenset[str]] = {}  # table -> seated users with sockets
        self._dirty: set[str] = set()  # changed while a report of theirs was in flight
        self._sending: dict[str, asyncio.Task[None]] = {}
        self._slots = asyncio.Semaphore(MAX_IN_FLIGHT)
        self._refresher: asyncio.Task[None] | None = None

    def seated(self, table_id: str, user_ids: frozenset[str]) -> None:
        """The seated players with a socket on ``table_id`` here now (reported soon)."""
        if self._wanted.get(table_id, frozenset()) == user_ids:
            return
        self._wanted[table_id] = user_ids
        self._kick(table_id)

    def start(self) -> None:
        """Re-announce every table with seated sockets here, every ``refresh_seconds``."""
        self._refresher = asyncio.create_task(self._refresh(), name="presence-refresh")

    async def stop(self, timeout: float = 2.0) -> None:
        """Stop re-announcing; say this gateway has no socket left (best effort)."""
        if self._refresher is not None:
            self._refresher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._refresher
        for table_id, users in list(self._wanted.items()):
            if users:
                self.seated(table_id, frozenset())
        pending = list(self._sending.values())
        if pending:
            _, late = await asyncio.wait(pending, timeout=timeout)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)

    # --- internals ------------------------------------------------------------------------

    def _kick(self, table_id: str) -> None:
        if table_id in self._sending:
            self._dirty.add(table_id)  # the report in flight is followed by the newest
            return
        self._sending[table_id] = asyncio.create_task(self._send(table_id))

    async def _send(self, table_id: str) -> None:
        failures = 0
        try:
            while True:
                self._dirty.discard(table_id)
                users = self._wanted.get(table_id, frozenset())
                if await self._report(table_id, users):
                    failures = 0
                elif failures < RETRIES:
                    failures += 1
                    await asyncio.sleep(self._retry_pause * failures)
                    self._dirty.add(table_id)
                if table_id not in self._dirty:
                    return
        finally:
            del self._sending[table_id]
            if not self._wanted.get(table_id, True):
                del self._wanted[table_id]  # nothing here to report any more

    async def _report(self, table_id: str, users: frozenset[str]) -> bool:
        message = ReportPresence(
            gateway_id=self.gateway_id, table_id=table_id, user_ids=tuple(sorted(users))
        )
        async with self._slots:
            try:
                await request(
                    self._nc, endpoints.LOBBY_PRESENCE, message,
                    timeout=REPORT_TIMEOUT,
                )  # fmt: skip
            except RemoteError as exc:
                if exc.code == codes.NOT_FOUND:
                    return True  # the table is gone: nothing to show anyone
                log.warning("presence at %s not reported yet: %s", table_id, exc)
                return False
            except Exception:
                log.warning("presence at %s not reported yet", table_id, exc_info=True)
                return False
        return True

    async def _refresh(self) -> None:
        while True:
            await asyncio.sleep(self.refresh_seconds)
            for table_id, users in list(self._wanted.items()):
                if users:
                    self._kick(table_id)
