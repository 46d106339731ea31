"""The matcher: every ~200 ms, the replica holding the lease forms ranked tables from
the queue (:func:`services.ranked.matching.form_tables`) and has the lobby open each.

For each formed table: its players are taken out of the queue atomically (all still
waiting, or the table is dropped this tick), the lobby is asked to open it
(``LOBBY_OPEN_RANKED``, idempotent by ``match_id``, so a repeat after a lost reply opens
nothing twice), then each player is marked seated and told so on their sockets
(``users.notify.<user>``, a ``seated`` frame). If the lobby refuses, the players it
names (``user_ids`` of the error: e.g. one who can no longer cover the bet) are left out
and the others go back to the queue with their wait kept; if it does not answer, all
go back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
import time
from collections.abc import Callable

from nats.aio.client import Client as NATS
from prometheus_client import Counter, Histogram

from kalaro.bus import RemoteError
from kalaro.bus import request as bus_request
from kalaro.bus.codec import encode
from kalaro.proto import endpoints, subjects, ws
from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from services.ranked.matching import FormedTable, form_tables
from services.ranked.queue import Lease, RankedQueue, Seat

log = logging.getLogger("kalaro.ranked")

TICK_SECONDS = 0.2
OPEN_TIMEOUT_SECONDS = 5.0

TABLES_FORMED = Counter("kalaro_ranked_tables_total", "Ranked tables opened", ["game"])
WAIT = Histogram(
    "kalaro_ranked_wait_seconds",
    "Time from joining the ranked queue to being seated",
    buckets=(0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300),
)


class Matcher:
    def __init__(
        self,
        nc: NATS,
        queue: RankedQueue,
        *,
        clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
        tick_seconds: float = TICK_SECONDS,
    ) -> None:
        self._nc = nc
        self._queue = queue
        self._clock = clock
        self._rng = rng or random.SystemRandom()
        self._tick = tick_seconds
        self.lease = Lease(queue, ttl_ms=max(1_000, int(tick_seconds * 10_000)))

    async def tick(self) -> list[str]:
        """One pass (lease held or not, the caller checks): the tables opened."""
        now_ms = int(self._clock() * 1000)
        stale = await self._queue.put_back_stale(now_ms)
        if stale:
            log.warning(
                "%d player(s) taken for a table nobody opened, back in the queue", len(stale)
            )
        entries = await self._queue.entries(now_ms)
        if not entries:
            return []
        formed = form_tables(entries, now_ms, self._rng)
        opened = await asyncio.gather(*(self._open(t, now_ms) for t in formed.tables))
        return [t for t in opened if t is not None]

    async def _open(self, table: FormedTable, now_ms: int) -> str | None:
        taken = await self._queue.take(table.seats, now_ms)
        if taken is None:
            return None  # someone left meanwhile: the next tick forms again
        match_id = secrets.token_hex(12)
        ask = lb.OpenRankedTable(
            game=table.game, bet=table.bet, players=table.seats, match_id=match_id
        )
        try:
            opened = await bus_request(
                self._nc, endpoints.LOBBY_OPEN_RANKED, ask, timeout=OPEN_TIMEOUT_SECONDS
            )
        except RemoteError as exc:
            refused = set(exc.user_ids) if exc.code != codes.UNAVAILABLE else set()
            log.warning(
                "lobby did not open ranked %s table %s (%s: %s); %s back in the queue",
                table.game, match_id, exc.code, exc.message,
                ", ".join(u for u in table.seats if u not in refused),
            )  # fmt: skip
            await self._queue.put_back({u: e for u, e in taken.items() if u not in refused})
            return None
        seat = Seat(table_id=opened.table_id, game=table.game, bet=table.bet, match_id=match_id)
        await self._queue.mark_seated(table.seats, seat)
        frame = encode(ws.Seated(table_id=opened.table_id, game=table.game, bet=table.bet))
        for user_id in table.seats:
            await self._nc.publish(subjects.user_notify(user_id), frame)
        TABLES_FORMED.labels(table.game).inc()
        for waited in table.waited_ms:
            WAIT.observe(waited / 1000)
        log.info("ranked %s table %s opened for match %s", table.game, opened.table_id, match_id)
        return opened.table_id

    async def run(self) -> None:
        """Tick while holding the lease, until cancelled; then hand the lease back."""
        try:
            while True:
                started = time.monotonic()
                try:
                    if await self.lease.hold():
                        await self.tick()
                except Exception:
                    log.warning("matcher tick failed; next tick tries again", exc_info=True)
                await asyncio.sleep(max(0.0, self._tick - (time.monotonic() - started)))
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(self.lease.release())
