"""Mahjong tiles, game-neutral: Filipino 16-tile Mahjong and Ka Wu Xing both build on it.

:mod:`~kalaro.games.tiles.notation` is the notation every message uses, the tile sets
and their order; :mod:`~kalaro.games.tiles.complete` the winning-hand check
(:func:`is_complete`, :func:`is_sets`, :func:`waits`). Both are exported here.
"""

from kalaro.games.tiles.complete import is_complete, is_sets, waits
from kalaro.games.tiles.notation import (
    DRAGONS,
    FLOWERS,
    HONOURS,
    KINDS,
    MAHJONG_144,
    SUITS,
    WINDS,
    TileName,
    chow_partners,
    count_tiles,
    is_flower,
    is_honour,
    is_suited,
    is_tile,
    parse_tiles,
    sort_key,
    sort_tiles,
    tile_kind_index,
    tile_set,
)

__all__ = [
    "DRAGONS",
    "FLOWERS",
    "HONOURS",
    "KINDS",
    "MAHJONG_144",
    "SUITS",
    "WINDS",
    "TileName",
    "chow_partners",
    "count_tiles",
    "is_complete",
    "is_flower",
    "is_honour",
    "is_sets",
    "is_suited",
    "is_tile",
    "parse_tiles",
    "sort_key",
    "sort_tiles",
    "tile_kind_index",
    "tile_set",
    "waits",
]
