"""Bots benchmark: how far the smart bots beat random play, and how fast hands simulate.

    .venv/bin/python bench/bench_bots.py [--quick] [--hands N] [--seed N]

For each game, with ``kalaro.bots.simulate`` (pure engines, in-process, players moving
one chair round the table every hand so position does not bias the result):

1. Smart against random-legal bots (one smart seat, the rest random) over 10,000 hands
   (1,000 with ``--quick``): the smart bot's win rate with its 95% Wilson interval
   against chance (1/3 for Tongits and Ka Wu Xing, 1/4 for Mahjong), and its average
   result in units of the bet with a 95% interval.
2. Pure simulation speed: hands per second of random against random and of smart
   against random (every view built, every choice checked against the legal actions),
   by the wall clock and by this process's CPU time (the fairer figure on a busy
   machine).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from kalaro.bots.simulate import Report, simulate

GAMES = {"tongits": 3, "mahjong": 4, "kawuxing": 3}


def _run(game: str, seats: list[str], hands: int, seed: int) -> Report:
    # the bar only where someone watches; piped output stays clean
    return simulate(game, seats, hands, seed, progress=sys.stderr.isatty())


def _table(header: Sequence[str], widths: Sequence[int], rows: list[Sequence[str]]) -> str:
    def line(cells: Sequence[str]) -> str:
        return "  " + "".join(
            f"{c:<{w}}" if i == 0 else f"{c:>{w}}"
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    out = [line(header), "  " + "-" * sum(widths)]
    return "\n".join(out + [line(r) for r in rows])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 hands per run")
    parser.add_argument("--hands", type=int, help="hands per run (default 10,000)")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    hands = args.hands or (1_000 if args.quick else 10_000)

    python = sys.version.split()[0]
    print(f"Bots benchmark (python {python}, {hands:,} hands per run, seed {args.seed})")
    strength: list[Sequence[str]] = []
    speed: list[Sequence[str]] = []
    endings: list[str] = []
    for game, seats in GAMES.items():
        smart = _run(game, ["smart"] + ["random"] * (seats - 1), hands, args.seed)
        rand = _run(game, ["random"] * seats, hands, args.seed)
        s = smart.policy("smart")
        chance = 1 / seats
        strength.append(
            (
                game,
                f"{s.win_rate:.1%}",
                f"[{s.win_low:.1%}, {s.win_high:.1%}]",
                f"{chance:.1%}",
                "yes" if s.win_low > chance else "NO",
                f"{s.mean:+.2f}",
                f"[{s.mean_low:+.2f}, {s.mean_high:+.2f}]",
            )
        )
        for label, report in ((f"random x{seats}", rand), ("smart+random", smart)):
            speed.append(
                (
                    game,
                    label,
                    f"{report.hands_per_second:,.0f}",
                    f"{report.hands_per_cpu_second:,.0f}",
                    f"{report.actions / report.hands:.1f}",
                    f"{report.actions / report.seconds:,.0f}",
                )
            )
        shown = ", ".join(f"{name} {count}" for name, count in smart.endings)
        endings.append(f"  {game}: {shown} (no winner {smart.no_winner})")

    print("\nSmart (one seat) against random-legal bots (every other seat)")
    print(
        _table(
            ("game", "win rate", "95% CI", "chance", "CI > chance", "avg units", "95% CI"),
            (9, 10, 17, 8, 13, 11, 17),
            strength,
        )
    )
    print("endings of those hands:")
    print("\n".join(endings))
    print("\nPure simulation speed (views, choices and legality checks included)")
    print("  hands/s is wall clock; hands/cpu-s counts only this process's CPU time")
    print(
        _table(
            ("game", "seats", "hands/s", "hands/cpu-s", "actions/hand", "actions/s"),
            (9, 14, 10, 13, 14, 12),
            speed,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
