"""``python -m services.engine --game tongits``: serve one game's hands until SIGTERM.

The game comes from ``--game`` or ``KALARO_GAME``. Replicas of a game split its tables
between them by partition (services/engine/ownership.py): each owns the partitions
it holds a lease on, serves their requests and runs their timers; they share nothing
but Redis, so run as many as the load needs, and stop or add them at will. What one
runs is :mod:`services.engine.bootstrap`.
"""

from __future__ import annotations

import argparse
import os

from kalaro.bus.runner import service_main
from kalaro.games.registry import UnknownGame, game_names, rules_for
from services.engine.bootstrap import bootstrap_for, service_name


def main(argv: list[str] | None = None) -> int:
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
    return service_main(service_name(args.game), bootstrap_for(args.game))


if __name__ == "__main__":
    raise SystemExit(main())
