"""Engine ownership under repeated faults, long (``make chaos``): rounds of kill -9,
SIGSTOP past the lease then SIGCONT, and scaling up and down, while hands are played
at several tables through the owners' subjects. After every round each partition has
at most one responder; at the end every slot holds exactly the moves acknowledged.

The short variants, one fault each, are ``tests/integration/engine/
test_engine_takeover.py`` (in ``make test``).
"""

from __future__ import annotations

import os
import random
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from kalaro.bus.redislink import RedisLink
from kalaro.bus.runner import connect
from kalaro.devstack import NatsCluster, RedisServer
from tests.integration.engine.owners_helpers import (
    EngineProcesses,
    Table,
    owners,
    responders,
    table_per_partition,
    wait_until,
)

LONG = os.environ.get("KALARO_CHAOS", "").lower() == "long"
ROUNDS = 40
TABLES = 8


@pytest.fixture(scope="module")
def own_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("owners-chaos-redis")).start()
    yield server
    server.stop()


@pytest.fixture
async def store(own_redis: RedisServer) -> AsyncIterator[RedisLink]:
    client = RedisLink(own_redis.url)
    yield client
    await client.aclose()


@pytest.mark.skipif(not LONG, reason="long: KALARO_CHAOS=long (make chaos) runs it")
async def test_engine_ownership_under_rounds_of_faults(
    nats_cluster: NatsCluster, own_redis: RedisServer, store: RedisLink, tmp_path: Path
) -> None:
    rng = random.Random(32)
    engines = EngineProcesses(nats_cluster.url, own_redis.url, tmp_path)
    nc = await connect(nats_cluster.url, "owners-chaos")
    names = iter(f"e{i}" for i in range(1000))
    probes = table_per_partition("probe")
    finished: list[Table] = []
    try:
        for _ in range(2):
            engines.start(next(names))
        await engines.wait_owned_by(store, set(engines.running))
        tables = [await Table.open(nc, "chaos", f"t{i}") for i in range(TABLES)]
        hands = TABLES

        async def play(steps: int) -> None:
            nonlocal hands
            for _ in range(steps):
                for i, table in enumerate(tables):
                    if not await table.move():
                        finished.append(table)
                        tables[i] = await Table.open(nc, "chaos", f"t{hands}")
                        hands += 1

        for round_no in range(ROUNDS):
            await play(3)
            live = sorted(engines.running)
            fault = rng.choice(["kill", "pause", "up", "down"] if len(live) > 1 else ["up"])
            victim = rng.choice(live) if fault != "up" else next(names)
            print(f"[owners] round {round_no}: {fault} {victim}, live {live}")
            if fault == "kill":
                engines.kill(victim)
            elif fault == "down":
                engines.stop(victim)
            elif fault == "up":
                engines.start(victim)
            else:
                pid = engines.pid(victim)
                engines.signal(victim, signal.SIGSTOP)

                async def gone(pid: int = pid) -> bool:
                    return pid not in set((await owners(store)).values())

                await wait_until(gone, 15, f"{victim}'s partitions taken over")
                await play(2)
                engines.signal(victim, signal.SIGCONT)
            await play(3)
            await engines.wait_owned_by(store, set(engines.running), timeout=30)
            counts = await responders(nc, probes)
            assert set(counts.values()) == {1}, counts
        for table in finished + tables:
            await table.check_stored(store)
        print(f"[owners] {hands} hands, {sum(t.acked for t in finished + tables)} moves")
    finally:
        engines.stop_all()
        await nc.drain()
