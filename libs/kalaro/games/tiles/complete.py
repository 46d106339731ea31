"""The winning-hand check on tiles: complete hands, sets, waits, with or without wilds.

:func:`is_complete` answers "do these concealed tiles, plus ``wild`` jokers, make
``sets`` sets and one pair?" — a set being a pong (three alike) or a chow (three in a row
of one suit; never honours). It works on per-group count vectors with memoised answers
per suit, so after warm-up a check is a handful of dictionary look-ups.
:func:`is_sets` asks the same without the pair; :func:`waits` lists the kinds that
would complete a hand.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from kalaro.games.tiles.notation import HONOURS, KINDS, SUITS, is_suited, sort_tiles

# Wild-count answers use this for "cannot be done with any number of wilds" (never
# happens for a single group, since wilds can stand for anything, but keeps min() total).
_NEVER = 1 << 30
_SEQUENCES = (list, tuple)

# ---------------------------------------------------------------------------------------
# The winning-hand check.
#
# A hand is complete when each group (suits m, p, s; honours) splits into sets, exactly one
# group also holding the pair. A hand is packed into one int, the sum of its tiles'
# weights: 3 bits per kind, suits at bits 0, 27 and 54 (ranks 1-9), honours from bit 81.
# Summing is a C-level loop, and each group's slice is the key of a memo shared by the
# three suits (they split alike). With more than seven of a kind a slice overflows into
# its neighbour; the memo keeps each group's tile count so that is caught, and such
# (impossible) hands take the slower unpacked path.

_SUIT_BITS = 27
_SUIT_MASK = (1 << _SUIT_BITS) - 1
_HONOUR_SHIFT = 3 * _SUIT_BITS
_WEIGHT: dict[str, int] = {
    **{
        f"{rank}{suit}": 1 << (g * _SUIT_BITS + 3 * (rank - 1))
        for g, suit in enumerate(SUITS)
        for rank in range(1, 10)
    },
    **{f"{n}z": 1 << (_HONOUR_SHIFT + 3 * (n - 1)) for n in range(1, 8)},
}

# Without wilds a group splits into sets only, sets and the pair, or neither. A memo entry
# is ``tiles << 5 | status``, statuses chosen so that summing the four groups' entries
# gives the hand's tile count in the high bits and, in the low five, exactly 1 when the
# hand is complete (one group with the pair, none that fails).
_SETS_ONLY = 0
_SETS_AND_PAIR = 1
_NEITHER = 4
_STATUS_MASK = 31

_suit_exact: dict[int, int] = {}
_honour_exact: dict[int, int] = {}
# With wilds: (tiles, fewest wilds without the pair, fewest with the pair in this group).
_suit_wild: dict[int, tuple[int, int, int]] = {}
_honour_wild: dict[int, tuple[int, int, int]] = {}
# Distinct group shapes are bounded, but a long-lived worker should not grow without
# limit on junk input; starting over is cheap.
_MEMO_LIMIT = 200_000


def _digits(key: int, width: int) -> list[int]:
    return [(key >> (3 * i)) & 7 for i in range(width)]


def _suit_splits_into_sets(counts: list[int]) -> bool:
    """Whether a suit's counts split into pongs and chows only.

    Three chows on the same ranks equal three pongs, so only ``count % 3`` chows need to
    start at each rank, lowest first; the split exists iff that never goes negative.
    """
    started_before, started_at_prev = 0, 0  # chows that still need this rank
    for rank, count in enumerate(counts):
        left = count - started_before - started_at_prev
        if left < 0:
            return False
        new_chows = left % 3
        if new_chows and rank > 6:  # a chow starting at 8 or 9 runs off the suit
            return False
        started_before, started_at_prev = started_at_prev, new_chows
    return True


def _suit_status(counts: list[int]) -> int:
    remainder = sum(counts) % 3
    if remainder == 0:
        return _SETS_ONLY if _suit_splits_into_sets(counts) else _NEITHER
    if remainder == 2:
        # Every set adds 0 (mod 3) to the rank-weighted sum (a pong 3r, a chow 3r + 3),
        # so the pair's rank p satisfies 2p = sum (mod 3), p = 2 * sum: at most three
        # ranks to try.
        rank_sum = sum(rank * count for rank, count in enumerate(counts))
        for rank in range(2 * rank_sum % 3, 9, 3):
            if counts[rank] >= 2:
                counts[rank] -= 2
                found = _suit_splits_into_sets(counts)
                counts[rank] += 2
                if found:
                    return _SETS_AND_PAIR
    return _NEITHER


def _honour_status(counts: list[int]) -> int:
    # Honours never chow: each kind is pongs, or pongs and the pair.
    if any(c % 3 == 1 for c in counts):
        return _NEITHER
    pairs = sum(1 for c in counts if c % 3 == 2)
    return _NEITHER if pairs > 1 else _SETS_AND_PAIR if pairs else _SETS_ONLY


def _exact_entry(key: int, honours: bool) -> int:
    """Memo miss: work out a group's status from its key."""
    memo = _honour_exact if honours else _suit_exact
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    # A group splits the same wherever its pattern sits (2-3-4 like 1-2-3), so a new key
    # first looks for its pattern moved down to the lowest rank.
    lowest = ((key & -key).bit_length() - 1) // 3
    base = key >> 3 * lowest
    entry = memo.get(base)
    if entry is None:
        counts = _digits(base, 7 if honours else 9)
        status = _honour_status(counts) if honours else _suit_status(counts)
        entry = memo[base] = sum(counts) << 5 | status
    memo[key] = entry
    return entry


def _fewest_wilds(counts: tuple[int, ...], chows: bool, pair: bool, memo: dict[object, int]) -> int:
    """Fewest wilds that complete ``counts`` into sets (and the pair, if ``pair``).

    Take the lowest tile present; it belongs to the pair, a pong, or a chow. A real tile
    is always used before a wild where one is present (swapping a wild for a real tile
    of the same kind never hurts), and a chow that reaches below the lowest tile only
    adds wilds, so chows are tried from the lowest tile upward, wilds filling the gaps.
    """
    lowest = next((i for i, c in enumerate(counts) if c), None)
    if lowest is None:
        return 2 if pair else 0
    memo_key = (counts, pair)
    known = memo.get(memo_key)
    if known is not None:
        return known
    rest = list(counts)
    take = min(counts[lowest], 3)
    rest[lowest] -= take
    best = 3 - take + _fewest_wilds(tuple(rest), chows, pair, memo)
    rest[lowest] += take
    if pair:
        take = min(counts[lowest], 2)
        rest[lowest] -= take
        best = min(best, 2 - take + _fewest_wilds(tuple(rest), chows, False, memo))
        rest[lowest] += take
    if chows:
        # The chow holding the lowest tile starts at it, or lower when it is an 8 or 9.
        start = min(lowest, len(counts) - 3)
        used = [rank for rank in range(start, start + 3) if rank == lowest or counts[rank] > 0]
        for rank in used:
            rest[rank] -= 1
        best = min(best, 3 - len(used) + _fewest_wilds(tuple(rest), chows, pair, memo))
    memo[memo_key] = best
    return best


def _wild_needs(counts: list[int], honours: bool) -> tuple[int, int, int]:
    """A group's (tiles, fewest wilds without the pair, fewest with the pair here)."""
    if honours:
        # Honour kinds never combine, so each kind is completed on its own.
        without = [(-c) % 3 for c in counts]
        # Extra wilds if the pair is on this kind: one or two of its tiles go to the pair.
        extra = [
            min(2 - j + (j - c) % 3 for j in (1, 2) if j <= c) - w
            for c, w in zip(counts, without, strict=True)
            if c
        ]
        return sum(counts), sum(without), sum(without) + min(extra) if extra else _NEVER
    memo: dict[object, int] = {}
    return (
        sum(counts),
        _fewest_wilds(tuple(counts), True, False, memo),
        _fewest_wilds(tuple(counts), True, True, memo),
    )


def _wild_entry(key: int, honours: bool) -> tuple[int, int, int]:
    memo = _honour_wild if honours else _suit_wild
    entry = memo.get(key)
    if entry is None:
        entry = _wild_needs(_digits(key, 7 if honours else 9), honours)
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        memo[key] = entry
    return entry


def _enough_wilds(needs: list[tuple[int, int, int]], wild: int) -> bool:
    """Whether ``wild`` wilds complete the groups; the pair is in one group or all wild."""
    without_pair = sum(need[1] for need in needs)
    fewest = without_pair + 2
    for _, alone, with_pair in needs:
        fewest = min(fewest, without_pair - alone + with_pair)
    return fewest <= wild


def _is_complete_unpacked(tiles: Sequence[str], wild: int) -> bool:
    """The same check from plain counts, for hands with more than seven of a kind."""
    held = Counter(tiles)
    groups = [[held[f"{rank}{suit}"] for rank in range(1, 10)] for suit in SUITS]
    needs = [_wild_needs(counts, False) for counts in groups if any(counts)]
    honours = [held[h] for h in HONOURS]
    if any(honours):
        needs.append(_wild_needs(honours, True))
    return _enough_wilds(needs, wild)


def is_complete(tiles: Iterable[str], sets: int = 5, wild: int = 0) -> bool:
    """Whether ``tiles`` plus ``wild`` wild tiles make ``sets`` sets and exactly one pair.

    A set is a pong (three alike) or a chow (three in a row of one suit, never honours);
    a wild stands for any tile. ``tiles`` is the concealed part only: a 16-tile hand with
    two exposed melds is checked with ``sets=3``. Seven pairs and other special patterns
    are not "complete" here; rulesets that allow them check them separately.

    >>> is_complete(parse_tiles("123m 456m 789p 11z"), sets=3)
    True
    """
    if sets < 0 or wild < 0:
        raise ValueError("sets and wild must not be negative")
    if not isinstance(tiles, _SEQUENCES):
        tiles = list(tiles)
    count = len(tiles)
    if count + wild != 3 * sets + 2:
        return False
    try:
        packed = sum(map(_WEIGHT.__getitem__, tiles))
    except (KeyError, TypeError):
        bad = next((t for t in tiles if t not in _WEIGHT), tiles)
        raise ValueError(
            f"not a playable tile: {bad!r} (flowers are set aside, never part of a hand)"
        ) from None
    suits = (
        packed & _SUIT_MASK,
        packed >> _SUIT_BITS & _SUIT_MASK,
        packed >> 2 * _SUIT_BITS & _SUIT_MASK,
    )
    honours = packed >> _HONOUR_SHIFT
    if not wild:
        # The hot path (every claim check, every bench hand): memo look-ups only.
        known = _suit_exact.get
        total = 0
        for key in suits:
            if key:
                total += known(key) or _exact_entry(key, False)
        if honours:
            total += _honour_exact.get(honours) or _exact_entry(honours, True)
        if total >> 5 != count:
            return _is_complete_unpacked(tiles, wild)
        return total & _STATUS_MASK == _SETS_AND_PAIR
    needs = [_wild_entry(key, False) for key in suits if key]
    if honours:
        needs.append(_wild_entry(honours, True))
    if sum(need[0] for need in needs) != count:
        return _is_complete_unpacked(tiles, wild)
    return _enough_wilds(needs, wild)


def is_sets(tiles: Iterable[str], sets: int, wild: int = 0) -> bool:
    """Whether ``tiles`` plus ``wild`` wild tiles make exactly ``sets`` sets and no pair.

    The pair-less sibling of :func:`is_complete`, for checks that place the pair
    elsewhere (a Joker Eye wait: every set done and a lone joker waiting for its pair).

    >>> is_sets(parse_tiles("123m 456m 789p"), sets=3)
    True
    """
    if sets < 0 or wild < 0:
        raise ValueError("sets and wild must not be negative")
    if not isinstance(tiles, _SEQUENCES):
        tiles = list(tiles)
    count = len(tiles)
    if count + wild != 3 * sets:
        return False
    try:
        packed = sum(map(_WEIGHT.__getitem__, tiles))
    except (KeyError, TypeError):
        bad = next((t for t in tiles if t not in _WEIGHT), tiles)
        raise ValueError(
            f"not a playable tile: {bad!r} (flowers are set aside, never part of a hand)"
        ) from None
    groups = [
        (packed & _SUIT_MASK, False),
        (packed >> _SUIT_BITS & _SUIT_MASK, False),
        (packed >> 2 * _SUIT_BITS & _SUIT_MASK, False),
        (packed >> _HONOUR_SHIFT, True),
    ]
    needs = [_wild_entry(key, honours) for key, honours in groups if key]
    if sum(need[0] for need in needs) != count:
        # More than seven of a kind overflowed a slice: count plainly instead.
        held = Counter(tiles)
        needs = [
            _wild_needs([held[f"{rank}{suit}"] for rank in range(1, 10)], False) for suit in SUITS
        ]
        needs.append(_wild_needs([held[h] for h in HONOURS], True))
    # Wilds beyond the fewest needed come in threes (the count is 3 × sets): extra pongs.
    return sum(need[1] for need in needs) <= wild


def waits(tiles: Iterable[str], sets: int = 5, wild: int = 0) -> list[str]:
    """The kinds that would complete the hand (``is_complete`` with one more tile).

    ``tiles`` holds one tile fewer than a complete hand. A kind the hand already holds
    four of is not a wait (no fifth copy exists). Returned in sort order.
    """
    hand = list(tiles)
    held = Counter(hand)
    if len(hand) + wild != 3 * sets + 1:
        return []
    if wild:
        candidates: Iterable[str] = KINDS
    else:
        # Without wilds, a new tile can only help next to (within two ranks of) a held
        # suited tile, or on a held honour: anything else is an isolated single.
        near: set[str] = set()
        for tile in held:
            if is_suited(tile):
                rank, suit = int(tile[0]), tile[1]
                near.update(f"{r}{suit}" for r in range(max(1, rank - 2), min(9, rank + 2) + 1))
            elif tile in _WEIGHT:
                near.add(tile)
            else:
                raise ValueError(f"not a playable tile: {tile!r}")
        candidates = sort_tiles(near)
    return [
        kind for kind in candidates if held[kind] < 4 and is_complete([*hand, kind], sets, wild)
    ]
