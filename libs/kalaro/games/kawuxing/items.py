"""The score of a Ka Wu Xing win: its items, multiplied (base ×1), and the cap.

Some items depend on how the hand is read (Ka Wu Xing needs the winning 5 as the middle
of a 4-5-6 run, All Triplets needs every set a pong), so :func:`score_win` tries every
reading of the hand (seven pairs, and each way to split the concealed tiles into sets
and a pair) and keeps the one that scores most, as a player at the table would.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Literal

import msgspec

from kalaro.games.kawuxing.hands import WINNING_SETS, is_seven_pairs
from kalaro.games.kawuxing.state import Meld
from kalaro.games.tiles import DRAGONS, is_complete, is_suited, sort_key

ItemName = Literal[
    "all_triplets",
    "exposed_tile_hog",
    "concealed_tile_hog",
    "seven_pairs",
    "seven_pairs_two_identical",
    "seven_pairs_four_identical",
    "big_three_dragons",
    "small_three_dragons",
    "win_on_kong",
    "fire_on_kong",
    "rob_a_kong",
    "pure_one_suit",
    "one_in_hand",
    "ka_wu_xing",
    "win_on_last_tile",
]


#: Each item's multiplier, in the seed's order (which is also the order items are listed).
ITEM_MULTIPLIERS: dict[ItemName, int] = {
    "all_triplets": 2,
    "exposed_tile_hog": 2,
    "concealed_tile_hog": 4,
    "seven_pairs": 4,
    "seven_pairs_two_identical": 8,
    "seven_pairs_four_identical": 16,
    "big_three_dragons": 8,
    "small_three_dragons": 4,
    "win_on_kong": 2,
    "fire_on_kong": 2,
    "rob_a_kong": 2,
    "pure_one_suit": 4,
    "one_in_hand": 4,
    "ka_wu_xing": 2,
    "win_on_last_tile": 2,
}


_ITEM_ORDER = {name: i for i, name in enumerate(ITEM_MULTIPLIERS)}
#: The cap never cuts this item below its own value (the seed: "×8 except that 7 Pairs
#: with 4 Identical Pairs has ×16").
BIG_ITEM: ItemName = "seven_pairs_four_identical"
#: Where the winning tile came from.
Source = Literal["self_draw", "discard", "robbed_kong"]


class ScoreItem(msgspec.Struct, frozen=True, kw_only=True):
    """One score item of a win; ``tile`` names the kind for a tile hog."""

    name: ItemName
    multiplier: int
    tile: str | None = None


class Score(msgspec.Struct, frozen=True, kw_only=True):
    """The best reading of a winning hand: its items, their product, and the cap."""

    items: tuple[ScoreItem, ...]
    #: The product of the items' multipliers (1 for a chicken hand).
    raw: int
    #: The cap that applied (None: none), and the multiplier after it.
    cap: int | None
    multiplier: int

    @property
    def chicken(self) -> bool:
        """No score item: such a hand wins only by self-draw (unless shown)."""
        return not self.items


def _item(name: ItemName, tile: str | None = None) -> ScoreItem:
    return ScoreItem(name=name, multiplier=ITEM_MULTIPLIERS[name], tile=tile)


_Set = tuple[str, str, str]


@lru_cache(maxsize=8192)
def _readings(hand: tuple[str, ...]) -> tuple[tuple[tuple[_Set, ...], str], ...]:
    """Every way to split sorted concealed ``hand`` into sets (pongs, runs) and one pair."""
    counts = Counter(hand)
    kinds = sorted(counts, key=sort_key)
    found: list[tuple[tuple[_Set, ...], str]] = []
    sets: list[_Set] = []

    def walk(pair: str | None) -> None:
        lowest = next((kind for kind in kinds if counts[kind]), None)
        if lowest is None:
            if pair is not None:
                found.append((tuple(sets), pair))
            return
        # The lowest tile left is in the pair, a pong, or a run starting at it.
        if pair is None and counts[lowest] >= 2:
            counts[lowest] -= 2
            walk(lowest)
            counts[lowest] += 2
        if counts[lowest] >= 3:
            counts[lowest] -= 3
            sets.append((lowest, lowest, lowest))
            walk(pair)
            sets.pop()
            counts[lowest] += 3
        if is_suited(lowest) and int(lowest[0]) <= 7:
            rank, suit = int(lowest[0]), lowest[1]
            run: _Set = (lowest, f"{rank + 1}{suit}", f"{rank + 2}{suit}")
            if counts[run[1]] and counts[run[2]]:
                for tile in run:
                    counts[tile] -= 1
                sets.append(run)
                walk(pair)
                sets.pop()
                for tile in run:
                    counts[tile] += 1

    walk(None)
    return tuple(found)


def _is_pure_one_suit(tiles: Iterable[str]) -> bool:
    suits = {tile[1] for tile in tiles}
    return len(suits) == 1 and suits <= {"p", "s"}


def _standard_items(
    sets: tuple[_Set, ...], pair: str, hand: Counter[str], melds: Sequence[Meld], tile: str
) -> list[ScoreItem]:
    """The items that come from the hand's shape, for one 4-sets-and-a-pair reading."""
    items: list[ScoreItem] = []
    # Melds are pongs or kongs (no chow), so only the concealed sets can be runs.
    if all(s[0] == s[1] for s in sets):
        items.append(_item("all_triplets"))
    # Tile hogs: four of a kind in the hand that are not a kong.
    items.extend(
        _item("exposed_tile_hog", m.tiles[0])
        for m in melds
        if m.kind == "pong" and hand[m.tiles[0]]
    )
    items.extend(
        _item("concealed_tile_hog", kind) for kind in sorted(hand, key=sort_key) if hand[kind] == 4
    )
    dragon_sets = sum(m.tiles[0] in DRAGONS for m in melds) + sum(s[0] in DRAGONS for s in sets)
    if dragon_sets == 3:
        items.append(_item("big_three_dragons"))
    elif dragon_sets == 2 and pair in DRAGONS:
        items.append(_item("small_three_dragons"))
    if len(melds) == WINNING_SETS:
        items.append(_item("one_in_hand"))
    # Ka Wu Xing: the winning 5 is the middle of a 4-5-6 run of its suit.
    if is_suited(tile) and tile[0] == "5":
        suit = tile[1]
        if (f"4{suit}", tile, f"6{suit}") in sets:
            items.append(_item("ka_wu_xing"))
    return items


def _seven_pairs_items(hand: Counter[str]) -> list[ScoreItem]:
    # Four alike are two identical pairs; the tiers replace each other (and the tile hogs).
    quads = sum(count == 4 for count in hand.values())
    tier: ItemName = (
        "seven_pairs_four_identical"
        if quads >= 2
        else "seven_pairs_two_identical"
        if quads == 1
        else "seven_pairs"
    )
    return [_item(tier)]


def _situation_items(source: Source, after_kong: bool, last_tile: bool) -> list[ScoreItem]:
    items: list[ScoreItem] = []
    if source == "self_draw":
        if after_kong:
            items.append(_item("win_on_kong"))
        if last_tile:
            items.append(_item("win_on_last_tile"))
    elif source == "discard":
        if after_kong:
            items.append(_item("fire_on_kong"))
    else:
        items.append(_item("rob_a_kong"))
    return items


def _scored(items: list[ScoreItem], cap: int | None) -> Score:
    items.sort(key=lambda item: _ITEM_ORDER[item.name])
    raw = 1
    for item in items:
        raw *= item.multiplier
    if cap is not None and any(item.name == BIG_ITEM for item in items):
        cap = max(cap, ITEM_MULTIPLIERS[BIG_ITEM])
    return Score(
        items=tuple(items), raw=raw, cap=cap, multiplier=raw if cap is None else min(raw, cap)
    )


def score_win(
    hand: Sequence[str],
    melds: Sequence[Meld],
    tile: str,
    *,
    source: Source,
    after_kong: bool = False,
    last_tile: bool = False,
    cap: int | None = 8,
) -> Score | None:
    """The best-scoring reading of winning ``hand`` (concealed, with the winning ``tile``).

    None if the hand does not win. The best reading has the highest multiplier after the
    cap, then before it, so a hand with any item never reads as a chicken hand.
    """
    counts = Counter(hand)
    every = list(hand) + [t for meld in melds for t in meld.tiles]
    common = _situation_items(source, after_kong, last_tile)
    if _is_pure_one_suit(every):
        common.append(_item("pure_one_suit"))
    scores: list[Score] = []
    if is_seven_pairs(hand, melds):
        scores.append(_scored(_seven_pairs_items(counts) + common, cap))
    if is_complete(hand, sets=WINNING_SETS - len(melds)):
        for sets, pair in _readings(tuple(sorted(hand, key=sort_key))):
            shape = _standard_items(sets, pair, counts, melds, tile)
            scores.append(_scored(shape + common, cap))
    if not scores:
        return None
    return max(scores, key=lambda score: (score.multiplier, score.raw))
