"""Tongits benchmark: best_deadwood against OpenSpiel, and random-play speed.

    .venv/bin/python bench/bench_tongits.py [--quick] [--seed N]

1. ``best_deadwood`` against OpenSpiel's C++ gin-rummy ``min_deadwood`` on the same
   hands in the same run (``GinRummyUtils(13, 4, 20)``: hand size 20 so it never drops
   a card; gin values A=1, faces 10, and the same melds, so answers must be equal).
   Random hands (1-13 cards) and dense hands (9-13 cards from four adjacent ranks,
   where sets and runs overlap most). Each side is timed from its natural input: ours
   from card notation, OpenSpiel's from its card ints (pybind conversion included).
   Goal: within 3x of OpenSpiel on random hands, faster on dense hands.
2. Random play: hands per second of uniformly random legal actions, per ruleset
   (``legal_actions`` + ``apply`` every step).

OpenSpiel is a bench extra (``pip install -e '.[bench]'``); without it, part 1 prints
why and only our side is timed.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from kalaro.games.cards import DECK, RANKS
from kalaro.games.tongits import (
    apply,
    best_deadwood,
    is_over,
    legal_actions,
    new_hand,
    options_for,
    to_act,
)

# OpenSpiel's gin rummy card int is suit * 13 + rank with suits ordered s c d h
_OPENSPIEL_SUIT = {"S": 0, "C": 1, "D": 2, "H": 3}


def to_openspiel(card: str) -> int:
    return _OPENSPIEL_SUIT[card[-1]] * 13 + RANKS.index(card[:-1])


def random_hands(rng: random.Random, count: int) -> list[list[str]]:
    return [rng.sample(DECK, rng.randint(1, 13)) for _ in range(count)]


def dense_hands(rng: random.Random, count: int) -> list[list[str]]:
    out = []
    for _ in range(count):
        low = rng.randint(0, 9)
        pool = [rank + suit for rank in RANKS[low : low + 4] for suit in "SHDC"]
        out.append(rng.sample(pool, rng.randint(9, 13)))
    return out


def best_time(fn: Callable[[], object], repeats: int) -> float:
    """Fastest of ``repeats`` runs, in seconds (the least disturbed by the machine)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def load_openspiel() -> tuple[Any, str]:
    try:
        import pyspiel
    except ImportError as exc:
        return (
            None,
            f"OpenSpiel not available ({exc}); install the bench extra: pip install -e '.[bench]'",
        )
    return pyspiel.gin_rummy.GinRummyUtils(13, 4, 20), ""


def bench_deadwood(rng: random.Random, sizes: dict[str, int], repeats: int) -> list[str]:
    utils, why = load_openspiel()
    lines = []
    if utils is None:
        lines.append(f"  ! {why}")
    header = f"  {'hands':<8}{'count':>7}{'ours µs':>10}{'OpenSpiel µs':>14}{'ratio':>8}  answers"
    lines.append(header)
    lines.append("  " + "-" * (len(header) - 2))
    for kind, make in (("random", random_hands), ("dense", dense_hands)):
        hands = make(rng, sizes[kind])
        ours_answers = [best_deadwood(h) for h in hands]
        ours = best_time(lambda hands=hands: [best_deadwood(h) for h in hands], repeats)
        ours_us = ours / len(hands) * 1e6
        if utils is None:
            lines.append(f"  {kind:<8}{len(hands):>7}{ours_us:>10.2f}{'-':>14}{'-':>8}  -")
            continue
        os_hands = [[to_openspiel(c) for c in h] for h in hands]
        os_answers = [utils.min_deadwood(h) for h in os_hands]
        theirs = best_time(
            lambda os_hands=os_hands: [utils.min_deadwood(h) for h in os_hands], repeats
        )
        theirs_us = theirs / len(hands) * 1e6
        mismatches = sum(a != b for a, b in zip(ours_answers, os_answers, strict=True))
        verdict = "all equal" if not mismatches else f"{mismatches} DIFFER"
        lines.append(
            f"  {kind:<8}{len(hands):>7}{ours_us:>10.2f}{theirs_us:>14.2f}"
            f"{ours_us / theirs_us:>7.2f}x  {verdict}"
        )
    lines.append("  (ratio = ours / OpenSpiel; goal: random <= 3x, dense < 1x)")
    return lines


def play_hand(options: Any, seed: bytes, rng: random.Random) -> int:
    state = new_hand(options, seed)
    steps = 0
    while not is_over(state):
        seat = to_act(state)[0]
        state, _ = apply(state, seat, rng.choice(legal_actions(state, seat)))
        steps += 1
    return steps


def bench_random_play(rng: random.Random, hands: int) -> list[str]:
    lines = [f"  {'ruleset':<10}{'hands':>7}{'hands/s':>10}{'actions/hand':>14}{'actions/s':>11}"]
    lines.append("  " + "-" * (len(lines[0]) - 2))
    for ruleset in ("kalaro", "classic"):
        options = options_for(ruleset)
        start = time.perf_counter()
        steps = sum(play_hand(options, f"bench-{ruleset}-{n}".encode(), rng) for n in range(hands))
        elapsed = time.perf_counter() - start
        lines.append(
            f"  {ruleset:<10}{hands:>7}{hands / elapsed:>10.0f}{steps / hands:>14.1f}"
            f"{steps / elapsed:>11.0f}"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run (a few seconds)")
    parser.add_argument("--seed", type=int, default=2024, help="seed for the hands")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    if args.quick:
        sizes, repeats, play_hands = {"random": 3000, "dense": 300}, 2, 200
    else:
        sizes, repeats, play_hands = {"random": 50000, "dense": 5000}, 5, 2000
    print(f"Tongits benchmark (python {sys.version.split()[0]}, seed {args.seed})")
    print(
        "\nbest_deadwood vs OpenSpiel gin_rummy min_deadwood, mean per hand (best of "
        f"{repeats} runs)"
    )
    print("\n".join(bench_deadwood(rng, sizes, repeats)))
    print("\nRandom play (uniformly random legal actions until the hand ends)")
    print("\n".join(bench_random_play(rng, play_hands)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
