"""The ``kalaro`` command: run the stack and operator chores."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from importlib import metadata


def version() -> str:
    """The installed package's version (``unknown`` when run from a bare checkout)."""
    try:
        return metadata.version("kalaro")
    except metadata.PackageNotFoundError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kalaro", description=__doc__)
    parser.add_argument("--version", action="version", version=f"kalaro {version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("run", help="start nats, redis and every service on loopback")
    admin = commands.add_parser("create-admin", help="create or promote an admin account")
    admin.add_argument("--email", required=True)
    admin.add_argument("--name", default="Admin")
    admin.add_argument("--password", help="omit to generate a strong one (printed once)")
    verify = commands.add_parser(
        "verify", help="check a finished or voided hand's seed, deal and result"
    )
    verify.add_argument("record", help="the hand record (JSON file, or - for stdin)")
    simulate = commands.add_parser(
        "simulate", help="play bots against each other in-process and report win rates"
    )
    simulate.add_argument("--game", required=True, help="tongits, mahjong or kawuxing")
    simulate.add_argument("--hands", type=int, default=1000, help="hands to play (default 1000)")
    simulate.add_argument(
        "--seats", required=True, help="one policy per seat, e.g. smart,random,random"
    )
    simulate.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    simulate.add_argument("--ruleset", default="kalaro", help="the game's ruleset (default kalaro)")
    simulate.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    args = parser.parse_args(argv)

    if args.command == "run":
        from kalaro.launcher import run

        return run()
    if args.command == "verify":
        from kalaro.verify import main as verify_main

        try:
            return verify_main(args.record)
        except OSError as exc:  # missing, unreadable or a directory: one line, no traceback
            print(
                f"kalaro verify: cannot read {args.record}: {exc.strerror or exc}", file=sys.stderr
            )
            return 2
    if args.command == "simulate":
        from kalaro.bots.simulate import main as simulate_main

        return simulate_main(
            args.game, args.seats, args.hands, args.seed, args.ruleset, not args.no_progress
        )
    if args.command == "create-admin":
        command = [sys.executable, "-m", "services.auth", "create-admin"]
        command += ["--email", args.email, "--name", args.name]
        if args.password:
            command += ["--password", args.password]
        return subprocess.call(command, env=dict(os.environ))
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
