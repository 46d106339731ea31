"""The bots service's own state on real NATS and Redis: refusals, and who resumes whom.

Seated bots are assignments in Redis owned by a replica with a lease; a replica resumes
the bots of replicas whose lease ran out, by compare-and-set, so each bot is resumed by
exactly one replica. Playing is replaced by a recorder here (``test_bot_player`` plays).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import msgspec
import pytest
from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError, request
from kalaro.bus.redislink import RedisLink
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.bots import BotSeated, SeatBot
from services.bots.accounts import BotAccount
from services.bots.bootstrap import build_service
from services.bots.player import BotSeat
from services.bots.service import Assignment, Bots
from services.bots.settings import BotSettings
from tests.cancels import swallowing_one_cancel


class RecordingBots(Bots):
    """Bots whose 'playing' is writing down which assignment it would play."""

    def __init__(self, *args: object, **kw: object) -> None:
        super().__init__(*args, **kw)  # type: ignore[arg-type]
        self.played: list[Assignment] = []

    def _play(self, assignment: Assignment, account: BotAccount) -> BotSeat:
        self.played.append(assignment)
        idle = asyncio.create_task(asyncio.sleep(3600))  # "playing" until stopped
        self.playing[(assignment.table_id, assignment.seat)] = (None, idle, assignment)  # type: ignore[assignment]
        return None  # type: ignore[return-value]


def settings(unique: str) -> BotSettings:
    # Nothing listens on port 9: a bot that tries to reach the gateway fails at once.
    return BotSettings("http://127.0.0.1:9", b"secret", redis_prefix=f"test:{unique}:bots:")


@pytest.fixture
async def replicas(nc: NATS, redis: RedisLink, unique: str) -> AsyncIterator[list[RecordingBots]]:
    made: list[RecordingBots] = []
    for name in ("a", "b"):
        made.append(RecordingBots(nc, redis, settings(unique), replica=f"{unique}-{name}"))
    yield made
    for bots in made:
        await bots.stop()


async def assign(redis: RedisLink, bots: Bots, table: str, owner: str) -> Assignment:
    assignment = Assignment(table, 1, "tongits", 3, owner)
    key = f"{bots.settings.redis_prefix}assignments"
    await redis.hset(key, assignment.hash_field, msgspec.json.encode(assignment))
    return assignment


async def test_bots_resume_only_what_a_gone_replica_left(
    redis: RedisLink, replicas: list[RecordingBots], unique: str
) -> None:
    a, b = replicas
    live = await assign(redis, a, f"{unique}-live", a.replica)
    await a.sweep()  # a is alive (its lease is fresh) and plays its own bot
    assert a.played == [live]
    a.played.clear()
    orphans = [await assign(redis, a, f"{unique}-t{i}", f"{unique}-gone") for i in range(5)]
    # Both replicas look at once: every orphan is resumed, each by exactly one of them.
    await asyncio.gather(a.sweep(), b.sweep())
    resumed = [x.table_id for x in a.played + b.played]
    assert sorted(resumed) == sorted(o.table_id for o in orphans)
    assert {x.owner for x in a.played} <= {a.replica} and {x.owner for x in b.played} <= {b.replica}
    # a stops (a redeploy): it gives up its lease, and b takes over a's bots at once.
    live_before = len(b.played)
    await a.stop()
    await b.sweep()
    taken = [x.table_id for x in b.played[live_before:]]
    assert f"{unique}-live" in taken
    assert set(taken) == {f"{unique}-live", *(x.table_id for x in a.played)}


async def test_seat_refuses_a_game_without_bots_and_an_unreachable_gateway(
    nc: NATS, redis: RedisLink, unique: str
) -> None:
    bots = Bots(nc, redis, settings(unique), replica=f"{unique}-s")
    service = build_service(bots)
    await service.start(nc)
    try:
        with pytest.raises(RemoteError) as refused:
            await request(
                nc, subjects.BOTS_SEAT, SeatBot(table_id="t", seat=1, game="chess"), BotSeated
            )
        assert refused.value.code == codes.BAD_REQUEST and "chess" in refused.value.message
        # No auth service and no gateway: the lobby hears "unavailable", not silence.
        with pytest.raises(RemoteError) as away:
            await request(
                nc, subjects.BOTS_SEAT, SeatBot(table_id="t", seat=1, game="tongits"), BotSeated
            )
        assert away.value.code == codes.UNAVAILABLE
    finally:
        await service.stop()
        await bots.stop()


async def test_stop_ends_the_sweep_loop_even_if_a_cancellation_is_swallowed(
    nc: NATS, redis: RedisLink, unique: str
) -> None:
    """As for the engine's timer loop: Python 3.11's ``wait_for`` can swallow a cancel
    that lands as its future completes, and the loop must stop all the same."""
    bots = RecordingBots(nc, redis, settings(unique), replica=f"{unique}-q", sweep_seconds=0.01)
    await bots.start()
    swallowed: list[bool] = []
    bots.sweep = swallowing_one_cancel(bots.sweep, 0, swallowed)  # type: ignore[method-assign]
    await asyncio.sleep(0.05)
    started = time.monotonic()
    await asyncio.wait_for(bots.stop(), 5)
    assert time.monotonic() - started < 2, "stop() hung until it was cancelled"
    assert swallowed == [True]
