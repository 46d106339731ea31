"""Mahjong tiles: the notation every message uses, tile sets, their order.

Notation (``RULES.md``): ``1m``-``9m`` characters, ``1p``-``9p`` dots, ``1s``-``9s``
bamboo, ``1z``-``7z`` honours (East South West North White Green Red), ``1f``-``8f``
flowers. The 34 playable *kinds* are ordered ``1m … 9m 1p … 9p 1s … 9s 1z … 7z``, the
same order as the riichi libraries' "34 array", and :func:`sort_tiles` uses it.

Identity of a physical tile: copies of a kind are interchangeable, so a tile is simply
its notation and a tile set is a multiset. :data:`MAHJONG_144` lists the 144 tiles of
the Filipino set (each of the 34 kinds four times, then the 8 flowers) in the order the
seeded shuffle starts from; "every tile accounted for" means the multiset of the tiles in
a hand's state equals that of the set (see :func:`count_tiles`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Annotated

import msgspec

SUITS: tuple[str, ...] = ("m", "p", "s")
HONOURS: tuple[str, ...] = tuple(f"{n}z" for n in range(1, 8))
WINDS: tuple[str, ...] = HONOURS[:4]
DRAGONS: tuple[str, ...] = HONOURS[4:]
FLOWERS: tuple[str, ...] = tuple(f"{n}f" for n in range(1, 9))

#: The 34 playable kinds, in sort order.
KINDS: tuple[str, ...] = tuple(f"{rank}{suit}" for suit in SUITS for rank in range(1, 10)) + HONOURS

#: A tile in notation, checked when a message is decoded (e.g. an action from a client).
TileName = Annotated[str, msgspec.Meta(pattern=r"^([1-9][mps]|[1-7]z|[1-8]f)$")]

#: The Filipino set: 4 of each kind, then the 8 flowers — the order the shuffle starts from.
MAHJONG_144: tuple[str, ...] = tuple(kind for kind in KINDS for _ in range(4)) + FLOWERS

_ORDER: dict[str, int] = {name: i for i, name in enumerate(KINDS + FLOWERS)}


def is_tile(name: object) -> bool:
    """Whether ``name`` is a tile in notation (``"5m"``, ``"7z"``, ``"3f"``)."""
    return isinstance(name, str) and name in _ORDER


def is_flower(name: str) -> bool:
    """Flowers are bonus tiles: set aside at once, never part of a hand."""
    return name in FLOWERS


def is_honour(name: str) -> bool:
    """Winds and dragons: no chows."""
    return name in HONOURS


def is_suited(name: str) -> bool:
    """Characters, dots and bamboo: the tiles that form chows."""
    return len(name) == 2 and name[1] in SUITS and name[0] in "123456789"


def tile_kind_index(name: str) -> int:
    """The 0-33 index of a playable kind (the 34-array position); ``ValueError`` otherwise."""
    index = _ORDER.get(name)
    if index is None or index >= len(KINDS):
        raise ValueError(f"not a playable tile: {name!r} (e.g. '5m', '9p', '1s', '7z')")
    return index


def sort_key(name: str) -> int:
    """Sort position: suits m p s by rank, then honours, then flowers."""
    return _ORDER[name]


def sort_tiles(tiles: Iterable[str]) -> tuple[str, ...]:
    """The tiles in table order (``1m … 9s 1z … 7z 1f … 8f``)."""
    return tuple(sorted(tiles, key=_ORDER.__getitem__))


def parse_tiles(text: str | Iterable[str]) -> tuple[str, ...]:
    """Tiles from ``"1m 2m 3m"``, the compact ``"123m 55z"``, or an iterable of names.

    Validated, in the given order; ``ValueError`` names the first bad tile.
    """
    if isinstance(text, str):
        names: list[str] = []
        for word in text.split():
            digits, suit = word[:-1], word[-1:]
            if len(word) < 2 or not digits.isdigit():
                raise ValueError(f"not a tile group: {word!r} (e.g. '5m' or '123m')")
            names.extend(digit + suit for digit in digits)
    else:
        names = list(text)
    for name in names:
        if not is_tile(name):
            raise ValueError(f"not a tile: {name!r} (e.g. '5m', '9p', '1s', '7z', '3f')")
    return tuple(names)


def tile_set(kinds: Iterable[str], copies: int = 4, flowers: Iterable[str] = ()) -> tuple[str, ...]:
    """A game's physical tiles: ``copies`` of each kind, then the flowers (once each).

    ``tile_set(KINDS, flowers=FLOWERS) == MAHJONG_144``; Ka Wu Xing's 84 tiles are
    ``tile_set(dots + bamboo + dragons)``.
    """
    return tuple(kind for kind in kinds for _ in range(copies)) + tuple(flowers)


def count_tiles(tiles: Iterable[str]) -> Counter[str]:
    """The multiset of ``tiles``, for "every tile accounted for" checks."""
    return Counter(tiles)


def chow_partners(tile: str) -> list[tuple[str, str]]:
    """The pairs of tiles that make a chow with ``tile`` (``"5m"`` → 34, 46, 67 of m)."""
    if not is_suited(tile):
        return []
    rank, suit = int(tile[0]), tile[1]
    return [
        (f"{low}{suit}", f"{high}{suit}")
        for low, high in ((rank - 2, rank - 1), (rank - 1, rank + 1), (rank + 1, rank + 2))
        if low >= 1 and high <= 9
    ]
