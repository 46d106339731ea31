"""Test building blocks shared by the tile games (Mahjong, Ka Wu Xing).

Each game's helpers (``tests/unit/mahjong/helpers.py``, ``tests/unit/kawuxing/
kawuxing_helpers.py``) build its own rigged states and bots from these: a pool of the
set's tiles that a rig takes from, the wall and discard rows for the tiles left over,
playing scripts of moves, and the greedy bots' sense of which tile to keep.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import msgspec

from kalaro.games.tiles import is_suited, parse_tiles

_S = TypeVar("_S")
_E = TypeVar("_E")
_A = TypeVar("_A")


def tiles(text: str) -> tuple[str, ...]:
    """``"123s 55z"`` → ``("1s", "2s", "3s", "5z", "5z")``."""
    return parse_tiles(text)


def take(pool: Counter[str], names: Iterable[str]) -> tuple[str, ...]:
    """Take ``names`` out of ``pool`` (the set's tiles not placed yet); fails past four."""
    out = tuple(names)
    for name in out:
        assert pool[name] > 0, f"rig: no {name} left (max four of a kind)"
        pool[name] -= 1
    return out


def check_sizes(
    concealed: Sequence[tuple[str, ...]],
    melds: Mapping[int, Sequence[Any]],
    hand_size: int,
    mover: int,
    phase: str,
) -> None:
    """Each seat holds its hand size less 3 per meld, the mover one more when discarding."""
    for seat, held in enumerate(concealed):
        size = hand_size - 3 * len(melds.get(seat, ()))
        extra = 1 if mover == seat and phase == "discard" else 0
        assert len(held) == size + extra, f"rig: seat {seat} holds {len(held)} tiles"


def lay_out_rest(
    pool: Counter[str],
    full_set: Iterable[str],
    seats: int,
    wall_size: int | None,
    ends: int,
) -> tuple[list[str], list[list[str]]]:
    """The tiles left in ``pool``: the middle of the wall and each seat's discard row.

    Without ``wall_size`` all go to the wall; with it, the wall (``ends`` tiles are
    placed at its ends already) keeps that many and the rest are dealt over the rows.
    """
    middle: list[str] = []
    for tile in full_set:
        if pool[tile] > 0:
            pool[tile] -= 1
            middle.append(tile)
    discards: list[list[str]] = [[] for _ in range(seats)]
    if wall_size is not None:
        keep = wall_size - ends
        assert keep >= 0
        for i, tile in enumerate(middle[keep:]):
            discards[i % seats].append(tile)
        middle = middle[:keep]
    return middle, discards


def play(
    apply: Callable[[_S, int, _A], tuple[_S, list[_E]]],
    state: _S,
    moves: Iterable[tuple[int, _A]],
) -> tuple[_S, list[_E]]:
    """Apply ``(seat, action)`` moves in order with the game's ``apply``; all the events."""
    events: list[_E] = []
    for seat, action in moves:
        state, new = apply(state, seat, action)
        events.extend(new)
    return state, events


def encode(value: object) -> bytes:
    return msgspec.msgpack.encode(value)


def keep_score(
    hand: Sequence[str], tile: str, rng: random.Random, joker: str | None = None
) -> float:
    """How much a tile is worth keeping: a joker most, then copies held and neighbours."""
    if tile == joker:
        return 100.0
    held = Counter(hand)
    score = 3.0 * (held[tile] - 1)
    if is_suited(tile):
        rank, suit = int(tile[0]), tile[1]
        for distance, weight in ((1, 2.0), (2, 1.0)):
            for near in (rank - distance, rank + distance):
                if 1 <= near <= 9 and held[f"{near}{suit}"]:
                    score += weight
    return score + rng.random()
