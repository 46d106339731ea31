"""``python -m services.engine --game tongits``: serve one game's hands until SIGTERM.

The game comes from ``--game`` or ``KALARO_GAME``. Every replica of a game joins the
queue group ``engine-<game>`` and runs the timer loop and outcome sweeper; replicas
share nothing but Redis, so run as many as the load needs.
"""

from __future__ import annotations

import argparse
import logging
import os

from kalaro.bus.runner import connect, run_until_stopped, serve
from kalaro.bus.store import connect_redis
from kalaro.games.registry import UnknownGame, game_names, rules_for
from kalaro.settings import load_settings
from services.engine.worker import EngineWorker

log = logging.getLogger("kalaro.engine")


async def run(game: str) -> None:
    settings = load_settings()
    redis = connect_redis(settings.redis_url)
    try:
        nc = await connect(settings.nats_url, f"engine-{game}")
        worker = EngineWorker(game, nc, redis, settings=settings)
        # The timer loop starts after the endpoints and stops before NATS drains.
        await serve(
            worker.build_service(),
            nc,
            health_port=settings.health_port,
            on_start=worker.start,
            on_stop=worker.stop,
        )
    finally:
        await redis.aclose()


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
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    run_until_stopped(run(args.game))


if __name__ == "__main__":
    main()
