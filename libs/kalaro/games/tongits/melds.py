"""Melds (sets and runs) and deadwood: what a group of cards is, and the best a hand can do.

A **set** is 3 or 4 cards of one rank; a **run** is 3 or more consecutive cards of one
suit, aces low (A-2-3 yes, Q-K-A no, no wrapping). A card belongs to one meld only.

:func:`best_deadwood` is the minimum deadwood of a hand over every partition into
melds. It is exact and built for speed, because bots call it in their inner loop:

* Within one suit, once the set cards are taken out, runs are easy: every maximal
  stretch of 3+ consecutive cards is a run (a run may be any length), and nothing
  shorter can be. So the deadwood left in a suit is a lookup in a 2^13 table.
* Only ranks with 3+ cards can hold a set, and at most one set per rank. A card that
  cannot be in any run of its suit gains nothing by staying out of a set, which
  usually leaves one choice per rank; the remaining choices (at most a few hundred
  for a 13-card hand) are enumerated as removal masks and scored with four lookups.

Hands are packed into one int with 16 bits per suit (bit ``16 * suit + rank``) so a
suit is a shift and a mask away.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from itertools import combinations
from typing import Literal

from kalaro.games.cards import DECK, card_index, rank_value

MeldKind = Literal["set", "run"]

_SUIT_BITS = 0x1FFF  # 13 ranks in one 16-bit lane

#: bit of each card in the packed hand (16-bit lane per suit)
_BIT: dict[str, int] = {name: 1 << (16 * (i // 13) + i % 13) for i, name in enumerate(DECK)}


def _run_cards(mask: int) -> int:
    """The cards of a one-suit rank mask that lie in a stretch of 3+ consecutive ranks."""
    starts = mask & (mask >> 1) & (mask >> 2)
    return starts | (starts << 1) | (starts << 2)


def _mask_value(mask: int) -> int:
    return sum(rank_value(r) for r in range(13) if mask >> r & 1)


#: run cards of every one-suit mask
_RUN_CARDS: tuple[int, ...] = tuple(_run_cards(m) for m in range(1 << 13))
#: deadwood of every one-suit mask when only runs may be formed
_RUN_DEAD: tuple[int, ...] = tuple(_mask_value(m & ~_RUN_CARDS[m]) for m in range(1 << 13))


def best_deadwood(cards: Collection[str]) -> int:
    """Minimum deadwood of ``cards`` over all partitions into sets and runs.

    ``best_deadwood(["AS", "2S", "3S", "10H"]) == 10``. Raises ``ValueError`` for bad
    notation or a repeated card.
    """
    try:
        packed = sum(map(_BIT.__getitem__, cards))
    except (KeyError, TypeError):
        for name in cards:
            card_index(name)  # raises with the offending card named
        raise
    if packed.bit_count() != len(cards):
        raise ValueError(f"repeated card in {list(cards)!r}")
    return _best_deadwood_packed(packed)


def _best_deadwood_packed(packed: int) -> int:
    s = packed & _SUIT_BITS
    h = (packed >> 16) & _SUIT_BITS
    d = (packed >> 32) & _SUIT_BITS
    c = packed >> 48
    dead = _RUN_DEAD
    # ranks held in at least three suits: the only places a set can be
    set_ranks = (s & h & (d | c)) | (d & c & (s | h))
    if not set_ranks:
        return dead[s] + dead[h] + dead[d] + dead[c]

    run_cards = _RUN_CARDS
    capable = run_cards[s] | run_cards[h] << 16 | run_cards[d] << 32 | run_cards[c] << 48
    forced = 0  # set cards taken in every partition worth considering
    choices: list[int] = [0]  # alternative sets of removed (set) cards
    while set_ranks:
        low = set_ranks & -set_ranks
        set_ranks ^= low
        rank_cards = packed & (low | low << 16 | low << 32 | low << 48)
        free = rank_cards & capable  # set cards that could instead sit in a run
        if not free:
            forced |= rank_cards
            continue
        if rank_cards.bit_count() == 3:
            options = [0, rank_cards]
        else:
            # the set of four, or a set of three leaving one run-capable card out
            options = [rank_cards]
            f = free
            while f:
                bit = f & -f
                f ^= bit
                options.append(rank_cards ^ bit)
            if free.bit_count() > 1:
                options.append(0)  # no set: two or more cards may go to runs
        choices = [x | o for x in choices for o in options]

    rest = packed ^ forced
    m = _SUIT_BITS
    return min(
        [
            dead[(y := rest ^ x) & m] + dead[(y >> 16) & m] + dead[(y >> 32) & m] + dead[y >> 48]
            for x in choices
        ]
    )


# --------------------------------------------------------------------------------------
# Meld recognition and enumeration (card notation in, card notation out)


def meld_kind(cards: Sequence[str]) -> MeldKind | None:
    """``"set"`` or ``"run"`` if ``cards`` (any order) form a valid meld, else ``None``."""
    if len(cards) < 3 or len(set(cards)) != len(cards):
        return None
    indices = sorted(card_index(name) for name in cards)
    ranks = [i % 13 for i in indices]
    if len(cards) <= 4 and len(set(ranks)) == 1:
        return "set"
    suit = indices[0] // 13
    if all(i // 13 == suit for i in indices) and ranks == list(
        range(ranks[0], ranks[0] + len(ranks))
    ):
        return "run"
    return None


def sort_meld(cards: Iterable[str]) -> tuple[str, ...]:
    """A meld's cards in table order: runs low to high, sets by suit (S H D C)."""
    return tuple(sorted(cards, key=lambda name: (card_index(name) % 13, card_index(name))))


class HandGrid:
    """A hand laid out by rank and by suit, built once and shared by the enumerations."""

    __slots__ = ("by_rank", "rows")

    def __init__(self, hand: Iterable[str]) -> None:
        #: ``by_rank[r]``: the hand's cards of rank r, in suit order
        self.by_rank: list[list[str]] = [[] for _ in range(13)]
        #: ``rows[s][r]``: the card of suit s and rank r, or None
        self.rows: list[list[str | None]] = [[None] * 13 for _ in range(4)]
        for i in sorted(map(card_index, hand)):
            name = DECK[i]
            self.by_rank[i % 13].append(name)
            self.rows[i // 13][i % 13] = name


def hand_melds(hand: Iterable[str] | HandGrid) -> list[tuple[str, ...]]:
    """Every meld that can be made from ``hand`` alone (sets first, then runs)."""
    grid = hand if isinstance(hand, HandGrid) else HandGrid(hand)
    out: list[tuple[str, ...]] = []
    for group in grid.by_rank:
        if len(group) >= 3:
            out.extend(combinations(group, 3))
            if len(group) == 4:
                out.append(tuple(group))
    for row in grid.rows:
        for lo in range(11):
            hi = lo
            while hi < 13 and row[hi] is not None:
                if hi - lo >= 2:
                    out.append(tuple(c for c in row[lo : hi + 1] if c is not None))
                hi += 1
    return out


def four_of_a_kinds(hand: Iterable[str] | HandGrid) -> list[tuple[str, ...]]:
    """Every complete rank (all four suits) held in ``hand``."""
    grid = hand if isinstance(hand, HandGrid) else HandGrid(hand)
    return [tuple(group) for group in grid.by_rank if len(group) == 4]


def discard_melds(hand: Iterable[str] | HandGrid, discard: str) -> list[tuple[str, ...]]:
    """Every choice of hand cards that forms a new meld together with ``discard``.

    Each choice has 2+ hand cards (the discard itself is not listed).
    """
    grid = hand if isinstance(hand, HandGrid) else HandGrid(hand)
    d = card_index(discard)
    rank, suit = d % 13, d // 13
    out: list[tuple[str, ...]] = []
    mates = grid.by_rank[rank]
    for size in (2, 3):
        out.extend(combinations(mates, size))
    row = list(grid.rows[suit])
    row[rank] = discard
    lo = rank
    while lo > 0 and row[lo - 1] is not None:
        lo -= 1
    hi = rank
    while hi < 12 and row[hi + 1] is not None:
        hi += 1
    for start in range(lo, rank + 1):
        for end in range(max(rank, start + 2), hi + 1):
            out.append(tuple(c for c in row[start : end + 1] if c is not None and c != discard))
    return out


def layoffs(
    hand: Iterable[str] | HandGrid, meld: Sequence[str], kind: MeldKind
) -> list[tuple[str, ...]]:
    """Every non-empty group of hand cards that can be laid off (sapaw) on ``meld``."""
    grid = hand if isinstance(hand, HandGrid) else HandGrid(hand)
    first = card_index(meld[0])
    if kind == "set":
        if len(meld) >= 4:
            return []
        return [(name,) for name in grid.by_rank[first % 13]]
    ranks = [card_index(name) % 13 for name in meld]
    row = grid.rows[first // 13]
    low, high = min(ranks), max(ranks)
    below: list[str] = []  # hand cards extending the run downwards, nearest first
    r = low - 1
    while r >= 0 and (name := row[r]) is not None:
        below.append(name)
        r -= 1
    above: list[str] = []
    r = high + 1
    while r < 13 and (name := row[r]) is not None:
        above.append(name)
        r += 1
    out: list[tuple[str, ...]] = []
    for a in range(len(below) + 1):
        for b in range(len(above) + 1):
            if a or b:
                out.append(tuple(reversed(below[:a])) + tuple(above[:b]))
    return out
