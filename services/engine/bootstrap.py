"""One game's engine bootstrap: the :class:`~services.engine.worker.EngineWorker` (its
deps: Redis slots, the bus, the clock, settings), its endpoints, the ownership of its
partitions and the timer loop (``python -m services.engine --game <game>`` runs it).

The worker's handlers stay its methods (``worker.act(cmd)``: the deps is the worker,
which keeps each owned table's hand in memory); :meth:`EngineWorker.build_service`
binds them, and binds each partition's subjects as the worker acquires them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from nats.aio.client import Client as NATS
from prometheus_client import Gauge

from kalaro.bus.redislink import RedisLink
from kalaro.bus.runner import Bootstrap, Running, redis_ready, streams_ready
from kalaro.bus.store import connect_redis
from kalaro.proto import subjects
from kalaro.settings import Settings
from services.engine.worker import EngineWorker

log = logging.getLogger("kalaro.engine")


def service_name(game: str) -> str:
    return f"engine-{game}"


def bootstrap_for(game: str) -> Bootstrap:
    """The bootstrap of ``game``'s engine."""

    async def bootstrap(
        settings: Settings, nc: NATS, resources: contextlib.AsyncExitStack
    ) -> Running:
        redis = connect_redis(settings.redis_url, settings)
        resources.push_async_callback(redis.aclose)
        worker = EngineWorker(
            game, nc, redis, settings=settings, owned=True, lease_ms=settings.engine_lease_ms
        )
        # The timer loop starts after the endpoints and stops before NATS drains.
        return Running(
            worker.build_service(),
            checks={
                "redis": redis_ready(redis),
                "jetstream": streams_ready(
                    nc, [subjects.RESULTS_STREAM, subjects.EVENTS_STREAM], settings
                ),
            },
            on_start=[worker.start],
            background=[lambda: count_active_hands(game, redis, worker.slots.deadlines_key)],
            on_stop=[worker.stop],
        )

    return bootstrap


ACTIVE_HANDS = Gauge(
    "kalaro_engine_active_hands",
    "Hands of a game in play (with a turn clock running), over every replica; sampled",
    ["game"],
)
ACTIVE_HANDS_EVERY = 15.0


async def count_active_hands(
    game: str, redis: RedisLink, deadlines_key: str, every: float = ACTIVE_HANDS_EVERY
) -> None:
    """Forever: every hand in play has exactly one entry in its game's deadline set
    (services/engine/slots.py), so its size is the number of hands in play."""
    gauge = ACTIVE_HANDS.labels(game)
    while True:
        try:
            gauge.set(await redis.zcard(deadlines_key))
        except Exception as exc:  # Redis down: /readyz says so; keep the last value
            log.debug("counting active hands failed: %r", exc)
        await asyncio.sleep(every)
