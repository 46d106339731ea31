"""The smart Filipino Mahjong bot: tile efficiency, claims that help, every win taken.

It reads only its seat's :class:`~kalaro.games.mahjong.View` and thinks in **shanten**,
the number of tiles a hand is from ready (0: one tile from winning, -1: complete):

* Declares Mahjong whenever it may (self-draw or on a discard).
* Discards the tile that leaves the lowest shanten and, among those, the most
  **ukeire**: live tiles (four of a kind minus the copies it can see in its hand, every
  meld and every discard row) that would bring the hand a step closer. Ties go to the
  tile with more copies in sight (fewer ways for it to complete someone's hand).
* Claims pong or chow only when the hand, after the claim and its discard, is closer to
  winning than it is now; claims kang (three in hand) and declares kang when that costs
  no step, since a kang brings a free replacement tile and +1 from every loser.
* Passes otherwise.

Shanten of a hand needing ``S`` more sets: ``2S - max(2m + min(t, S - m) + h)`` over
ways of cutting the tiles into ``m`` sets, ``t`` partial sets (pairs, two of a run) and
``h`` (0 or 1) pair kept as the eyes. Suits and honours are cut independently: each
group's best cuts (the Pareto front of ``(m, t, h)``) are memoised by the group's
counts, so a shanten is a few look-ups and a small product, cheap enough to try every
discard against every useful draw.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

from kalaro.bots.tilebot import Hand, Shape, live_counts
from kalaro.games.mahjong import (
    WINNING_SETS,
    AnyAction,
    Claim,
    DeclareKang,
    DeclareWin,
    Discard,
    Draw,
    Pass,
    View,
)
from kalaro.games.tiles import KINDS

__all__ = ["SmartMahjong", "shanten"]

#: the four groups of the 34 kinds: characters, dots, bamboo (9 each) and honours (7)
_SHAPE = Shape(KINDS, ((0, 9), (9, 18), (18, 27), (27, 34)))
_INDEX = _SHAPE.index


def shanten(tiles: Iterable[str], sets: int = WINNING_SETS) -> int:
    """Tiles from ready of concealed ``tiles`` that must make ``sets`` sets and the eyes.

    -1: complete; 0: ready (one tile wins), e.g.
    ``shanten(parse_tiles("123m 456m 78p 11z"), sets=3) == 0``. Regular hands only
    (5 sets + eyes; no seven pairs).
    """
    return Hand(_SHAPE, _SHAPE.counts(tiles), sets).shanten()


def _near(kind: int) -> tuple[int, ...]:
    if kind >= 27:
        return (kind,)
    base, rank = kind - kind % 9, kind % 9
    return tuple(base + r for r in range(max(0, rank - 2), min(8, rank + 2) + 1))


#: kinds that can join a held kind: itself (an honour), or its suit within two ranks
_NEAR: tuple[tuple[int, ...], ...] = tuple(_near(k) for k in range(len(KINDS)))


def _useful_kinds(counts: list[int]) -> set[int]:
    """Kinds that could join something held; any other draw is an isolated single."""
    out: set[int] = set()
    for k, c in enumerate(counts):
        if c:
            out.update(_NEAR[k])
    return out


@dataclass(frozen=True)
class SmartMahjong:
    """Shanten-and-ukeire Mahjong policy (regular 5 sets + eyes hands)."""

    name: str = "smart"

    def choose(self, view: View, rng: random.Random) -> AnyAction | None:
        legal = view.legal
        if not legal or view.seat is None:
            return None
        if DeclareWin() in legal:
            return DeclareWin()
        if Claim(kind="mahjong") in legal:
            return Claim(kind="mahjong")
        if view.phase == "calls":
            return self._claim(view, legal)
        if view.phase == "draw":
            return Draw() if Draw() in legal else legal[0]
        return self._turn(view, legal)

    # -- what the table shows ---------------------------------------------------------

    @staticmethod
    def _live(view: View) -> list[int]:
        """Copies of each kind this seat cannot see (still in the wall or other hands)."""
        return live_counts(_SHAPE, view.players)

    @staticmethod
    def _mine(view: View) -> tuple[list[int], int]:
        assert view.seat is not None
        me = view.players[view.seat]
        return _SHAPE.counts(me.hand or ()), WINNING_SETS - len(me.melds)

    # -- own turn ---------------------------------------------------------------------

    def _turn(self, view: View, legal: tuple[AnyAction, ...]) -> AnyAction:
        counts, sets = self._mine(view)
        live = self._live(view)
        hand = Hand(_SHAPE, counts, sets)
        discards = [a for a in legal if isinstance(a, Discard)]
        if not discards:
            return legal[0]
        best_discard, best_shanten = self._best_discard(hand, discards, live)
        for action in legal:
            if isinstance(action, DeclareKang):
                k = _INDEX[action.tile]
                if counts[k] == 4:  # concealed: four tiles out, one set fewer to make
                    after = counts.copy()
                    after[k] = 0
                    kang = Hand(_SHAPE, after, sets - 1).shanten()
                else:  # added to a pong: like discarding that tile, with a free draw
                    kang = hand.changed(k, -1)
                if kang <= best_shanten:
                    return action
        return best_discard

    def _best_discard(
        self, hand: Hand, discards: list[Discard], live: list[int]
    ) -> tuple[Discard, int]:
        """The discard leaving the lowest shanten, then the most ukeire, then the safest."""
        after = {a.tile: hand.changed(_INDEX[a.tile], -1) for a in discards}
        lowest = min(after.values())
        shortlist = [a for a in discards if after[a.tile] == lowest]
        if len(shortlist) == 1:
            return shortlist[0], lowest

        def key(action: Discard) -> tuple[int, int, int]:
            k = _INDEX[action.tile]
            return (-self._ukeire(hand, k, lowest, live), live[k], k)

        return min(shortlist, key=key), lowest

    @staticmethod
    def _ukeire(hand: Hand, discard: int, level: int, live: list[int]) -> int:
        """Live tiles that would lower the shanten after discarding kind ``discard``."""
        after = hand.less(discard)
        return sum(
            live[k] for k in _useful_kinds(after.counts) if live[k] and after.changed(k, 1) < level
        )

    # -- someone else's discard -------------------------------------------------------

    def _claim(self, view: View, legal: tuple[AnyAction, ...]) -> AnyAction:
        assert view.call is not None
        counts, sets = self._mine(view)
        now = Hand(_SHAPE, counts, sets).shanten()
        live = self._live(view)
        best: AnyAction = Pass()
        best_key: tuple[int, int] | None = None
        for action in legal:
            if not isinstance(action, Claim) or action.kind == "mahjong":
                continue
            rest = counts.copy()
            for tile in action.tiles:
                rest[_INDEX[tile]] -= 1
            after = Hand(_SHAPE, rest, sets - 1)
            if action.kind == "kang":
                # the replacement tile comes before the discard: no step lost is a gain
                level = after.shanten()
                if level > now:
                    continue
                key = (level, 0)
            else:
                # a pong or chow is followed by the claimer's discard
                held = [Discard(KINDS[k]) for k, c in enumerate(rest) if c]
                if not held:
                    continue
                choice, level = self._best_discard(after, held, live)
                if level >= now:
                    continue
                key = (level, -self._ukeire(after, _INDEX[choice.tile], level, live))
            if best_key is None or key < best_key:
                best, best_key = action, key
        return best if best in legal else legal[-1]  # the engine lists Pass last
