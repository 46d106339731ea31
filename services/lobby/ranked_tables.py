"""Ranked tables at work (issue 34): opening one for a match, dealing it by itself, and
the ready clock's sweep. The rules are :mod:`services.lobby.ranked`; this module does
the calls between them (auth for names, the wallet through
:class:`~services.lobby.stakes.Stakes`, the dealer).

**Opening** (``lobby.ranked.open``, idempotent by match id): the table is stored with
empty seats, then each player is seated through the usual Sit money check (their
balance must cover this table on top of every other table where they sit with a bet).
If anyone cannot be seated, the table is cancelled with nobody left at it and the open
fails with that player's code (``insufficient_funds``, ``committed_elsewhere``,
``email_unverified``), naming them in ``user_ids``. Only a table opened in full is
remembered for its match id, so a retry after a failure tries again.

**Clocks**: every open ranked table is in a Redis sorted set scored by when to look at
it next; :meth:`RankedTables.run_clocks` looks every second (any replica may: each
change is a compare-and-set).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from functools import partial

from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError, ServiceError, request
from kalaro.proto import endpoints
from kalaro.proto import errors as codes
from kalaro.proto.auth import GetProfile
from kalaro.proto.lobby import (
    Caller,
    Deal,
    OpenRankedTable,
    RankedTableOpened,
    SetReady,
    Sit,
    TableInfo,
)
from services.lobby import access, ranked, rules
from services.lobby.dealing import Dealer
from services.lobby.ranked_ratings import FrozenCheck, RatingOf
from services.lobby.records import CLOSED, TableRecord
from services.lobby.stakes import Stakes
from services.lobby.store import TableStore
from services.lobby.writer import TableWriter

log = logging.getLogger("kalaro.lobby")

#: How long a match id remembers its table (a retry comes within seconds).
MATCH_TTL_MS = 24 * 3600 * 1000
#: How often the clock sweep looks (seconds).
CLOCK_SWEEP_SECONDS = 1.0
#: How often the sweep looks at a ranked table in a hand (its end starts the clock).
PLAYING_LOOK_SECONDS = 30.0


class RankedTables:
    def __init__(
        self,
        nc: NATS,
        store: TableStore,
        writer: TableWriter,
        stakes: Stakes,
        dealer: Dealer,
        prefix: str,
        *,
        clock: Callable[[], float],
        rating_of: RatingOf,
        is_frozen: FrozenCheck,
        auth_timeout: float = 5.0,
    ) -> None:
        self._nc = nc
        self._store = store
        self._writer = writer
        self._stakes = stakes
        self._dealer = dealer
        self._clock = clock
        self._rating_of = rating_of
        self._is_frozen = is_frozen
        self._auth_timeout = auth_timeout
        self._matches = f"{prefix}ranked-match:"
        self.clocks = f"{prefix}ranked-clocks"

    # --- opening -------------------------------------------------------------------------

    async def open(self, req: OpenRankedTable) -> RankedTableOpened:
        redis = self._store.redis
        key = self._matches + req.match_id
        known = await redis.get(key)
        if known is not None:
            return RankedTableOpened(table_id=known.decode())
        now = self._clock()
        rec = ranked.new_table(req, created_at=self._writer.now_iso(), now=now)
        callers = await asyncio.gather(*(self._caller(u) for u in req.players))
        rec = await self._writer.insert(rec, listed=True)
        table_id = rec.info.table_id
        try:
            for index, caller in enumerate(callers):
                await self._seat(rec.info, index, caller)
        except Exception:
            await self._writer.update(table_id, ranked.abandoned)
            # A retry racing an attempt still seating (each counts the other's seats
            # against the players' balances): the one that opened answers for both.
            done = await redis.get(key)
            if done is not None:
                return RankedTableOpened(table_id=done.decode())
            raise
        if not await redis.execute("SET", key, table_id, "NX", "PX", MATCH_TTL_MS):
            # A retry of this match opened its table first: keep that one.
            await self._writer.update(table_id, ranked.abandoned)
            winner = await redis.get(key)
            assert winner is not None
            return RankedTableOpened(table_id=winner.decode())
        await redis.zadd(self.clocks, {table_id: now + ranked.READY_SECONDS})
        log.info("ranked table %s opened for match %s", table_id, req.match_id)
        return RankedTableOpened(table_id=table_id)

    async def _caller(self, user_id: str) -> Caller:
        try:
            profile = await request(
                self._nc, endpoints.AUTH_PROFILE, GetProfile(user_id=user_id),
                timeout=self._auth_timeout,
            )  # fmt: skip
        except RemoteError as exc:
            raise ServiceError(
                exc.code, f"player {user_id} cannot be seated: {exc.message}", user_ids=(user_id,)
            ) from None
        if "bot" in profile.roles:
            raise ServiceError(codes.FORBIDDEN, "a ranked table never has bots")
        return Caller(
            user_id=profile.user_id,
            display_name=profile.display_name,
            roles=tuple(profile.roles),
            email_verified=profile.email_verified,
        )

    async def _seat(self, info: TableInfo, index: int, caller: Caller) -> None:
        seat = partial(ranked.seat_player, index=index, caller=caller)
        try:
            access.require_verified_for_bets(info, caller)
            await self._stakes.sit(caller, info, lambda: self._writer.update(info.table_id, seat))
        except ServiceError as exc:
            raise ServiceError(
                exc.code,
                f"{caller.display_name} cannot be seated at this ranked table: {exc.message}",
                user_ids=(caller.user_id,),
            ) from None

    # --- min rating at a host's table ------------------------------------------------------

    async def check_sit(self, req: Sit, info: TableInfo) -> None:
        """Refuses a Sit by a frozen account, or below the table's minimum rating
        (unknown counts as starting). Bots are neither rated nor frozen."""
        caller = req.caller
        if "bot" in caller.roles or rules.seat_of(info, caller.user_id) is not None:
            return
        if await self._is_frozen(caller.user_id):
            raise ServiceError(
                codes.FORBIDDEN, "this account is frozen by an admin: it cannot sit at tables"
            )
        if info.min_rating is not None:
            ranked.require_rating(info, await self._rating_of(caller.user_id, info.game))

    # --- dealing by itself -------------------------------------------------------------

    async def deal_if_ready(self, info: TableInfo) -> TableInfo:
        """Deal when every seat is ready (the last Ready, or the sweep)."""
        if not rules.all_ready(info):
            return info
        try:
            return await self._dealer.deal(Deal(caller=ranked.LOBBY_DEALER, table_id=info.table_id))
        except ServiceError as exc:
            # Another Ready dealt first, or the deal failed and said so on the table
            # (the short players un-readied); the ready clock runs again.
            log.info("ranked table %s: no deal (%s)", info.table_id, exc)
            _, rec = await self._store.load(info.table_id)
            return rec.info

    async def set_ready(self, req: SetReady, info: TableInfo) -> TableInfo:
        return await self.deal_if_ready(info) if req.ready else info

    # --- the ready clock -----------------------------------------------------------------

    async def sweep_clocks(self, limit: int = 200) -> int:
        """Look at every ranked table due: start its ready clock between hands, stand up
        the late when it runs out (the table ends), deal when all are ready; the number
        of tables looked at."""
        redis, now = self._store.redis, self._clock()
        due = await redis.execute("ZRANGEBYSCORE", self.clocks, "-inf", now, "LIMIT", 0, limit)
        for raw in due:
            table_id = raw.decode()
            try:
                await self._tick(table_id, now)
            except Exception:
                log.warning("ranked table %s: clock tick failed", table_id, exc_info=True)
                await redis.zadd(self.clocks, {table_id: now + ranked.READY_SECONDS})
        return len(due)

    async def _tick(self, table_id: str, now: float) -> None:
        redis = self._store.redis
        try:
            _, rec = await self._store.load(table_id)
        except ServiceError as exc:
            if exc.code != codes.NOT_FOUND:
                raise
            await redis.zrem(self.clocks, table_id)
            return
        rec = await self._step(rec, now)
        info = rec.info
        if info.status in CLOSED:
            await redis.zrem(self.clocks, table_id)
        elif info.status == "waiting" and info.ready_by is not None:
            await redis.zadd(self.clocks, {table_id: info.ready_by})
        else:  # dealing or playing: the hand's end restarts the clock (after_hand); this
            # later look only covers a lost HandFinished.
            await redis.zadd(self.clocks, {table_id: now + PLAYING_LOOK_SECONDS})

    async def _step(self, rec: TableRecord, now: float) -> TableRecord:
        info = rec.info
        if info.status != "waiting":
            return rec
        if rules.all_ready(info):
            await self.deal_if_ready(info)
            _, rec = await self._store.load(info.table_id)
            return rec
        table_id = info.table_id
        await self._writer.update(table_id, partial(ranked.clock_started, now=now))
        ran_out = await self._writer.update(table_id, partial(ranked.clock_ran_out, now=now))
        if ran_out.info.status in CLOSED:
            log.info("ranked table %s: the ready clock ran out; the table ended", table_id)
        return ran_out

    async def after_hand(self, info: TableInfo) -> None:
        """A ranked hand ended: the ready clock starts for the next one (the table
        ended instead if a seat emptied)."""
        if info.status != "waiting":
            return
        now = self._clock()
        rec = await self._writer.update(info.table_id, partial(ranked.clock_started, now=now))
        if rec.info.ready_by is not None:
            await self._store.redis.zadd(self.clocks, {info.table_id: rec.info.ready_by})

    async def run_clocks(self, every: float = CLOCK_SWEEP_SECONDS) -> None:
        """Until cancelled: :meth:`sweep_clocks` every ``every`` seconds."""
        while True:
            await asyncio.sleep(every)
            try:
                await self.sweep_clocks()
            except Exception:
                log.warning("sweeping ranked clocks failed; retrying", exc_info=True)
