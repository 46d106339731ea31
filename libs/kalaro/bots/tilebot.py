"""The core the tile-game bots share: a hand as counts per kind, and its shanten, fast.

Both the Mahjong and the Ka Wu Xing bot think in **shanten** (tiles from ready; -1:
complete) and try every discard against every draw, so a :class:`Hand` answers "the
shanten with one tile more or less" with a few memo look-ups (:mod:`kalaro.bots.cuts`).
What differs between the games is only the tile set: its kinds and how they split into
groups (suits where runs exist, honours where they do not) — a :class:`Shape` — and
whether seven pairs is a winning shape.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kalaro.bots.cuts import fold, folds, group_id, group_ids, value, values

#: Seven pairs wins (Ka Wu Xing, with no melds).
_SEVEN_PAIRS = 7


@dataclass(frozen=True)
class Shape:
    """A game's tile kinds, cut into groups that are counted independently."""

    kinds: tuple[str, ...]
    #: ``(lo, hi)`` kind ranges: a suit of 9 (runs allowed) or a group of honours.
    groups: tuple[tuple[int, int], ...]
    index: dict[str, int] = field(init=False, repr=False)
    #: Each kind's group and that group's ``(lo, hi)``, in one look-up for the hot path.
    span: tuple[tuple[int, int, int], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", {kind: i for i, kind in enumerate(self.kinds)})
        span = [(g, lo, hi) for g, (lo, hi) in enumerate(self.groups) for _ in range(lo, hi)]
        object.__setattr__(self, "span", tuple(span))

    def counts(self, tiles: Iterable[str]) -> list[int]:
        """Copies of each kind in ``tiles``."""
        counts = [0] * len(self.kinds)
        index = self.index
        for tile in tiles:
            counts[index[tile]] += 1
        return counts


def _fold_all(fronts: Sequence[int]) -> int:
    """The fronts folded pairwise, neighbours first: ``((a b) (c d))``, ``((a b) c)``."""
    if len(fronts) == 4:
        return fold(fold(fronts[0], fronts[1]), fold(fronts[2], fronts[3]))
    known = fronts[0]
    for front in fronts[1:]:
        known = fold(known, front)
    return known


class Hand:
    """One concealed hand's counts and group fronts, for trying one-tile changes fast.

    A one-tile change only re-cuts that tile's group; the other groups are folded once
    per hand and reused. With ``seven`` (seven pairs wins), the shanten is also at most
    ``6 - pairs`` (four alike: two pairs).
    """

    __slots__ = ("_others", "_span", "counts", "fronts", "pairs", "sets", "seven", "shape")

    def __init__(self, shape: Shape, counts: list[int], sets: int, seven: bool = False) -> None:
        self.shape = shape
        self._span = shape.span
        self.counts = counts
        self.sets = sets
        self.seven = seven
        self.fronts = [group_id(tuple(counts[lo:hi])) for lo, hi in shape.groups]
        self.pairs = sum(c // 2 for c in counts) if seven else 0
        self._others: list[int | None] = [None] * len(shape.groups)

    def shanten(self) -> int:
        regular = value(_fold_all(self.fronts), self.sets)
        if self.seven:
            return min(regular, _SEVEN_PAIRS - 1 - self.pairs)
        return regular

    def _without_group(self, group: int) -> int:
        known = self._others[group]
        if known is None:
            rest = [self.fronts[g] for g in range(len(self.fronts)) if g != group]
            known = rest[0]
            for front in rest[1:]:
                known = fold(known, front)
            self._others[group] = known
        return known

    def changed(self, kind: int, delta: int) -> int:
        """Shanten with one copy of ``kind`` added (``delta`` 1) or taken out (-1)."""
        # The hot path of every decision: the memo look-ups are inlined on purpose.
        group, lo, hi = self._span[kind]
        counts = self.counts
        held = counts[kind]
        counts[kind] = held + delta
        key = tuple(counts[lo:hi])
        counts[kind] = held
        front = group_ids.get(key)
        if front is None:
            front = group_id(key)
        others = self._others[group]
        if others is None:
            others = self._without_group(group)
        both = folds.get((front, others))
        if both is None:
            both = fold(front, others)
        result = values.get((both, self.sets))
        if result is None:
            result = value(both, self.sets)
        if self.seven:
            pairs = self.pairs - held // 2 + (held + delta) // 2
            result = min(result, _SEVEN_PAIRS - 1 - pairs)
        return result

    def less(self, kind: int) -> Hand:
        """The hand with one copy of ``kind`` taken out."""
        counts = self.counts.copy()
        counts[kind] -= 1
        return Hand(self.shape, counts, self.sets, self.seven)

    def tiles(self) -> list[str]:
        """The tiles, in kind order."""
        kinds = self.shape.kinds
        return [kinds[k] for k, c in enumerate(self.counts) for _ in range(c)]


class _MeldSeen(Protocol):
    @property
    def tiles(self) -> tuple[str, ...] | None: ...


class _PlayerSeen(Protocol):
    @property
    def hand(self) -> tuple[str, ...] | None: ...
    @property
    def discards(self) -> tuple[str, ...]: ...
    @property
    def melds(self) -> Sequence[_MeldSeen]: ...


def live_counts(shape: Shape, players: Iterable[_PlayerSeen]) -> list[int]:
    """Copies of each kind a seat cannot see (still in the wall or other hands).

    In sight: every hand shown to the seat, every discard row and meld (a face-down
    kong's tiles are not).
    """
    seen: Counter[str] = Counter()
    for player in players:
        if player.hand is not None:
            seen.update(player.hand)
        seen.update(player.discards)
        for meld in player.melds:
            if meld.tiles is not None:
                seen.update(meld.tiles)
    return [max(0, 4 - seen[kind]) for kind in shape.kinds]
