"""A slow, obviously-correct winning-hand check to test the fast one against.

Takes the lowest remaining tile and tries every group it could belong to (the pair, its
pong, each chow through it), each other tile of the group either real or a wild.
Exponential, memoised; fine for test-sized hands.
"""

from __future__ import annotations

import itertools
from collections import Counter
from functools import cache

from kalaro.games.tiles import KINDS, is_suited

_PONGS = [(k, k, k) for k in KINDS]
_CHOWS = [
    (k, f"{int(k[0]) + 1}{k[1]}", f"{int(k[0]) + 2}{k[1]}")
    for k in KINDS
    if is_suited(k) and int(k[0]) <= 7
]


def reference_is_complete(tiles: list[str], sets: int, wild: int = 0) -> bool:
    """Whether ``tiles`` + ``wild`` wilds split into ``sets`` sets and one pair."""
    if len(tiles) + wild != 3 * sets + 2:
        return False
    return _search(tuple(sorted(Counter(tiles).items())), sets, True, wild)


@cache
def _search(hand: tuple[tuple[str, int], ...], sets: int, pair: bool, wild: int) -> bool:
    counts = dict(hand)
    if not counts:
        # Whatever is left is wilds alone: they make any pong or pair.
        return wild == 3 * sets + (2 if pair else 0)
    lowest = min(counts, key=KINDS.index)
    groups: list[tuple[tuple[str, ...], bool]] = [
        (group, False) for group in _PONGS + _CHOWS if lowest in group
    ]
    if pair:
        groups.append(((lowest, lowest), True))
    for group, is_pair in groups:
        if not is_pair and sets == 0:
            continue
        others = list(group)
        others.remove(lowest)
        # Each other tile of the group: real (if held) or a wild.
        for real in itertools.product((True, False), repeat=len(others)):
            rest = Counter(counts)
            rest[lowest] -= 1
            wilds = 0
            for tile, is_real in zip(others, real, strict=True):
                if is_real:
                    rest[tile] -= 1
                else:
                    wilds += 1
            if wilds > wild or any(c < 0 for c in rest.values()):
                continue
            key = tuple(sorted((k, c) for k, c in rest.items() if c))
            if _search(key, sets - (not is_pair), pair and not is_pair, wild - wilds):
                return True
    return False
