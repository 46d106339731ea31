"""The bots service on the bus: ``bots.seat``, and every seated bot kept playing.

``bots.seat`` (asked by the lobby after it kept the seat for a bot) picks a bot account
not already at the table, sits it down through the gateway, starts its
:class:`~services.bots.player.BotSeat` and answers once the bot watches the table and
has tapped Ready.

Nothing about a seated bot lives only in memory. Each seat is an *assignment* in one
Redis hash (table, seat, game, account, owning replica), and each replica keeps a short
lease saying it is alive. Every few seconds a replica looks for assignments whose owner's
lease has run out (a crash, a redeploy, a stop) and claims them by compare-and-set, so
exactly one replica resumes each bot: it subscribes again, gets the full view and plays
on. A bot that leaves its table deletes its assignment.

A replica answers ``bots.seat`` only once every account of its pool exists at auth
(:meth:`Bots.prepare`, before the endpoint is registered): creating them means hashing
their passwords, which on a busy machine took longer than the lobby waits for a seat, so
the first practice table after ``make run`` failed. Until then nobody answers, and the
lobby asks again within its wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import uuid
from dataclasses import dataclass, field
from typing import Any

import msgspec
from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError, ServiceError, request
from kalaro.bus.redislink import RedisLink
from kalaro.proto import endpoints
from kalaro.proto import errors as codes
from kalaro.proto.bots import BotSeated, SeatBot
from kalaro.proto.lobby import GetTable
from services.bots.accounts import BotAccount, credentials
from services.bots.player import BotSeat
from services.bots.settings import BotSettings

log = logging.getLogger("kalaro.bots")

SERVICE_NAME = "bots"

#: How long a replica's "alive" lease lasts, and how often it renews it and looks for
#: bots left by replicas whose lease ran out.
LEASE_SECONDS = 15.0
SWEEP_SECONDS = 5.0
#: How long ``bots.seat`` waits for the bot to watch the table and tap Ready.
SETTLE_SECONDS = 4.0
#: Accounts tried per seat before giving up (another replica may race us for each).
SEAT_ATTEMPTS = 4
#: Bot accounts created at auth at once while preparing (each hashes a password).
PREPARE_CONCURRENCY = 4
#: Accounts signed in ahead, in the background, once serving: a practice table's bots.
WARM_ACCOUNTS = 3

# Compare-and-set on one hash field: claim (or drop) an assignment only if it is still
# exactly what we read, so two replicas never both resume the same bot.
_CAS_FIELD = """
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current ~= ARGV[2] then return 0 end
if ARGV[3] == '' then redis.call('HDEL', KEYS[1], ARGV[1])
else redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) end
return 1
"""


class Assignment(msgspec.Struct, frozen=True):
    """A bot seated at a table, and the replica playing it."""

    table_id: str
    seat: int
    game: str
    account: int  # index in the pool (see services.bots.accounts.credentials)
    owner: str

    @property
    def hash_field(self) -> str:
        return f"{self.table_id}:{self.seat}"


@dataclass
class Picking:
    """Accounts being seated at one table by this replica, and how many requests ask."""

    accounts: set[int] = field(default_factory=set)
    requests: int = 0


_encode = msgspec.json.encode
_decode_assignment = msgspec.json.Decoder(Assignment).decode


class Bots:
    """Seats bots on request and keeps every bot this replica owns playing."""

    def __init__(
        self,
        nc: NATS,
        redis: RedisLink,
        settings: BotSettings,
        *,
        replica: str | None = None,
        lease_seconds: float = LEASE_SECONDS,
        sweep_seconds: float = SWEEP_SECONDS,
    ) -> None:
        self.settings = settings
        self.replica = replica or uuid.uuid4().hex[:12]
        self._nc = nc
        self._redis = redis
        self._assignments_key = f"{settings.redis_prefix}assignments"
        self._lease_prefix = f"{settings.redis_prefix}alive:"
        self._lease_ms = int(lease_seconds * 1000)
        self._sweep_seconds = sweep_seconds
        self._cas: Any = redis.register_script(_CAS_FIELD)
        self._accounts: dict[int, BotAccount] = {}
        #: (table, seat) -> the bot playing it here, with its task and assignment
        self.playing: dict[tuple[str, int], tuple[BotSeat, asyncio.Task[None], Assignment]] = {}
        self.picking: dict[str, Picking] = {}
        self._background: asyncio.Task[None] | None = None
        self._warming: asyncio.Task[None] | None = None
        self._stopping = False

    # --- what bots.seat uses (services.bots.handlers.seat) -------------------------------

    async def pick(self, table_id: str, picking: set[int]) -> BotAccount:
        """A signed-in account that is not at ``table_id`` (nor being seated there)."""
        # Who sits there is bookkeeping, not play: ask the lobby directly.
        table = await request(self._nc, endpoints.LOBBY_GET_TABLE, GetTable(table_id=table_id))
        seated = {s.user_id for s in table.seats if s is not None}
        order = [i for i in range(self.settings.pool_size) if i not in picking]
        random.shuffle(order)
        # Accounts this process has signed in already first: no sign-in to wait for.
        order.sort(key=lambda i: self._account(i).user_id is None)
        for index in order:
            account = self._account(index)
            await account.start()
            if account.user_id not in seated:
                return account
        raise ServiceError(codes.CONFLICT, "every bot is already at this table")

    async def sit_down(self, req: SeatBot, account: BotAccount) -> BotSeated:
        """``account`` has sat in the seat: record the assignment, play it, answer."""
        assignment = Assignment(req.table_id, req.seat, req.game, account.creds.index, self.replica)
        await self._redis.hset(self._assignments_key, assignment.hash_field, _encode(assignment))
        bot = self._play(assignment, account)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(bot.settled.wait(), SETTLE_SECONDS)
        log.info("bot %s sat at %s seat %d", account.name, req.table_id, req.seat)
        return BotSeated(
            table_id=req.table_id,
            seat=req.seat,
            user_id=account.user_id or "",
            display_name=account.name,
        )

    def _account(self, index: int) -> BotAccount:
        account = self._accounts.get(index)
        if account is None:
            creds = credentials(self.settings.secret, index)
            account = BotAccount(creds, self._nc, self.settings.gateway_url)
            self._accounts[index] = account
        return account

    def _play(self, assignment: Assignment, account: BotAccount) -> BotSeat:
        bot = BotSeat(
            account,
            assignment.table_id,
            assignment.seat,
            assignment.game,
            policy=self.settings.policy,
            think_ms=self.settings.think_ms,
            on_leave=self._left,
        )
        task = asyncio.create_task(bot.run(), name=f"bot-{assignment.hash_field}")
        key = (assignment.table_id, assignment.seat)
        self.playing[key] = (bot, task, assignment)

        def done(finished: asyncio.Task[None]) -> None:
            current = self.playing.get(key)
            if current is not None and current[1] is finished:
                del self.playing[key]
            if not finished.cancelled() and finished.exception() is not None:
                # The sweep resumes it (the assignment is still ours).
                log.error("bot at %s failed", assignment.hash_field, exc_info=finished.exception())

        task.add_done_callback(done)
        return bot

    async def _left(self, bot: BotSeat) -> None:
        entry = self.playing.get((bot.table_id, bot.seat))
        if entry is not None:
            assignment = entry[2]
            await self._cas(
                keys=[self._assignments_key], args=[assignment.hash_field, _encode(assignment), ""]
            )

    # --- getting ready -------------------------------------------------------------------

    async def prepare(self, *, retry_pause: float = 1.0) -> None:
        """Make sure every account of the pool exists at auth (created, or its password
        made ours); call it before serving ``bots.seat``.

        While the auth service does not answer (it is starting too) each account is asked
        for again after ``retry_pause``. An account auth refuses outright is left for
        later (seating it tries again and says why).
        """
        slots = asyncio.Semaphore(PREPARE_CONCURRENCY)

        async def create(index: int) -> None:
            account = self._account(index)
            async with slots:
                while True:
                    try:
                        await account.create()
                        return
                    except RemoteError as exc:
                        if exc.code != codes.UNAVAILABLE:
                            log.warning("bot %d: account not created: %s", index, exc)
                            return
                    await asyncio.sleep(retry_pause)

        await asyncio.gather(*(create(i) for i in range(self.settings.pool_size)))
        log.info("bots: %d bot accounts ready", self.settings.pool_size)

    async def _warm(self, attempts: int = 30, pause: float = 2.0) -> None:
        """Sign a practice table's bots in ahead of the first request (best effort: the
        gateway may still be starting)."""
        for index in range(min(WARM_ACCOUNTS, self.settings.pool_size)):
            for _ in range(attempts):
                try:
                    await self._account(index).start()
                    break
                except Exception as exc:
                    log.debug("bot %d: not signed in yet (%r)", index, exc)
                    await asyncio.sleep(pause)

    # --- lease and resuming ---------------------------------------------------------------

    async def start(self) -> None:
        """Take the lease, resume every bot whose owner is gone, then keep doing so."""
        await self.sweep()
        self._stopping = False
        self._background = asyncio.create_task(self._keep_alive(), name="bots-sweep")
        self._warming = asyncio.create_task(self._warm(), name="bots-warm")

    async def stop(self) -> None:
        """Stop playing (assignments stay) and give up the lease, so another replica —
        or this one restarted — resumes these bots at once."""
        # The flag as well as the cancel (see EngineWorker.stop: Python 3.11 can swallow
        # a cancel that lands as an awaited future completes).
        self._stopping = True
        if self._warming is not None:
            self._warming.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._warming
        if self._background is not None:
            self._background.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._background
        tasks = [task for _, task, _ in self.playing.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._redis.delete(self._lease_prefix + self.replica)
        for account in self._accounts.values():
            await account.close()

    async def sweep(self) -> int:
        """Renew our lease; claim and resume bots whose owner's lease ran out. Returns how
        many were resumed."""
        await self._redis.set(self._lease_prefix + self.replica, b"1", px=self._lease_ms)
        rows = await self._redis.hgetall(self._assignments_key)
        resumed = 0
        for name, raw in rows.items():
            assignment = _decode_assignment(raw)
            key = (assignment.table_id, assignment.seat)
            if assignment.owner == self.replica:
                if key not in self.playing:  # its task died: play it again
                    self._play(assignment, self._account(assignment.account))
                    resumed += 1
                continue
            if await self._redis.exists(self._lease_prefix + assignment.owner):
                continue
            mine = msgspec.structs.replace(assignment, owner=self.replica)
            claimed = await self._cas(keys=[self._assignments_key], args=[name, raw, _encode(mine)])
            if claimed:
                log.info("resuming the bot at %s (its replica is gone)", mine.hash_field)
                self._play(mine, self._account(mine.account))
                resumed += 1
        return resumed

    async def _keep_alive(self) -> None:
        while not self._stopping:
            await asyncio.sleep(self._sweep_seconds)
            try:
                await self.sweep()
                await self._heartbeats()
            except Exception:
                log.warning("bots: sweep failed; retrying", exc_info=True)

    async def _heartbeats(self) -> None:
        in_use = {assignment.account for _, _, assignment in self.playing.values()}
        for index, account in list(self._accounts.items()):
            try:
                if index in in_use:
                    await account.heartbeat()
                else:
                    await account.drop_socket()
            except Exception:
                log.warning("bot %d: heartbeat failed", index, exc_info=True)
