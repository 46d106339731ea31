"""Engine replicas own tables (issue 32): faults caused for real, on a 3-node NATS
cluster and Redis, with engines as processes (``python -m services.engine``).

- kill -9 a table's owner mid-hand: another replica owns it within 2 s (a lease of
  1 s and a tick here) and the hand goes on, no move lost or applied twice;
- SIGSTOP the owner past its lease, another takes over, SIGCONT: the old owner drops
  the partition and writes nothing;
- scale 1 -> 3 -> 1 during play: every partition has exactly one responder at every
  step, and play goes on.
"""

from __future__ import annotations

import re
import signal
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from nats.aio.client import Client as NATS

from kalaro.bus.redislink import RedisLink
from kalaro.bus.runner import connect
from kalaro.devstack import NatsCluster, RedisServer
from tests.integration.engine.owners_helpers import (
    LEASE_MS,
    EngineProcesses,
    Table,
    owners,
    responders,
    table_per_partition,
    wait_until,
)


@pytest.fixture(scope="module")
def own_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """Engines use Redis's unprefixed keys: a server of this module's own."""
    server = RedisServer(tmp_path_factory.mktemp("owners-redis")).start()
    yield server
    server.stop()


@pytest.fixture
async def store(own_redis: RedisServer) -> AsyncIterator[RedisLink]:
    client = RedisLink(own_redis.url)
    await client.execute("FLUSHALL")
    yield client
    await client.aclose()


@pytest.fixture
async def cluster_nc(nats_cluster: NatsCluster) -> AsyncIterator[NATS]:
    client = await connect(nats_cluster.url, "owners-test")
    yield client
    await client.drain()


@pytest.fixture
def engines(
    nats_cluster: NatsCluster, own_redis: RedisServer, tmp_path: Path
) -> Iterator[EngineProcesses]:
    processes = EngineProcesses(nats_cluster.url, own_redis.url, tmp_path)
    yield processes
    processes.stop_all()


async def test_killing_a_tables_owner_mid_hand_moves_it_within_two_seconds(
    engines: EngineProcesses, store: RedisLink, cluster_nc: NATS, unique: str
) -> None:
    engines.start("a")
    engines.start("b")
    await engines.wait_owned_by(store, {"a", "b"})
    table = await Table.open(cluster_nc, unique, "kill")
    for _ in range(6):
        assert await table.move()
    owner = engines.name_of((await owners(store))[table.partition] or 0)
    survivor = ({"a", "b"} - {owner}).pop()

    engines.kill(owner)
    killed_at = time.monotonic()

    async def survivor_owns() -> bool:
        return (await owners(store))[table.partition] == engines.pid(survivor)

    took = await wait_until(survivor_owns, 10, "the survivor owning the table")
    print(f"takeover after kill -9: {took:.2f} s (lease {LEASE_MS} ms)")
    assert took < 2.0
    while await table.move():  # the hand goes on, at the survivor, to its end
        pass
    assert time.monotonic() - killed_at < 60
    await table.check_stored(store)
    await engines.wait_owned_by(store, {survivor})  # it takes them all


async def test_an_owner_paused_past_its_lease_is_fenced_off_and_drops_the_table(
    engines: EngineProcesses, store: RedisLink, cluster_nc: NATS, unique: str
) -> None:
    engines.start("a")
    engines.start("b")
    await engines.wait_owned_by(store, {"a", "b"})
    table = await Table.open(cluster_nc, unique, "pause")
    for _ in range(4):
        assert await table.move()
    paused_pid = (await owners(store))[table.partition]
    paused = engines.name_of(paused_pid or 0)
    other = ({"a", "b"} - {paused}).pop()

    engines.signal(paused, signal.SIGSTOP)
    try:

        async def taken_over() -> bool:
            return (await owners(store))[table.partition] == engines.pid(other)

        await wait_until(taken_over, 10, "the other replica owning the table")
        for _ in range(4):  # the paused one holds its subscription: it gets these too
            assert await table.move()
    finally:
        engines.signal(paused, signal.SIGCONT)

    async def dropped() -> bool:
        return f"dropped partition {table.partition} " in engines.log(paused)

    await wait_until(dropped, 10, "the resumed owner dropping the table's partition")
    for _ in range(4):  # play goes on with one owner; the resumed one wrote nothing
        if not await table.move():
            break
    await table.check_stored(store)
    log = engines.log(paused)
    assert "Traceback" not in log, log[-3000:]


async def test_scaling_one_to_three_to_one_keeps_one_owner_per_partition(
    engines: EngineProcesses, store: RedisLink, cluster_nc: NATS, unique: str
) -> None:
    probes = table_per_partition(f"{unique}-probe")

    async def one_responder_each() -> None:
        counts = await responders(cluster_nc, probes)
        assert all(n <= 1 for n in counts.values()), counts  # never two owners

    engines.start("a")
    await engines.wait_owned_by(store, {"a"})
    tables = [await Table.open(cluster_nc, unique, f"scale{i}") for i in range(3)]

    async def play(moves: int) -> None:
        for _ in range(moves):
            for table in tables:
                await table.move()
            await one_responder_each()

    await play(2)
    engines.start("b")
    engines.start("c")
    await play(3)  # during the hand-over
    await engines.wait_owned_by(store, {"a", "b", "c"})
    assert (await responders(cluster_nc, probes)) == dict.fromkeys(probes, 1)
    await play(2)
    engines.stop("b")  # drains: its partitions go back at once
    await play(2)
    engines.stop("c")
    await play(2)
    await engines.wait_owned_by(store, {"a"})
    assert (await responders(cluster_nc, probes)) == dict.fromkeys(probes, 1)
    for table in tables:
        await table.check_stored(store)
    # A stopping replica says which partitions it gave back, in one line.
    assert re.search(
        r"released \d+ partition\(s\) [\d,-]+ .*: this replica is stopping", engines.log("b")
    )
