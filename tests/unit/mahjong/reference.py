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


# -- the joker rulesets' patterns, by brute force ---------------------------------------


def _groups_with(tile: str) -> list[tuple[str, ...]]:
    """Every set (pong or chow) that holds ``tile``."""
    return [group for group in _PONGS + _CHOWS if tile in group]


def _fillings(
    counts: Counter[str], group: tuple[str, ...], wild: int
) -> list[tuple[Counter[str], int]]:
    """Every way to take ``group`` from ``counts``: each tile real (if held) or a wild."""
    out = []
    for wilds in range(min(wild, len(group)) + 1):
        for stand_ins in itertools.combinations(range(len(group)), wilds):
            rest = Counter(counts)
            rest.subtract(tile for i, tile in enumerate(group) if i not in stand_ins)
            if all(c >= 0 for c in rest.values()):
                out.append((+rest, wild - wilds))
    return out


def reference_split(tiles: Counter[str] | list[str], sets: int, pairs: int, wild: int) -> bool:
    """Whether ``tiles`` + ``wild`` wilds make ``sets`` sets and ``pairs`` pairs (pairs may
    be alike), trying every group the lowest tile could belong to."""
    counts = Counter(tiles)
    if sum(counts.values()) + wild != 3 * sets + 2 * pairs or sets < 0 or pairs < 0:
        return False
    return _split(tuple(sorted(counts.items())), sets, pairs, wild)


@cache
def _split(hand: tuple[tuple[str, int], ...], sets: int, pairs: int, wild: int) -> bool:
    counts = Counter(dict(hand))
    if not counts:
        return wild == 3 * sets + 2 * pairs
    lowest = min(counts, key=KINDS.index)
    options: list[tuple[tuple[str, ...], int, int]] = []
    if sets:
        options += [(group, sets - 1, pairs) for group in _groups_with(lowest)]
    if pairs:
        options.append(((lowest, lowest), sets, pairs - 1))
    for group, left_sets, left_pairs in options:
        others = list(group)
        others.remove(lowest)
        start = Counter(counts)
        start[lowest] -= 1
        for rest, left in _fillings(+start, tuple(others), wild):
            if _split(tuple(sorted(rest.items())), left_sets, left_pairs, left):
                return True
    return False


def _eskalera_rests(counts: Counter[str], wild: int) -> list[tuple[Counter[str], int]]:
    """Every way to take 1-9 of one suit from ``counts`` (each number real or wild)."""
    out = []
    for suit in "mps":
        out += _fillings(counts, tuple(f"{n}{suit}" for n in range(1, 10)), wild)
    return out


def reference_pattern(tiles: list[str], wild: int) -> str | None:
    """The pattern of a concealed 17-tile hand, in detection order (no melds)."""
    counts = Counter(tiles)
    if any(reference_split(rest, 2, 1, left) for rest, left in _eskalera_rests(counts, wild)):
        return "Eskalera"
    if reference_split(counts, 1, 7, wild):
        return "Seven Pairs"
    if reference_split(counts, 5, 1, wild):
        return "Regular"
    return None


def _marked(counts: Counter[str], tile: str, wild: int, sets: int, pairs: int) -> bool:
    """Whether ``counts`` + ``tile`` split into ``sets`` sets and ``pairs`` pairs with
    ``tile`` in a set, or paired with a real tile (never with a wild)."""
    if pairs and counts[tile]:
        rest = Counter(counts)
        rest[tile] -= 1
        if reference_split(+rest, sets, pairs - 1, wild):
            return True
    if not sets:
        return False
    for group in _groups_with(tile):
        others = list(group)
        others.remove(tile)
        for rest, left in _fillings(counts, tuple(others), wild):
            if reference_split(rest, sets - 1, pairs, left):
                return True
    return False


def reference_claim(tiles: list[str], tile: str, wild: int) -> str | None:
    """The pattern a 16-tile concealed hand makes with another player's ``tile``, where
    ``tile`` is not a reserved joker's partner; None for a hand waiting in Joker Eye
    shape whatever the tile (Joker Eye is draw-only)."""
    if any(reference_joker_eye(tiles, wild, p) for p in ("Regular", "Seven Pairs", "Eskalera")):
        return None
    counts = Counter(tiles)
    suit = tile[1]
    if suit in "mps":
        with_tile = counts + Counter([tile])
        run = tuple(f"{n}{suit}" for n in range(1, 10) if f"{n}{suit}" != tile)
        # the tile is one of the Eskalera's numbers
        start = Counter(with_tile)
        start[tile] -= 1
        for rest, left in _fillings(+start, run, wild):
            if reference_split(rest, 2, 1, left):
                return "Eskalera"
    if any(_marked(rest, tile, left, 2, 1) for rest, left in _eskalera_rests(counts, wild)):
        return "Eskalera"
    if _marked(counts, tile, wild, 1, 7):
        return "Seven Pairs"
    if _marked(counts, tile, wild, 5, 1):
        return "Regular"
    return None


def reference_joker_eye(tiles: list[str], wild: int, pattern: str) -> bool:
    """Whether a 16-tile concealed hand waits with a reserved joker as the eye."""
    if not wild:
        return False
    counts = Counter(tiles)
    if pattern == "Regular":
        return reference_split(counts, 5, 0, wild - 1)
    if pattern == "Seven Pairs":
        return reference_split(counts, 1, 6, wild - 1)
    return any(reference_split(r, 2, 0, w) for r, w in _eskalera_rests(counts, wild - 1))
