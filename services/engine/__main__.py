"""``python -m services.engine --game tongits``: serve one game's hands until SIGTERM.

The game comes from ``--game`` or ``KALARO_GAME``. Replicas of a game split its tables
between them by partition (services/engine/ownership.py): each owns the partitions
it holds a lease on, serves their requests and runs their timers; they share nothing
but Redis, so run as many as the load needs, and stop or add them at will.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os

from prometheus_client import Gauge

from kalaro.bus.redislink import RedisLink
from kalaro.bus.runner import connect, redis_ready, run_until_stopped, serve, streams_ready
from kalaro.bus.store import connect_redis
from kalaro.games.registry import UnknownGame, game_names, rules_for
from kalaro.logs import setup as setup_logs
from kalaro.proto import subjects
from kalaro.settings import load_settings
from services.engine.worker import EngineWorker

log = logging.getLogger("kalaro.engine")


async def run(game: str) -> None:
    settings = load_settings()
    redis = connect_redis(settings.redis_url, settings)
    try:
        nc = await connect(settings.nats_url, f"engine-{game}")
        worker = EngineWorker(
            game, nc, redis, settings=settings, owned=True, lease_ms=settings.engine_lease_ms
        )
        counting = asyncio.create_task(count_active_hands(game, redis, worker.slots.deadlines_key))
        # The timer loop starts after the endpoints and stops before NATS drains.
        await serve(
            worker.build_service(),
            nc,
            health_port=settings.health_port,
            health_host=settings.health_host,
            checks={
                "redis": redis_ready(redis),
                "jetstream": streams_ready(
                    nc, [subjects.RESULTS_STREAM, subjects.EVENTS_STREAM], settings
                ),
            },
            on_start=worker.start,
            on_stop=worker.stop,
        )
        counting.cancel()
    finally:
        await redis.aclose()


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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m services.engine", description=__doc__)
    parser.add_argument(
        "--game",
        default=os.environ.get("KALARO_GAME", ""),
        help=f"the game to run hands of: {', '.join(game_names())} (default: $KALARO_GAME)",
    )
    args = parser.parse_args(argv)
    try:
        rules_for(args.game)
    except UnknownGame as exc:
        parser.error(str(exc) if args.game else "name a game with --game or KALARO_GAME")
    setup_logs(f"engine-{args.game}")
    run_until_stopped(run(args.game))


if __name__ == "__main__":
    main()
