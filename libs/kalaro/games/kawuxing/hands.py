"""Ka Wu Xing hands: the 84 tiles, winning patterns and waits.

A winning hand is 4 sets and a pair (a set is a pong, a kong, or a run of three in one
suit held concealed: there is no chow claim, but runs in the hand are sets all the
same), or seven pairs. The check itself is :func:`kalaro.games.tiles.is_complete`. The
score items of a win are :mod:`~kalaro.games.kawuxing.items`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

from kalaro.games.kawuxing.state import Meld
from kalaro.games.tiles import DRAGONS, is_complete, sort_tiles, tile_set

#: The 21 kinds: dots, bamboo, then the dragons White Green Red; no characters or winds.
KINDS: tuple[str, ...] = (
    tuple(f"{rank}p" for rank in range(1, 10))
    + tuple(f"{rank}s" for rank in range(1, 10))
    + DRAGONS
)
#: The 84 tiles, four of each kind, in the order the seeded shuffle starts from.
TILES_84: tuple[str, ...] = tile_set(KINDS)
#: Concealed tiles before the turn's draw; a winning hand is 4 sets + 1 pair.
HAND_SIZE = 13
WINNING_SETS = 4


# -- winning patterns and waits ------------------------------------------------------------


def is_seven_pairs(hand: Sequence[str], melds: Sequence[Meld]) -> bool:
    """Seven pairs: 14 concealed tiles, every kind an even count (four alike = two pairs)."""
    if melds or len(hand) != 2 * 7:
        return False
    return all(count % 2 == 0 for count in Counter(hand).values())


def is_winning(hand: Sequence[str], melds: Sequence[Meld]) -> bool:
    """Whether concealed ``hand`` with ``melds`` wins: 4 sets + a pair, or seven pairs."""
    return is_complete(hand, sets=WINNING_SETS - len(melds)) or is_seven_pairs(hand, melds)


# Waits are asked on every turn (the Show Hand options try every discard), so they are
# worked out per group of tiles — dots, bamboo, dragons — whose answers are memoised: a
# hand is complete when every group splits into sets, exactly one of them with the pair,
# and one more (or one other) tile changes at most two groups.

_SETS, _PAIR, _NEITHER = 0, 1, 2
_GROUPS: tuple[tuple[str, ...], ...] = (KINDS[:9], KINDS[9:18], KINDS[18:])
_PLACE: dict[str, tuple[int, int]] = {
    kind: (g, i) for g, group in enumerate(_GROUPS) for i, kind in enumerate(group)
}
_Counts = tuple[int, ...]


def _splits_into_sets(counts: _Counts) -> bool:
    """Pongs and runs only (runs in a suit, i.e. a group of nine). Lowest rank first:
    three runs on the same ranks are three pongs, so ``count % 3`` runs start there."""
    if len(counts) != 9:
        return all(count % 3 == 0 for count in counts)
    started_before = started_at_prev = 0
    for rank, count in enumerate(counts):
        left = count - started_before - started_at_prev
        if left < 0:
            return False
        new_runs = left % 3
        if new_runs and rank > 6:
            return False
        started_before, started_at_prev = started_at_prev, new_runs
    return True


@lru_cache(maxsize=1 << 16)
def _status(counts: _Counts) -> int:
    """Whether a group splits into sets only, into sets and the pair, or neither."""
    remainder = sum(counts) % 3
    if remainder == 0:
        return _SETS if _splits_into_sets(counts) else _NEITHER
    if remainder == 2:
        for i, count in enumerate(counts):
            if count >= 2:
                rest = (*counts[:i], count - 2, *counts[i + 1 :])
                if _splits_into_sets(rest):
                    return _PAIR
    return _NEITHER


def _plus(counts: _Counts, i: int) -> _Counts:
    return (*counts[:i], counts[i] + 1, *counts[i + 1 :])


@lru_cache(maxsize=1 << 16)
def _adds(counts: _Counts) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The tiles (indices) whose addition leaves the group in sets only, and in sets + pair."""
    found: tuple[list[int], list[int]] = ([], [])
    for i in range(len(counts)):
        status = _status(_plus(counts, i))
        if status != _NEITHER:
            found[status].append(i)
    return tuple(found[_SETS]), tuple(found[_PAIR])


def _group_counts(hand: Iterable[str]) -> list[_Counts]:
    counts = [[0] * len(group) for group in _GROUPS]
    for tile in hand:
        g, i = _PLACE[tile]
        counts[g][i] += 1
    return [tuple(c) for c in counts]


def _standard_waits(groups: list[_Counts]) -> set[str]:
    """Kinds completing a hand of 3n + 1 tiles into sets and a pair (no fifth-copy check)."""
    statuses = [_status(g) for g in groups]
    found: set[str] = set()
    for g, group in enumerate(groups):
        others = statuses[:g] + statuses[g + 1 :]
        if _NEITHER in others:
            continue
        pairs = others.count(_PAIR)
        if pairs > 1:
            continue
        # The new tile's group takes the pair unless another group has it already.
        found.update(_GROUPS[g][i] for i in _adds(group)[_SETS if pairs else _PAIR])
    return found


def waits(hand: Sequence[str], melds: Sequence[Meld]) -> list[str]:
    """The kinds that would complete a hand holding one tile fewer than a winning hand.

    A kind of which the hand already holds all four (counting its own melds) is no wait.
    """
    if len(hand) + 3 * len(melds) != HAND_SIZE:
        return []
    held = Counter(hand)
    for meld in melds:
        held.update(meld.tiles)
    found = _standard_waits(_group_counts(hand))
    if not melds:
        odd = [kind for kind, count in Counter(hand).items() if count % 2]
        if len(odd) == 1:  # six pairs and a single: seven pairs wait on the single
            found.add(odd[0])
    return [kind for kind in sort_tiles(found) if held[kind] < 4]


@lru_cache(maxsize=4096)
def waiting_discards(hand: tuple[str, ...], melds: tuple[Meld, ...]) -> tuple[str, ...]:
    """The discards after which ``hand`` (holding the turn's extra tile) is waiting."""
    held = Counter(hand)
    for meld in melds:
        held.update(meld.tiles)
    groups = _group_counts(hand)
    odd = [kind for kind, count in held.items() if count % 2]
    # One tile out and one in change at most two groups, so the third must already split
    # into sets (and maybe the pair); with two groups that do not, the discard comes from
    # one of them. (Seven pairs is checked on its own.)
    bad = [g for g, group in enumerate(groups) if _status(group) == _NEITHER]
    if len(bad) == len(groups) and (melds or len(odd) > 2):
        return ()
    found: list[str] = []
    for tile in sort_tiles(set(hand)):
        g, i = _PLACE[tile]
        if len(bad) >= 2 and g not in bad and (melds or len(odd) > 2):
            continue
        rest = list(groups)
        rest[g] = (*rest[g][:i], rest[g][i] - 1, *rest[g][i + 1 :])
        ready = _standard_waits(rest)
        if not melds:
            # Seven pairs: after the discard exactly one kind is odd, the wait.
            after = [k for k in odd if k != tile] if tile in odd else [*odd, tile]
            if len(after) == 1:
                ready.add(after[0])
        held[tile] -= 1
        if any(held[kind] < 4 for kind in ready):
            found.append(tile)
        held[tile] += 1
    return tuple(found)
