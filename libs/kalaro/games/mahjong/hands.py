"""Winning patterns, win categories and special hands, jokers included.

Pure functions on tiles. A *joker* is a tile of the hand's joker kind (``State.joker``);
in the concealed hand it stands for any tile. Melds never hold one: jokers cannot be
claimed or used to claim.

Patterns (``RULES.md``, ruleset ``joker``), in detection order — a hand that makes more
than one is named by the first:

- **Eskalera**: 1-2-3, 4-5-6 and 7-8-9 of one suit, the rest 5 sets + 1 pair as usual.
  Jokers fill missing numbers; an exposed chow that is one of the three runs counts.
- **Seven Pairs**: 7 pairs + 1 set, fully concealed (no melds, not even a concealed
  kang). Four alike are two pairs.
- **Regular**: 5 sets + 1 pair; exposed sets count.

**Joker Eye**: the pair is a reserved joker and the winning tile. Since a joker pairs
with anything, a hand waits on a Joker Eye exactly when, without one of its jokers,
everything else is already done (sets only; six pairs + a set; an Eskalera + sets).
Joker Eye is draw-only (RULES.md): a hand waiting in that shape is never offered a win
on another player's tile, even one that would also complete it another way; it may
still claim Pung, Chow or Kang. A hand not in that shape cannot make the tile a
joker's partner in any complete split, so its other wins need no further check.

Tiles are counted in a ``Counter`` of natural tiles plus a number of wilds; "natural
first" (use a real tile where the hand has one, a joker only for a gap) loses nothing,
since a joker can always swap places with the real tile it stood in for.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import combinations
from typing import Literal

from kalaro.games.mahjong.options import TRIPLE_JOKER, Options
from kalaro.games.mahjong.state import Meld
from kalaro.games.tiles import DRAGONS, SUITS, is_complete, is_honour, is_sets

Pattern = Literal["Eskalera", "Seven Pairs", "Regular"]
Source = Literal["discard", "draw", "bisaklat"]

#: Sets in a winning hand besides the pair (16 tiles + the winning one).
WINNING_SETS = 5
_RUNS = ((1, 2, 3), (4, 5, 6), (7, 8, 9))
_SUIT_TILES = {suit: frozenset(f"{n}{suit}" for n in range(1, 10)) for suit in SUITS}
_CHOWS: tuple[tuple[str, str, str], ...] = tuple(
    (f"{low}{suit}", f"{low + 1}{suit}", f"{low + 2}{suit}")
    for suit in SUITS
    for low in range(1, 8)
)


def patterns(options: Options) -> tuple[Pattern, ...]:
    """The patterns ``options`` allow, in detection order."""
    found: list[Pattern] = []
    if options.eskalera:
        found.append("Eskalera")
    if options.seven_pairs:
        found.append("Seven Pairs")
    found.append("Regular")
    return tuple(found)


def split_jokers(tiles: Iterable[str], joker: str | None) -> tuple[Counter[str], int]:
    """The natural tiles (counted) and the number of jokers among ``tiles``.

    Counters here never hold a zero count (``+counter`` drops them), so a kind is held
    exactly when it is a key.
    """
    natural = Counter(tiles)
    wild = natural.pop(joker, 0) if joker is not None else 0
    return natural, wild


def jokers_first(hand: Iterable[str], joker: str | None) -> tuple[str, ...]:
    """The hand as its owner sees it: jokers at the far left, the rest in order."""
    tiles = tuple(hand)
    if joker is None or joker not in tiles:
        return tiles
    return tuple(t for t in tiles if t == joker) + tuple(t for t in tiles if t != joker)


# -- the shapes ---------------------------------------------------------------------------


def _regular(natural: Counter[str], wild: int, sets: int) -> bool:
    return sets >= 0 and is_complete(list(natural.elements()), sets, wild)


def _sets_only(natural: Counter[str], wild: int, sets: int) -> bool:
    return sets >= 0 and is_sets(list(natural.elements()), sets, wild)


def _flip(count: int) -> int:
    """Change in the number of odd counts when one tile of a kind held ``count`` goes."""
    return -1 if count % 2 else 1


def _pairs_and_set(natural: Counter[str], wild: int, pairs: int, sets: int) -> bool:
    """Whether the tiles make ``pairs`` pairs and ``sets`` (0 or 1) sets; jokers wild.

    Pairs only: every odd count needs a joker (spare jokers pair each other). With the
    set: try each set — three jokers, a pong with 1-3 real tiles, a chow with any real
    tiles it can use — and count the odd kinds left.
    """
    if sum(natural.values()) + wild != 2 * pairs + 3 * sets:
        return False
    odd = sum(c % 2 for c in natural.values())
    if not sets:
        return odd <= wild
    # A set changes at most three counts' parity and uses up to three jokers.
    if odd - 3 > wild:
        return False
    if wild >= 3 and odd <= wild - 3:
        return True
    for count in natural.values():
        for real in range(1, min(count, 3) + 1):
            left = wild - (3 - real)
            if left >= 0 and odd + (_flip(count) if real % 2 else 0) <= left:
                return True
    for chow in _CHOWS:
        held = [tile for tile in chow if natural[tile]]
        for size in range(1, len(held) + 1):
            for used in combinations(held, size):
                left = wild - (3 - size)
                if left >= 0 and odd + sum(_flip(natural[t]) for t in used) <= left:
                    return True
    return False


def _eskalera_rests(
    natural: Counter[str], wild: int, melds: tuple[Meld, ...], suits: Iterable[str] = SUITS
) -> Iterator[tuple[Counter[str], int, int]]:
    """Each way to lay an Eskalera: (the tiles left, the jokers left, sets they must make).

    One per suit whose three runs can be laid: an exposed chow that equals a run covers
    it; otherwise its numbers come from the hand, natural first, jokers for the gaps.
    """
    chows = [m.tiles for m in melds if m.kind == "chow"]
    for suit in suits:
        # Cheap test first: each missing number needs a joker or an exposed chow.
        missing = len(_RUNS) * 3 - len(_SUIT_TILES[suit] & natural.keys())
        if missing > wild + 3 * sum(1 for tiles in chows if tiles[0][1] == suit):
            continue
        exposed = list(chows)
        rest, left, covered = Counter(natural), wild, 0
        for run in _RUNS:
            tiles = tuple(f"{n}{suit}" for n in run)
            if tiles in exposed:
                exposed.remove(tiles)
                covered += 1
                continue
            for tile in tiles:
                if rest[tile]:
                    rest[tile] -= 1
                else:
                    left -= 1
        if left >= 0:
            yield +rest, left, WINNING_SETS - len(melds) - (len(_RUNS) - covered)


def _complete(pattern: Pattern, natural: Counter[str], wild: int, melds: tuple[Meld, ...]) -> bool:
    """Whether the concealed tiles plus ``melds`` make ``pattern`` (any split)."""
    if pattern == "Regular":
        return _regular(natural, wild, WINNING_SETS - len(melds))
    if pattern == "Seven Pairs":
        return not melds and _pairs_and_set(natural, wild, 7, 1)
    return any(_regular(*rest) for rest in _eskalera_rests(natural, wild, melds))


def _eyeless(pattern: Pattern, natural: Counter[str], wild: int, melds: tuple[Meld, ...]) -> bool:
    """Whether the tiles make ``pattern`` but for its pair (a Joker Eye wait minus the joker)."""
    if pattern == "Regular":
        return _sets_only(natural, wild, WINNING_SETS - len(melds))
    if pattern == "Seven Pairs":
        return not melds and _pairs_and_set(natural, wild, 6, 1)
    return any(_sets_only(*rest) for rest in _eskalera_rests(natural, wild, melds))


# -- what the engine asks ---------------------------------------------------------------------


def winning_pattern(
    hand: Iterable[str], melds: tuple[Meld, ...], joker: str | None, options: Options
) -> Pattern | None:
    """The pattern a complete hand makes (first in detection order), or None."""
    natural, wild = split_jokers(hand, joker)
    return next((p for p in patterns(options) if _complete(p, natural, wild, melds)), None)


def claim_pattern(
    hand: Iterable[str], tile: str, melds: tuple[Meld, ...], joker: str | None, options: Options
) -> Pattern | None:
    """The pattern ``hand`` completes with another player's ``tile``, or None.

    The tile is a discard or a robbed kang's. A joker is never claimable, and a hand
    waiting in Joker Eye shape (every set complete and one joker unpaired; Seven Pairs:
    1 set, 6 pairs and a joker) never wins on it, whatever else the tile completes.
    """
    if joker is not None and tile == joker:
        return None
    natural, wild = split_jokers(hand, joker)
    if wild and any(_eyeless(p, natural, wild - 1, melds) for p in patterns(options)):
        return None  # Joker Eye is draw-only, whatever else the tile would complete
    full = natural.copy()
    full[tile] += 1
    return next((p for p in patterns(options) if _complete(p, full, wild, melds)), None)


def is_joker_eye(
    before: Iterable[str], melds: tuple[Meld, ...], joker: str | None, pattern: Pattern
) -> bool:
    """Whether the hand ``before`` the winning draw waited on a Joker Eye of ``pattern``."""
    if joker is None:
        return False
    natural, wild = split_jokers(before, joker)
    return wild >= 1 and _eyeless(pattern, natural, wild - 1, melds)


def category(source: Source, pattern: Pattern | None, before_fifth: bool, joker_eye: bool) -> str:
    """The seed's name of a win: e.g. "Win by Draw Joker Eye Before the Fifth Eskalera".

    ``pattern`` None is the Bisaklat triple-joker win. "Regular" is spelled out only
    when nothing else qualifies the win (the seed's "Win by Discard Before the Fifth"
    is a Regular hand).
    """
    if pattern is None:
        return TRIPLE_JOKER
    if source == "bisaklat":
        return f"Bisaklat {pattern}"
    words = ["Win by Discard" if source == "discard" else "Win by Draw"]
    if joker_eye and source == "draw":
        words.append("Joker Eye")
    if before_fifth:
        words.append("Before the Fifth")
    if pattern != "Regular" or len(words) == 1:
        words.append(pattern)
    return " ".join(words)


# -- special hands (ambisyon) ------------------------------------------------------------------


def _pongs_and_pair(natural: Counter[str], wild: int, sets: int) -> bool:
    """Whether the tiles make ``sets`` pongs (no chows) and a pair; jokers wild."""
    if sets < 0 or sum(natural.values()) + wild != 3 * sets + 2:
        return False
    counts = [c for c in natural.values() if c]
    # Each kind is topped up to whole pongs; the pair takes one or two tiles of a kind
    # (or two jokers) instead.
    pongs = sum(-c % 3 for c in counts)
    fewest = pongs + 2
    for c in counts:
        for paired in (1, 2):
            if paired <= c:
                fewest = min(fewest, pongs - (-c % 3) + (2 - paired) + (-(c - paired) % 3))
    return fewest <= wild


def _take(natural: Counter[str], wild: int, tile: str, size: int) -> tuple[Counter[str], int]:
    """``size`` tiles of ``tile``'s kind from the hand, natural first, jokers for the rest."""
    rest = Counter(natural)
    real = min(rest[tile], size)
    rest[tile] -= real
    return +rest, wild - (size - real)


def _dragons(natural: Counter[str], wild: int, melds: tuple[Meld, ...], pair: str | None) -> bool:
    """Pongs (or kangs) of every dragon but ``pair``, which is the pair; the rest complete."""
    sets = WINNING_SETS - len(melds)
    exposed = {m.tiles[0] for m in melds if m.kind in ("pong", "kang") and m.tiles}
    for dragon in DRAGONS:
        if dragon == pair:
            natural, wild = _take(natural, wild, dragon, 2)
        elif dragon not in exposed:
            natural, wild = _take(natural, wild, dragon, 3)
            sets -= 1
    if wild < 0:
        return False
    return _sets_only(natural, wild, sets) if pair else _regular(natural, wild, sets)


def special_hands(
    hand: Iterable[str], melds: tuple[Meld, ...], joker: str | None
) -> tuple[str, ...]:
    """The special hands a complete winning hand makes, in ``SPECIAL_HANDS`` order.

    - All Pongs: 5 pongs/kangs + pair (not counted with All Honours, which implies it);
    - Pure One Suit: every tile of one suit; All Honours: every tile a wind or dragon;
    - Big Three Dragons: a pong/kang of each dragon; Small Three Dragons: two of them
      and a pair of the third (not counted with Big);
    - Concealed Hand: no claimed meld (concealed kangs are fine).

    Jokers stand for whatever tile makes the hand special.
    """
    natural, wild = split_jokers(hand, joker)
    tiles = [*natural.elements(), *(t for m in melds for t in m.tiles)]
    sets = WINNING_SETS - len(melds)
    honours = all(is_honour(t) for t in tiles)
    found: list[str] = []
    if (
        not honours
        and all(m.kind != "chow" for m in melds)
        and _pongs_and_pair(natural, wild, sets)
    ):
        found.append("All Pongs")
    if not honours and len({t[1] for t in tiles}) == 1:
        found.append("Pure One Suit")
    if honours:
        found.append("All Honours")
    if _dragons(natural, wild, melds, None):
        found.append("Big Three Dragons")
    elif any(_dragons(natural, wild, melds, pair) for pair in DRAGONS):
        found.append("Small Three Dragons")
    if all(m.from_seat is None for m in melds):
        found.append("Concealed Hand")
    return tuple(found)
