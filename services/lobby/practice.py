"""Practice tables and bots: seating bots through the bots service, and ending
practice tables their host abandoned.

Bots are players with the ``bot`` role, seated by the bots service (``bots.seat``). They
never play for credits: a bot may sit only at a zero-bet table, and only in a seat the
host kept for one (:meth:`Practice.add_bot`, or :meth:`Practice.create_practice`), which
also lets bots into private and practice tables without an invite code. A practice table
is a zero-bet table its creator (any player) hosts against bots: it is never listed,
only its host and bots may sit there, it deals itself once every seat is ready, and it
ends when its host leaves (or when nothing happens there for ``idle_seconds``). One
player may have ``per_player`` open at once; one more is refused (``practice_limit``)
rather than ending one of theirs unasked, which might be the one they are playing in
another tab.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError, ServiceError, request
from kalaro.proto import endpoints
from kalaro.proto import errors as codes
from kalaro.proto.bots import BotSeated, SeatBot
from kalaro.proto.engine import GetView
from kalaro.proto.lobby import (
    AddBot,
    Caller,
    CancelTable,
    CreatePractice,
    Deal,
    TableCreated,
    TableInfo,
)
from services.lobby import rules, setup
from services.lobby.store import TableStore
from services.lobby.writer import TableWriter

log = logging.getLogger("kalaro.lobby")

#: An idle practice table that could not be ended is looked at again after this long.
RETRY_IDLE_SECONDS = 60.0
#: A practice-table claim whose create has not stored its table after this long died.
CLAIM_SECONDS = 60.0
# Add a claim to a player's set of practice tables only while it has room.
_CLAIM = """
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  return redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
end
return 0
"""
# The claim becomes the table's id in one step, so the count never moves meanwhile.
_SWAP = """
redis.call('ZREM', KEYS[1], ARGV[1])
return redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
"""


class Practice:
    """The lobby's practice tables and bots."""

    def __init__(
        self,
        nc: NATS,
        store: TableStore,
        writer: TableWriter,
        *,
        deal: Callable[[Deal], Awaitable[TableInfo]],
        cancel: Callable[[CancelTable], Awaitable[TableInfo]],
        idle_seconds: float,
        per_player: int,
        engine_timeout: float,
        bots_timeout: float,
    ) -> None:
        self._deal = deal  # the lobby's Deal and CancelTable, asked as the host
        self._cancel = cancel
        self._nc = nc
        self._store = store
        self._writer = writer
        self.idle_seconds = idle_seconds
        if per_player < 1:
            raise ValueError("KALARO_PRACTICE_TABLES_PER_PLAYER must be at least 1")
        self.per_player = per_player
        self._claim: Any = store.redis.register_script(_CLAIM)
        self._swap: Any = store.redis.register_script(_SWAP)
        self._engine_timeout = engine_timeout
        self._bots_timeout = bots_timeout

    def _now(self) -> float:
        return self._writer.clock()

    async def create_practice(self, req: CreatePractice) -> TableCreated:
        """A zero-bet table hosted by the caller (any player) in seat 0, bots elsewhere.

        Answers once every bot has sat down, so the table it returns is complete; if
        the bots service cannot seat them all, the table is cancelled (no hand was
        dealt, so nothing else needs undoing) and the error says so.
        """
        rec = setup.new_practice(req, created_at=self._writer.now_iso(), now=self._now())
        host = req.caller.user_id
        claim = await self._claim_slot(host)
        try:
            # Never listed: a practice table is its host's alone (they open it by its id).
            rec = await self._writer.insert(rec, listed=False)
        except Exception:
            await self._store.redis.zrem(self._hosted(host), claim)
            raise
        table_id = rec.info.table_id
        await self._swap(keys=[self._hosted(host)], args=[claim, table_id, self._now()])
        await self._store.note_practice(table_id, closed=False, now=self._now())
        outcomes = await asyncio.gather(
            *(self._seat_bot(rec.info, seat) for seat, _ in rec.bot_seats),
            return_exceptions=True,
        )
        failed = [o for o in outcomes if isinstance(o, BaseException)]
        if failed:
            await self._writer.update(table_id, rules.cancelled)
            first = failed[0]
            if not isinstance(first, ServiceError):
                raise first
            raise ServiceError(
                first.code, f"could not seat the bots ({first.message}); please try again"
            )
        _, rec = await self._store.load(table_id)
        return TableCreated(table=rec.info)

    def _hosted(self, user_id: str) -> str:
        return f"{self._store.practice}-of:{user_id}"

    async def _claim_slot(self, user_id: str) -> str:
        """Claim one of the player's practice-table slots, or refuse: the claim (a
        token, replaced by the table's id once stored) is added only while fewer than
        ``per_player`` are there, atomically, so racing creates cannot overshoot.

        The per-player set is checked against the tables first: one that ended (its host
        left, the idle sweep, a cancel) or expired no longer counts, nor does a claim
        whose create died (older than :data:`CLAIM_SECONDS`).
        """
        key, now = self._hosted(user_id), self._now()
        members = await self._store.redis.execute("ZRANGE", key, 0, -1, "WITHSCORES")
        found = {m.decode(): float(at) for m, at in zip(members[::2], members[1::2], strict=True)}
        claims = {m for m in found if m.startswith("+")}
        tables = await self._store.load_many(sorted(set(found) - claims))
        open_tables = [r.info for _, r in tables if r is not None and setup.practice_open(r.info)]
        gone = [t for t, r in tables if r is None or not setup.practice_open(r.info)]
        opening = [c for c in claims if now - found[c] < CLAIM_SECONDS]
        gone += sorted(claims - set(opening))
        if gone:
            await self._store.redis.zrem(key, *gone)
        claim = f"+{secrets.token_hex(8)}"
        if not await self._claim(keys=[key], args=[self.per_player, claim, now]):
            raise setup.practice_limit_error(
                open_tables, len(opening), self.per_player, self.idle_seconds / 60
            )
        return claim

    async def deal_if_ready(self, info: TableInfo) -> TableInfo:
        """A practice table deals itself when the last seat taps Ready (as its host)."""
        if not rules.all_ready(info):
            return info
        host = Caller(user_id=info.host_id, display_name=info.host_name, roles=())
        try:
            return await self._deal(Deal(caller=host, table_id=info.table_id))
        except ServiceError as exc:
            # Usually another Ready dealt first; a failed deal has already said why on the
            # table (everyone un-readied), and the next round of Ready tries again.
            log.info("practice table %s: no deal (%s)", info.table_id, exc)
            _, rec = await self._store.load(info.table_id)
            return rec.info

    async def add_bot(self, req: AddBot) -> TableInfo:
        """Keep a seat for a bot, then have the bots service sit one there (host, 0 bet)."""
        keep = partial(rules.keep_bot_seat, caller=req.caller, seat=req.seat, now=self._now())
        rec = await self._writer.update(req.table_id, keep)
        seat, _ = rec.bot_seats[-1]  # the seat just kept (keep_bot_seat appends it)
        await self._seat_bot(rec.info, seat)
        _, rec = await self._store.load(req.table_id)
        return rec.info

    async def _seat_bot(self, info: TableInfo, seat: int) -> BotSeated:
        """Ask the bots service to sit a bot in ``seat``; free the seat if it cannot.

        A bots service that is still starting (it answers only once its accounts exist)
        or briefly away answers ``unavailable``: ask again, until ``bots_timeout``.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._bots_timeout
        pause = 0.1
        try:
            while True:
                try:
                    return await request(
                        self._nc,
                        endpoints.BOTS_SEAT,
                        SeatBot(table_id=info.table_id, seat=seat, game=info.game),
                        timeout=max(0.1, deadline - loop.time()),
                    )
                except RemoteError as exc:
                    if exc.code != codes.UNAVAILABLE or deadline - loop.time() <= pause:
                        raise
                await asyncio.sleep(pause)
                pause = min(pause * 2, 1.0)
        except RemoteError:
            # A bot that turns up late finds its seat no longer kept and is refused.
            await self._writer.update(info.table_id, partial(rules.release_bot_seat, seat=seat))
            raise

    async def end_idle_practice(self, limit: int = 100) -> list[str]:
        """End the practice tables idle for ``idle_seconds``; their ids.

        A host who closes the tab never comes back to leave, and the table's bots would
        wait for them for ever, each holding a socket and a task. Any change to the
        table counts as activity. Moves do not pass through the lobby, so a table in a
        hand that has been quiet that long is asked for its hand's version at the engine,
        and ends only if that has not moved since the previous look either: an idle
        hand is cancelled (zero bet, so nothing to void) and the bots leave.
        """
        redis = self._store.redis
        due = await redis.execute(
            "ZRANGEBYSCORE", self._store.practice, "-inf", self._now() - self.idle_seconds,
            "LIMIT", 0, limit,
        )  # fmt: skip
        ended: list[str] = []
        for member in due:
            table_id = member.decode()
            try:
                if await self._end_if_idle(table_id):
                    ended.append(table_id)
            except (ServiceError, RemoteError) as exc:
                log.warning("idle practice table %s: not ended yet (%s)", table_id, exc)
                # Looked at again a sweep later, behind the others: tables that cannot end
                # now (an engine away) must not keep the rest out of the sweep's ``limit``.
                retry_at = self._now() - self.idle_seconds + RETRY_IDLE_SECONDS
                await self._store.note_practice(table_id, closed=False, now=retry_at)
        return ended

    async def _end_if_idle(self, table_id: str) -> bool:
        redis = self._store.redis
        try:
            _, rec = await self._store.load(table_id)
            info: TableInfo | None = rec.info
        except ServiceError as exc:
            if exc.code != codes.NOT_FOUND:
                raise
            info = None  # expired or never finished
        version = seen = None
        if info is not None and info.status == "playing":
            version = await self._hand_version(info)
            raw = await redis.execute("HGET", self._store.practice_hands, table_id)
            seen = None if raw is None else int(raw)
        verdict = rules.practice_idle(info, version, seen)
        if verdict == "forget":
            await self._store.note_practice(table_id, closed=True, now=self._now())
            return False
        if verdict == "wait":
            return False  # a moment's state: look again next time
        if verdict == "moving":
            assert version is not None
            await redis.execute("HSET", self._store.practice_hands, table_id, version)
            await self._store.note_practice(table_id, closed=False, now=self._now())
            return False
        assert info is not None
        log.info(
            "practice table %s: idle for %.0f min, ending it", table_id, self.idle_seconds / 60
        )
        if verdict == "cancel":
            host = Caller(user_id=info.host_id, display_name=info.host_name, roles=())
            await self._cancel(CancelTable(caller=host, table_id=table_id))
        else:
            await self._writer.update(table_id, rules.ended_if_waiting)
        return True

    async def _hand_version(self, info: TableInfo) -> int | None:
        """The version of the table's hand at the engine; None if it has no hand there."""
        try:
            view = await request(
                self._nc,
                endpoints.to_owner(endpoints.engine_view(info.game), info.table_id),
                GetView(table_id=info.table_id),
                timeout=self._engine_timeout,
            )
        except RemoteError as exc:
            if exc.code == codes.NOT_FOUND:
                return None
            raise
        return view.version
