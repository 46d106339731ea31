"""Mahjong benchmark: ``is_complete`` against the ``mahjong`` library, and random-play speed.

    .venv/bin/python bench/bench_mahjong.py [--quick] [--seed N]

1. ``kalaro.games.tiles.is_complete`` against the riichi library's
   ``Agari.is_agari`` (``pip install mahjong``, a bench extra) on the same 14-tile
   (``sets=4``) and 17-tile (``sets=5``) hands. ``is_agari`` decomposes each suit
   generally, so it handles five sets as well as four (its docstring: "any number of
   melds plus 1 pair"); it also accepts seven pairs and thirteen orphans, which are not
   regular hands, so those shapes are left out. The answers must be identical; a
   sample is also checked against the slow exhaustive reference the unit tests use.
   Hands: complete ones (random sets + pair), complete ones with one tile changed
   (near misses), and random draws from the 136 tiles. Each side is timed from its
   natural input: ours from tile notation (``["1m", "2m", …]``), the library's from its
   34-array, built beforehand through its own ``TilesConverter.to_34_array`` from the
   136-tile ids. Every pass is timed, including our first one with a cold memo.
   Goal: mean time per hand at or below the library's.
2. ``is_complete`` with jokers (``wild`` 1-3, the ``joker`` rulesets' check), which
   the library has no counterpart for: our time per hand, and agreement with the
   exhaustive reference on a sample.
3. Random play: whole hands per second with uniformly random legal actions
   (``to_act`` + ``legal_actions`` + ``apply`` every step), and with a greedy bot,
   under each ruleset (``kalaro``, ``joker``, ``pinoy``).
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from kalaro.games import mahjong as mj
from kalaro.games.tiles import KINDS, is_complete, is_suited, tile_kind_index
from kalaro.games.tiles import complete as tiles_memo

_TERMINALS_AND_HONOURS = {0, 8, 9, 17, 18, 26, *range(27, 34)}


# -- hands ----------------------------------------------------------------------------


def _complete_hand(rng: random.Random, sets: int) -> list[str]:
    """Random sets (pongs or chows) and a pair, at most four of a kind."""
    while True:
        hand: list[str] = []
        for _ in range(sets):
            if rng.random() < 0.4:
                hand += [rng.choice(KINDS)] * 3
            else:
                suit, low = rng.choice("mps"), rng.randint(1, 7)
                hand += [f"{low + i}{suit}" for i in range(3)]
        hand += [rng.choice(KINDS)] * 2
        if max(Counter(hand).values()) <= 4:
            rng.shuffle(hand)
            return hand


def _near_miss(rng: random.Random, sets: int) -> list[str]:
    while True:
        hand = _complete_hand(rng, sets)
        hand[rng.randrange(len(hand))] = rng.choice(KINDS)
        if max(Counter(hand).values()) <= 4:
            return hand


def _random_draw(rng: random.Random, sets: int) -> list[str]:
    wall = [kind for kind in KINDS for _ in range(4)]
    return rng.sample(wall, 3 * sets + 2)


def _special_shape(counts: Sequence[int]) -> bool:
    """Seven pairs or thirteen orphans as ``is_agari`` sees them (not regular hands)."""
    seven_pairs = sum(1 for c in counts if c == 2) == 7
    orphans = all(counts[i] for i in _TERMINALS_AND_HONOURS)
    return seven_pairs or orphans


def to_136(hand: Sequence[str]) -> list[int]:
    """Our tiles as the library's 136 ids: kind index × 4 + which copy."""
    seen: Counter[str] = Counter()
    ids = []
    for tile in hand:
        ids.append(tile_kind_index(tile) * 4 + seen[tile])
        seen[tile] += 1
    return ids


def make_hands(rng: random.Random, sets: int, count: int) -> tuple[list[list[str]], int]:
    """``count`` hands of ``3 * sets + 2`` tiles, and how many special shapes were left out."""
    makers = (_complete_hand, _near_miss, _random_draw)
    hands: list[list[str]] = []
    left_out = 0
    while len(hands) < count:
        hand = makers[len(hands) % 3](rng, sets)
        counts = [0] * 34
        for tile in hand:
            counts[tile_kind_index(tile)] += 1
        if _special_shape(counts):
            left_out += 1
        else:
            hands.append(hand)
    return hands, left_out


# -- timing ---------------------------------------------------------------------------


def interleaved(
    first: Callable[[], object], second: Callable[[], object], count: int, passes: int
) -> tuple[list[float], list[float]]:
    """Seconds per item of each pass, the two sides alternating so load hits both alike."""
    times: tuple[list[float], list[float]] = ([], [])
    gc.disable()
    try:
        for _ in range(passes):
            for fn, out in ((first, times[0]), (second, times[1])):
                start = time.perf_counter()
                fn()
                out.append((time.perf_counter() - start) / count)
    finally:
        gc.enable()
    return times


def _ours(hands: list[list[str]], sets: int) -> None:
    for hand in hands:
        is_complete(hand, sets)


def _theirs(is_agari: Callable[[list[int]], bool], arrays: list[list[int]]) -> None:
    for array in arrays:
        is_agari(array)


def _reference() -> Callable[..., bool] | None:
    """The exhaustive checker from the unit tests, if the source tree is here."""
    root = Path(__file__).resolve().parents[1]
    if not (root / "tests" / "unit" / "mahjong" / "reference.py").exists():
        return None
    sys.path.insert(0, str(root))
    from tests.unit.mahjong.reference import reference_is_complete

    return reference_is_complete


def bench_is_complete(rng: random.Random, count: int, repeats: int) -> tuple[bool, bool]:
    """Print the table; (answers identical, ours at or below the library) for both sizes."""
    try:
        from mahjong.agari import Agari
        from mahjong.tile import TilesConverter
    except ImportError:
        print("the `mahjong` library is not installed: pip install -e '.[bench]'")
        return False, False
    reference = _reference()
    print(f"is_complete vs mahjong.Agari.is_agari: {count} hands per size, {repeats} passes")
    print("(mean µs per hand over all passes; ours starts with an empty memo, its first")
    print(" pass shown apart; 'reference': the exhaustive checker agrees on 600 hands)")
    header = (
        f"{'hand':<14}{'complete':>9}{'ours µs':>9}{'1st pass':>9}{'library µs':>11}"
        f"{'ratio':>7}  {'answers':<10}{'reference':<9}"
    )
    print(header)
    print("-" * len(header))
    identical = faster = True
    skipped = 0
    for sets in (4, 5):
        hands, left_out = make_hands(rng, sets, count)
        skipped += left_out
        arrays = [TilesConverter.to_34_array(to_136(hand)) for hand in hands]
        # Start our side cold, as a fresh worker would (the memo is private; a bench may).
        tiles_memo._suit_exact.clear()
        tiles_memo._honour_exact.clear()
        ours_times, theirs_times = interleaved(
            partial(_ours, hands, sets), partial(_theirs, Agari.is_agari, arrays), count, repeats
        )
        ours = [is_complete(hand, sets) for hand in hands]
        theirs = [Agari.is_agari(array) for array in arrays]
        same = ours == theirs
        checked = hands[:600]
        agrees = (
            "n/a"
            if reference is None
            else str(all(reference(h, sets) == is_complete(h, sets) for h in checked))
        )
        our_time = sum(ours_times) / repeats
        their_time = sum(theirs_times) / repeats
        label = f"{3 * sets + 2} (sets={sets})"
        print(
            f"{label:<14}{sum(ours):>9}{our_time * 1e6:>9.2f}{ours_times[0] * 1e6:>9.2f}"
            f"{their_time * 1e6:>11.2f}{our_time / their_time:>7.2f}  "
            f"{'identical' if same else 'DIFFER':<10}{agrees:<9}"
        )
        if not same:
            bad = next(h for h, a, b in zip(hands, ours, theirs, strict=True) if a != b)
            print(f"  first difference: {sorted(bad, key=tile_kind_index)}")
        identical = identical and same
        faster = faster and our_time <= their_time
    print(f"(left out: {skipped} seven-pairs / thirteen-orphans shapes, which is_agari accepts)")
    return identical, faster


def bench_wilds(rng: random.Random, count: int) -> bool:
    """Print ``is_complete`` times with 1-3 wilds; whether the reference agrees."""
    reference = _reference()
    print(f"\nis_complete with jokers: {count} hands per row (17 tiles, sets=5)")
    header = f"{'wild':<6}{'complete':>9}{'µs/hand':>9}  {'reference':<9}"
    print(header)
    print("-" * len(header))
    agrees_all = True
    for wild in (1, 2, 3):
        # Complete hands, near misses and random draws, with ``wild`` tiles taken out.
        hands = [hand[wild:] for hand in make_hands(rng, 5, count)[0]]
        start = time.perf_counter()
        answers = [is_complete(hand, 5, wild) for hand in hands]
        elapsed = (time.perf_counter() - start) / count
        agrees = "n/a"
        if reference is not None:
            ok = all(reference(h, 5, wild) == is_complete(h, 5, wild) for h in hands[:300])
            agrees_all = agrees_all and ok
            agrees = str(ok)
        print(f"{wild:<6}{sum(answers):>9}{elapsed * 1e6:>9.2f}  {agrees:<9}")
    return agrees_all


# -- random play ----------------------------------------------------------------------


def _greedy(state: mj.State, seat: int, rng: random.Random) -> Any:
    actions = mj.legal_actions(state, seat)
    for action in actions:
        if isinstance(action, mj.DeclareWin) or (
            isinstance(action, mj.Claim) and action.kind == "mahjong"
        ):
            return action
    melding = [a for a in actions if isinstance(a, mj.Claim | mj.DeclareKang)]
    if melding and rng.random() < 0.7:
        return rng.choice(melding)
    discards = [a for a in actions if isinstance(a, mj.Discard)]
    if not discards:
        return next(a for a in actions if not isinstance(a, mj.Claim | mj.DeclareKang))
    held = Counter(state.players[seat].hand)

    def keep(tile: str) -> float:
        score = 3.0 * (held[tile] - 1)
        if is_suited(tile):
            rank, suit = int(tile[0]), tile[1]
            score += sum(
                weight
                for distance, weight in ((1, 2.0), (2, 1.0))
                for near in (rank - distance, rank + distance)
                if 1 <= near <= 9 and held[f"{near}{suit}"]
            )
        return score + rng.random()

    return min(discards, key=lambda d: keep(d.tile))


def bench_random_play(rng: random.Random, hands: int) -> None:
    print(f"\nrandom play ({hands} hands per bot and ruleset)")
    header = f"{'ruleset':<8}{'bot':<9}{'hands/s':>9}{'actions/s':>11}{'actions/hand':>14}  endings"
    print(header)
    print("-" * len(header))
    bots: dict[str, Callable[[mj.State, int, random.Random], Any]] = {
        "uniform": lambda state, seat, r: r.choice(mj.legal_actions(state, seat)),
        "greedy": _greedy,
    }
    for ruleset in mj.RULESETS:
        options = mj.options_for(ruleset)
        for name, bot in bots.items():
            endings: Counter[str] = Counter()
            actions = 0
            start = time.perf_counter()
            for n in range(hands):
                state = mj.new_hand(options, f"bench-{n}".encode())
                while not mj.is_over(state):
                    seat = rng.choice(mj.to_act(state))
                    state, _ = mj.apply(state, seat, bot(state, seat, rng))
                    actions += 1
                result = mj.result(state)
                assert result is not None
                endings[result.ending] += 1
            elapsed = time.perf_counter() - start
            print(
                f"{ruleset:<8}{name:<9}{hands / elapsed:>9.0f}{actions / elapsed:>11.0f}"
                f"{actions / hands:>14.1f}  {dict(endings)}"
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer hands, for a smoke run")
    parser.add_argument("--seed", type=int, default=2026, help="seed for the hand generator")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    count, repeats, hands = (3_000, 2, 100) if args.quick else (30_000, 5, 1_000)
    print(f"Mahjong benchmark (python {sys.version.split()[0]}, seed {args.seed})\n")
    identical, faster = bench_is_complete(rng, count, repeats)
    wilds_agree = bench_wilds(rng, count // 10)
    bench_random_play(rng, hands)
    print()
    print("answers: identical" if identical else "answers: DIFFER (a bug, see above)")
    if not wilds_agree:
        print("answers with jokers: DIFFER from the reference (a bug, see above)")
    if args.quick:
        print("speed: a short run is mostly a cold memo; run without --quick for the verdict")
    else:
        print(f"speed goal (at or below the library): {'met' if faster else 'NOT met'}")
    return 0 if identical and wilds_agree else 1


if __name__ == "__main__":
    sys.exit(main())
