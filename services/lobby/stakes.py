"""Money at sit time: one balance must cover every table a player sits at with a bet.

Per player, a Redis hash ``stakes:{user_id}`` remembers the tables they sat down at
with a bet (table id → :class:`~services.lobby.money.Stake`). The table records stay
the truth: when a Sit counts the player's stakes it reads each table and forgets the
ones where they no longer sit (left, removed, table closed or gone), so no path that
empties a seat has to remember to clear it.

Two Sits by one player at two tables at once must not both pass. Each Sit **reserves
first, then counts**: it writes its own stake (not yet seated), then reads all of
them. Redis orders the writes and reads, so the later of two racing Sits sees the
other's reservation and counts it; at worst both see each other and both are refused,
never both admitted. A Sit that fails releases its reservation; one that died is
forgotten after :data:`~services.lobby.money.PENDING_STAKE_SECONDS`.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from msgspec.structs import replace
from nats.aio.client import Client as NATS

from kalaro.bus import request
from kalaro.proto import endpoints
from kalaro.proto.lobby import Caller, TableInfo
from kalaro.proto.wallet import GetBalance
from services.lobby import money
from services.lobby.records import BOT_ROLE, TableRecord
from services.lobby.store import TableStore

# Delete a hash field only if it still holds what the caller last saw: a Sit releases
# only its own reservation, and a stale stake is forgotten only if nobody rewrote it.
_RELEASE = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  return redis.call('HDEL', KEYS[1], ARGV[1])
end
return 0
"""


class Stakes:
    """The Sit check against everything a player already has at stake."""

    def __init__(
        self,
        nc: NATS,
        store: TableStore,
        prefix: str,
        *,
        clock: Callable[[], float],
        wallet_timeout: float,
    ) -> None:
        self._nc = nc
        self._store = store
        self._prefix = f"{prefix}stakes:"
        self._clock = clock
        self._wallet_timeout = wallet_timeout
        self._release: Any = store.redis.register_script(_RELEASE)

    def key(self, user_id: str) -> str:
        return f"{self._prefix}{user_id}"

    async def sit(
        self, caller: Caller, info: TableInfo, sit: Callable[[], Awaitable[TableRecord]]
    ) -> TableRecord:
        """Run ``sit`` (the table's compare-and-set) only if the caller's balance covers
        this table's maximum loss on top of every other table where they sit with a bet."""
        new = money.commitment_of(info, pending=True)
        if new is None or BOT_ROLE in caller.roles:
            return await sit()
        new = replace(new, in_hand=False)  # a hand already running here is not theirs
        user_id, table_id = caller.user_id, info.table_id
        key, redis = self.key(user_id), self._store.redis
        now = self._clock()
        token = secrets.token_hex(8)
        reserved = msgspec.json.encode(money.Stake(token=token, at=now))
        await redis.hset(key, table_id, reserved)
        try:
            others = await self.commitments(user_id, now, besides=table_id)
            balance = await request(
                self._nc,
                endpoints.WALLET_BALANCE,
                GetBalance(user_id=user_id),
                timeout=self._wallet_timeout,
            )
            problem = money.cover(new, others, balance)
            if problem is not None:
                raise problem
            rec = await sit()
        except Exception:
            await self._release(keys=[key], args=[table_id, reserved])
            raise
        seated = money.Stake(token=token, at=now, seated=True)
        await redis.hset(key, table_id, msgspec.json.encode(seated))
        return rec

    async def commitments(
        self, user_id: str, now: float, *, besides: str = ""
    ) -> list[money.Commitment]:
        """What the player has at stake now at every table but ``besides``; stakes that
        no longer count are forgotten on the way."""
        key = self.key(user_id)
        raw = {k.decode(): v for k, v in (await self._store.redis.hgetall(key)).items()}
        raw.pop(besides, None)
        found: list[money.Commitment] = []
        for table_id, rec in await self._store.load_many(sorted(raw)):
            try:
                stake = msgspec.json.decode(raw[table_id], type=money.Stake)
            except msgspec.DecodeError:
                stake = None
            info = None if rec is None else rec.info
            counted = None if stake is None else money.stake_commitment(user_id, info, stake, now)
            if counted is None:
                await self._release(keys=[key], args=[table_id, raw[table_id]])
            else:
                found.append(counted)
        return found
