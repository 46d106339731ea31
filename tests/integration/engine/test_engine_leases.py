"""Partition leases and fenced writes (services/engine/ownership.py), on real Redis.

Two ``Ownership`` instances stand for two replicas; their ticks are driven by the
test, so every step is deterministic except a lease running out, which is waited for.
"""

from __future__ import annotations

import asyncio

import pytest

from kalaro.bus.redislink import RedisLink
from kalaro.proto.subjects import ENGINE_PARTITIONS
from services.engine.hand import Slot
from services.engine.ownership import Ownership, token_of
from services.engine.slots import Fenced, SlotStore

ALL = set(range(ENGINE_PARTITIONS))


class Replica:
    """An ``Ownership`` whose subscribing is a set of served partitions."""

    def __init__(self, redis: RedisLink, namespace: str, name: str, lease_ms: int) -> None:
        self.serving: set[int] = set()
        self.released: list[int] = []
        self.own = Ownership(
            redis,
            "tongits",
            on_acquired=self._serve,
            on_released=self._leave,
            namespace=namespace,
            replica=name,
            lease_ms=lease_ms,
        )

    async def _serve(self, partition: int) -> None:
        assert partition not in self.serving
        self.serving.add(partition)

    async def _leave(self, partition: int) -> None:
        self.serving.discard(partition)
        self.released.append(partition)


async def lease_values(redis: RedisLink, replica: Replica) -> dict[int, str | None]:
    values = await redis.execute("MGET", *(replica.own.lease_key(p) for p in sorted(ALL)))
    return {p: None if v is None else v.decode() for p, v in zip(sorted(ALL), values, strict=True)}


async def test_replicas_split_the_partitions_and_a_draining_one_hands_its_share_over(
    redis: RedisLink, unique: str
) -> None:
    a = Replica(redis, unique, "a", 5_000)
    b = Replica(redis, unique, "b", 5_000)
    await a.own.tick()
    assert a.serving == ALL == set(a.own.held)

    await b.own.tick()  # b is live now, but its share is still a's: it waits
    assert b.serving == set()
    await a.own.tick()  # a gives back b's share...
    await b.own.tick()  # ...and b takes it
    assert b.serving and a.serving and a.serving | b.serving == ALL
    assert not a.serving & b.serving
    assert set(a.released) == b.serving
    leases = await lease_values(redis, a)
    for replica, name in ((a, "a"), (b, "b")):
        for p in replica.serving:
            assert leases[p] == replica.own.held[p].value
            assert leases[p].startswith(f"{name}:")

    await a.own.stop()  # drain: every lease given back at once, no expiry to wait for
    assert a.serving == set() and a.own.held == {}
    await b.own.tick()
    assert b.serving == ALL
    # Each partition had two owners, a then b: its token counted both acquisitions.
    assert {token_of(fence) for fence in b.own.held.values()} == {2}


async def test_a_lapsed_owner_is_taken_over_fenced_off_and_drops_its_partitions(
    redis: RedisLink, unique: str
) -> None:
    store = SlotStore(redis, "tongits", unique)
    old = Replica(redis, unique, "old", 300)
    await old.own.tick()
    table = f"{unique}-t"
    partition = 0  # any: a fence is per partition
    fence = old.own.held[partition]
    slot = Slot(table_id=table, hand_id=f"{unique}-h", game="tongits", status="cancelled")
    assert (await store.save(slot, 0, fence=fence)).version == 1

    await asyncio.sleep(0.5)  # "paused" past its lease: no tick renewed it
    new = Replica(redis, unique, "new", 5_000)
    await new.own.tick()
    assert new.serving == ALL  # the old one is not live any more either
    assert token_of(new.own.held[partition]) == token_of(fence) + 1

    # The old owner writes at the very version the slot is at: only the fence stops it.
    with pytest.raises(Fenced):
        await store.save(slot, 1, fence=fence)
    version, stored = await store.load(table)
    assert version == 1 and stored == slot
    assert (await store.save(slot, 1, fence=new.own.held[partition])).version == 2

    await old.own.tick()  # it wakes: its leases are gone, it stops serving them all
    assert old.own.held == {} and old.serving == set()
    assert sorted(old.released) == sorted(ALL)
    assert new.serving == ALL  # and the new owner keeps them until it gives some back


async def test_a_fenced_write_drops_just_that_partition_at_once(
    redis: RedisLink, unique: str
) -> None:
    a = Replica(redis, unique, "a", 5_000)
    await a.own.tick()
    fence = a.own.held[3]
    a.own.lose(3, fence)
    assert a.own.fence(3) is None  # writes stop now; the unsubscribing runs behind
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert 3 not in a.serving and a.released == [3]
    a.own.lose(3, fence)  # a second refusal of the same lease changes nothing
    assert a.released == [3]
    await a.own.stop()


async def test_a_lapsed_lease_nobody_took_is_still_the_owners(
    redis: RedisLink, unique: str
) -> None:
    """Paused past its lease with no other replica to take over (a lone engine, a slow
    Redis): nobody can have written, so its writes and its partitions stand."""
    store = SlotStore(redis, "tongits", unique)
    alone = Replica(redis, unique, "alone", 300)
    await alone.own.tick()
    fence = alone.own.held[5]
    await asyncio.sleep(0.5)
    assert await redis.get(fence.key) is None  # lapsed
    slot = Slot(table_id=f"{unique}-t", hand_id=f"{unique}-h", game="tongits", status="cancelled")
    assert (await store.save(slot, 0, fence=fence)).version == 1  # nobody acquired since
    await alone.own.tick()
    assert alone.own.held[5] == fence and alone.released == []
    assert (await redis.get(fence.key)).decode() == fence.value  # taken back as it was
