"""Which partitions of a game this engine replica owns: leases in Redis, fenced writes.

A game's tables are split into ``ENGINE_PARTITIONS`` partitions by table id
(:func:`kalaro.proto.subjects.partition_of`). A partition has at most one owner at a
time: the replica holding its lease ``owner:<game>:<p>``, whose value is
``<replica>:<token>``; the token counts the partition's acquisitions (``INCR``), so a
value is never reused. Every write the owner makes to a slot of the partition checks,
in the same atomic step, that the lease still holds that value (``Fence``,
:mod:`services.engine.slots`): a replica paused past its lease and then resumed writes
nothing, and drops the partition when the refusal comes back.

Each replica, every ``lease_ms / 5``, in one script: records itself alive (a sorted
set scored by when its entry expires) and renews the leases it holds. It then computes
the share rendezvous hashing gives it among the live replicas
(:mod:`services.engine.assign`), releases partitions outside it (a replica joined:
scale-out) and acquires free ones inside it. A replica that stops releases all of its
leases at once (drain); one that dies stops renewing, its entry and leases expire
within ``lease_ms``, and the survivors take its partitions: a takeover costs at most a
lease plus a tick. The owner subscribes to a partition's subjects only while it holds
the lease, so a request between owners finds no responder and its caller sends it
again (``Endpoint.owned``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

from prometheus_client import Counter, Gauge

from kalaro.bus.redislink import RedisLink
from kalaro.proto.subjects import ENGINE_PARTITIONS
from services.engine.assign import share_of
from services.engine.slots import Fence

log = logging.getLogger("kalaro.engine")

#: How long a lease (and a replica's entry among the live ones) lasts unless renewed.
LEASE_MS = 1_500

OWNED = Gauge("kalaro_engine_partitions_owned", "Partitions of a game this replica owns", ["game"])
TAKEOVERS = Counter(
    "kalaro_engine_takeovers_total",
    "Partitions this replica acquired after another replica had owned them",
    ["game"],
)

# KEYS: the live replicas' sorted set, then of each partition held its lease and its
# acquisitions counter. ARGV: this replica, lease ms, then the value held in each lease.
# A lease that lapsed (this replica paused, Redis slow) with nobody acquiring the
# partition since (the counter still at our token) is taken back as it was: nobody
# else can have written. Answers {live replicas, indexes (1-based) of leases lost}.
# Times are Redis's own clock (TIME), so replicas' clocks may disagree.
_BEAT = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZADD', KEYS[1], now + ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('PEXPIRE', KEYS[1], ARGV[2] * 10)
local lost = {}
for i = 1, (#KEYS - 1) / 2 do
  local lease, value = KEYS[2 * i], ARGV[i + 2]
  local held = redis.call('GET', lease)
  if held == value then
    redis.call('PEXPIRE', lease, ARGV[2])
  elseif not held and redis.call('GET', KEYS[2 * i + 1]) == value:match(':(%d+)$') then
    redis.call('SET', lease, value, 'PX', ARGV[2])
  else
    table.insert(lost, i)
  end
end
return {redis.call('ZRANGE', KEYS[1], 0, -1), lost}
"""

# KEYS: the lease, the partition's token counter. ARGV: this replica, lease ms.
# Answers the lease's new value, or nil if someone holds it.
_ACQUIRE = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  return nil
end
local value = ARGV[1] .. ':' .. redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
return value
"""

# KEYS: the lease. ARGV: the value held. Deletes it only if it is still ours.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""

# KEYS: the live replicas' sorted set. ARGV: this replica.
_LEAVE = "return redis.call('ZREM', KEYS[1], ARGV[1])"

Handler = Callable[[int], Coroutine[Any, Any, None]]


def new_replica_id() -> str:
    """``<host>-<pid>-<random>``: an operator (or a test) sees which process it is; the
    random part keeps a restarted process with a reused pid apart."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


def token_of(fence: Fence) -> int:
    return int(fence.value.rsplit(":", 1)[1])


class Ownership:
    """One replica's partitions of one game.

    ``on_acquired(p)`` runs after the lease is taken (subscribe to the partition's
    subjects); ``on_released(p)`` before it is given back, or after it was found lost
    (unsubscribe, forget the partition's tables).
    """

    def __init__(
        self,
        redis: RedisLink,
        game: str,
        *,
        on_acquired: Handler,
        on_released: Handler,
        namespace: str = "",
        replica: str | None = None,
        lease_ms: int = LEASE_MS,
        partitions: int = ENGINE_PARTITIONS,
    ) -> None:
        self.game = game
        self.replica = replica or new_replica_id()
        self.lease_ms = lease_ms
        self.partitions = partitions
        self.held: dict[int, Fence] = {}
        self.members_key = f"{namespace}engines:{game}"
        self._lease_prefix = f"{namespace}owner:{game}:"
        self._token_prefix = f"{namespace}owner-token:{game}:"
        self._on_acquired = on_acquired
        self._on_released = on_released
        self._beat: Any = redis.register_script(_BEAT)
        self._acquire: Any = redis.register_script(_ACQUIRE)
        self._release: Any = redis.register_script(_RELEASE)
        self._leave: Any = redis.register_script(_LEAVE)
        self._task: asyncio.Task[None] | None = None
        self._dropping: set[asyncio.Task[None]] = set()
        self._lock = asyncio.Lock()
        self._gauge = OWNED.labels(game)
        self._takeovers = TAKEOVERS.labels(game)

    def lease_key(self, partition: int) -> str:
        return f"{self._lease_prefix}{partition}"

    def fence(self, partition: int) -> Fence | None:
        """What a write to a table of ``partition`` is fenced by; None: not ours."""
        return self.held.get(partition)

    async def tick(self) -> None:
        """Beat, renew, then release what is not ours any more and acquire our share."""
        async with self._lock:
            held = list(self.held.items())
            live, lost = await self._beat(
                keys=[self.members_key, *(k for _, f in held for k in (f.key, f.counter))],
                args=[self.replica, self.lease_ms, *(fence.value for _, fence in held)],
            )
            for index in lost:
                partition, fence = held[int(index) - 1]
                await self._drop(partition, fence, "its lease was lost")
            replicas = [m.decode() if isinstance(m, bytes) else str(m) for m in live]
            share = share_of(self.replica, replicas, self.partitions)
            given = sorted(set(self.held) - share)
            for partition in given:
                await self._give_back(partition)
            self._log_released(given, "another replica's share now")
            tokens = {p: t for p in sorted(share - set(self.held)) if (t := await self._take(p))}
            if tokens:
                taken_over = sum(token > 1 for token in tokens.values())
                log.info(
                    "engine %s: acquired %d partition(s) %s (%d of them from another "
                    "replica; replica %s, %d held)",
                    self.game, len(tokens), spans(tokens), taken_over, self.replica,
                    len(self.held),
                )  # fmt: skip
            self._gauge.set(len(self.held))

    def _log_released(self, partitions: list[int], why: str) -> None:
        if partitions:
            log.info(
                "engine %s: released %d partition(s) %s (replica %s): %s",
                self.game, len(partitions), spans(partitions), self.replica, why,
            )  # fmt: skip

    async def _take(self, partition: int) -> int:
        """Acquire and serve ``partition``: its fencing token, or 0 if it is still held
        (its owner gives it back, or its lease runs out)."""
        key, counter = self.lease_key(partition), f"{self._token_prefix}{partition}"
        value = await self._acquire(keys=[key, counter], args=[self.replica, self.lease_ms])
        if value is None:
            return 0
        fence = Fence(key, value.decode() if isinstance(value, bytes) else str(value), counter)
        self.held[partition] = fence
        token = token_of(fence)
        if token > 1:
            self._takeovers.inc()
        try:
            await self._on_acquired(partition)
        except BaseException:
            del self.held[partition]
            await self._release(keys=[key], args=[fence.value])
            raise
        return token

    async def _give_back(self, partition: int) -> None:
        fence = self.held[partition]
        # Stop serving first: no request is taken once the lease is free for another.
        await self._on_released(partition)
        self.held.pop(partition, None)
        await self._release(keys=[fence.key], args=[fence.value])

    async def _drop(self, partition: int, fence: Fence, why: str) -> None:
        if self._forget(partition, fence, why):
            await self._on_released(partition)

    def _forget(self, partition: int, fence: Fence, why: str) -> bool:
        if self.held.get(partition) != fence:
            return False  # already dropped
        del self.held[partition]
        log.warning(
            "engine %s: dropped partition %d (token %d, replica %s): %s",
            self.game, partition, token_of(fence), self.replica, why,
        )  # fmt: skip
        return True

    def lose(self, partition: int, fence: Fence) -> None:
        """A write was refused by the fence: stop owning ``partition`` now (writes fail
        from here on) and unsubscribe in the background, for the caller may be one of
        the requests the unsubscribing waits for."""
        if self._forget(partition, fence, "a write was fenced off"):
            task = asyncio.create_task(self._on_released(partition))
            self._dropping.add(task)
            task.add_done_callback(self._dropping.discard)

    async def run(self) -> None:
        """Forever: tick every fifth of a lease (a failed tick is retried next time)."""
        while True:
            try:
                await self.tick()
            except Exception:
                log.warning("engine %s: ownership tick failed", self.game, exc_info=True)
            await asyncio.sleep(self.lease_ms / 5000)

    def start(self) -> None:
        self._task = asyncio.create_task(self.run(), name=f"engine-{self.game}-ownership")

    async def stop(self) -> None:
        """Drain: leave the live set, give back every lease (others take over at once)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        async with self._lock:
            with contextlib.suppress(Exception):
                await self._leave(keys=[self.members_key], args=[self.replica])
            given = []
            for partition in sorted(self.held):
                try:
                    await self._give_back(partition)
                    given.append(partition)
                except Exception:
                    log.warning("engine %s: releasing %d failed", self.game, partition)
            self._log_released(given, "this replica is stopping")
            self._gauge.set(0)


def spans(partitions: Iterable[int]) -> str:
    """``[0, 1, 2, 5, 7, 8]`` as ``0-2,5,7-8``: one log line says which partitions."""
    out: list[str] = []
    for partition in sorted(partitions):
        if out and out[-1].rsplit("-", 1)[-1] == str(partition - 1):
            first = out[-1].split("-", 1)[0]
            out[-1] = f"{first}-{partition}"
        else:
            out.append(str(partition))
    return ",".join(out)


__all__ = ["LEASE_MS", "Ownership", "new_replica_id", "token_of"]
