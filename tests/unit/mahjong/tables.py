"""Rigged tables shared by the scenario tests (hands in compact notation, seats 0-3).

Each hand holds 16 tiles; seat 0 deals and draws first unless a test rotates the table.
"""

from __future__ import annotations

from typing import Any

from kalaro.games import mahjong as mj
from kalaro.games.mahjong import Discard, Draw, State
from tests.unit.mahjong.helpers import play, rig

# Seat 0 draws 9s and discards 5m: seat 1 (next) may chow it three ways, seat 2 may pong
# it, seat 3 holds 3m 4m 6m 7m too but is not the next player.
CLAIMS = ("5m 111p 222p 333z 444z 777z", "34m 67m 111s 222s 111z 222z",
          "55m 333s 444s 555s 666s 9m 8p", "3467m 777s 888s 99s 555z 6z")  # fmt: skip
# As CLAIMS, but seat 2 holds three 5m: kang (or pong).
KANG_CLAIM = ("5m 111p 222p 333z 444z 777z", "34m 67m 111s 222s 111z 222z",
              "555m 333s 444s 555s 666s 9m", "3467m 777s 888s 99s 555z 6z")  # fmt: skip
# Seat 0 draws 1z and discards 5m: seats 2 and 3 both win on it, seat 1 can do nothing.
TWO_WINNERS = ("5m 777p 888p 99p 555s 666s 7z", "11m 2m 3m 777s 888s 999s 2z 3z 4z",
               "5m 111p 222p 333p 111s 222s", "5m 444p 555p 666p 333s 444s")  # fmt: skip
# As TWO_WINNERS, but seat 2 only pongs the 5m; seat 3 still wins on it.
WIN_OVER_PONG = ("5m 777p 888p 99p 555s 666s 7z", "11m 2m 3m 777s 888s 999s 2z 3z 4z",
                 "55m 111p 222p 333p 1s 2s 9s 1z 2z", "5m 444p 555p 666p 333s 444s")  # fmt: skip
# Seat 0 holds two concealed kangs; 7s comes from the front and twice from the back.
KANGS = ("1111p 2222p 333s 444s 66s", "111m 222m 333m 444m 55m 1z 2z",
         "666m 777m 888m 999m 5m 1z 2z 3z", "56789p 56789p 1z 2z 3z 4z 5z 6z")  # fmt: skip


def rotated(hands: tuple[str, ...], by: int) -> tuple[str, ...]:
    """The same table turned ``by`` seats: seat ``(i + by) % 4`` gets ``hands[i]``."""
    return tuple(hands[(seat - by) % 4] for seat in range(4))


def after_discard(hands: tuple[str, ...], front: str, tile: str, **kw: Any) -> State:
    """Seat 0 (the dealer) draws ``front`` and discards ``tile``."""
    state = rig(hands, front=front, **kw)
    state, _ = play(state, [(0, Draw()), (0, Discard(tile))])
    assert mj.to_act(state), "the table was rigged for a claim"
    return state
