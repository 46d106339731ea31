"""The smart Ka Wu Xing bot: tile efficiency, useful pongs and kongs, every win, Show Hand.

It reads only its seat's :class:`~kalaro.games.kawuxing.View` and thinks in **shanten**,
the number of tiles a hand is from ready (0: one tile from winning, -1: complete), the
lower of two shapes: 4 sets and a pair (counting its pongs and kongs), and, while it has
no melds, seven pairs (four alike count as two pairs). No chow: runs only come from the
wall, so claims are pongs and kongs.

* Wins whenever it may (self-draw, or a discard the engine offers: never a chicken hand).
* Discards the tile that leaves the lowest shanten and, among those, the most
  **ukeire**: live tiles (four of a kind minus the copies it can see: its hand, every
  meld, discard row and shown hand) that bring the hand a step closer. Once ready, each
  wait is weighed by what it is worth: a self-draw pays ``2 × M`` and happens about a
  third of the time; a discard pays ``M`` and is only offered when the hand is no
  chicken hand. Ties go to the tile with more copies in sight.
* Never feeds a shown hand: a tile another player's shown hand waits on is discarded
  only if every other discard is one too (a shown hand wins on any discard and the
  discarder pays both self-draw shares, doubled).
* **Show Hand** with the chosen discard when the hand is then waiting on at least
  ``show_min_live`` live tiles (or every wait would be self-draw only, which showing
  turns into wins on any discard), while the wall still holds ``show_min_wall`` tiles.
* Claims a pong only when the hand, after it and its discard, is closer to winning; a
  kong (claimed, concealed or added to a pong) when it costs no step: a kong scores on
  its own and brings a free replacement tile.
* Passes otherwise, at once: it never leaves a call window to run out.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kalaro.bots.tilebot import Hand, Shape, live_counts
from kalaro.games.kawuxing import (
    KINDS,
    WINNING_SETS,
    AnyAction,
    Claim,
    DeclareKong,
    DeclareWin,
    Discard,
    Draw,
    Meld,
    MeldView,
    Pass,
    ShowHand,
    View,
    score_win,
    waits,
)

__all__ = ["SmartKaWuXing", "shanten"]

#: dots 1-9, bamboo 1-9 (runs allowed), dragons (pongs and pairs only)
_SHAPE = Shape(KINDS, ((0, 9), (9, 18), (18, 21)))
_INDEX = _SHAPE.index


def shanten(tiles: Iterable[str], sets: int = WINNING_SETS, seven_pairs: bool | None = None) -> int:
    """Tiles from ready of concealed Ka Wu Xing ``tiles`` that must make ``sets`` sets
    and a pair, or (``seven_pairs``; by default when no set is melded) seven pairs.

    -1: complete; 0: ready, e.g. ``shanten(parse_tiles("123p 456p 789s 55z 67s")) == 0``.
    """
    seven = sets == WINNING_SETS if seven_pairs is None else seven_pairs
    return Hand(_SHAPE, _SHAPE.counts(tiles), sets, seven).shanten()


def _meld(view: MeldView) -> Meld:
    """A meld as the rules' scoring needs it (a face-down kong's tiles are unknown)."""
    return Meld(
        kind=view.kind,
        tiles=view.tiles if view.tiles is not None else ("?",) * 4,
        claimed=view.claimed,
        from_seat=view.from_seat,
        kong=view.kong,
        on_kong=view.on_kong,
    )


@dataclass(frozen=True)
class _Seat:
    """What the bot works from, read once per decision."""

    counts: list[int]
    melds: tuple[Meld, ...]
    sets: int
    seven: bool
    live: list[int]
    #: Kinds some other player's shown hand is waiting on.
    danger: frozenset[int]
    cap: int | None
    wall: int

    def hand(self, counts: list[int] | None = None) -> Hand:
        return Hand(_SHAPE, self.counts if counts is None else counts, self.sets, self.seven)


@dataclass(frozen=True)
class SmartKaWuXing:
    """Shanten-and-ukeire Ka Wu Xing policy. The numbers are tuned by ``kalaro simulate``."""

    name: str = "smart"
    #: Show Hand when the discard leaves at least this many live winning tiles ...
    show_min_live: int = 2
    #: ... and the wall still has this many tiles (a late show mostly risks a double loss).
    show_min_wall: int = 6
    #: How a self-draw-only (chicken) wait counts against one that also wins on discards.
    self_draw_share: float = 1 / 3

    def choose(self, view: View, rng: random.Random) -> AnyAction | None:
        legal = view.legal
        if not legal or view.seat is None:
            return None
        if DeclareWin() in legal:
            return DeclareWin()
        if Claim(kind="win") in legal:
            return Claim(kind="win")
        if view.phase == "calls":
            return self._claim(view, legal)
        if view.phase == "draw":
            return Draw() if Draw() in legal else legal[0]
        if view.players[view.seat].shown:
            # A shown hand is locked: the only choice left is to let the drawn tile go.
            return next((a for a in legal if isinstance(a, Discard)), legal[0])
        return self._turn(view, legal)

    # -- what the table shows ---------------------------------------------------------

    @staticmethod
    def _seat(view: View) -> _Seat:
        assert view.seat is not None
        danger: set[int] = set()
        for player in view.players:
            if player.shown and player.seat != view.seat and player.hand is not None:
                shown = [_meld(m) for m in player.melds]
                danger.update(_INDEX[t] for t in waits(player.hand, shown))
        me = view.players[view.seat]
        melds = tuple(_meld(m) for m in me.melds)
        return _Seat(
            counts=_SHAPE.counts(me.hand or ()),
            melds=melds,
            sets=WINNING_SETS - len(melds),
            seven=not melds,
            live=live_counts(_SHAPE, view.players),
            danger=frozenset(danger),
            cap=view.options.cap,
            wall=view.wall_count,
        )

    # -- own turn ---------------------------------------------------------------------

    def _turn(self, view: View, legal: Sequence[AnyAction]) -> AnyAction:
        seat = self._seat(view)
        hand = seat.hand()
        discards = [a for a in legal if isinstance(a, Discard)]
        if not discards:
            return legal[0]
        best, level, wins = self._best_discard(seat, hand, discards)
        for action in legal:
            if isinstance(action, DeclareKong):
                k = _INDEX[action.tile]
                if seat.counts[k] == 4:  # concealed: four tiles out, one set fewer to make
                    after = seat.counts.copy()
                    after[k] = 0
                    kong = Hand(_SHAPE, after, seat.sets - 1).shanten()
                elif k in seat.danger:  # a shown hand would rob it
                    continue
                else:  # added to a pong: like discarding that tile, with a free draw
                    kong = hand.changed(k, -1)
                if kong <= level:
                    return action
        show = ShowHand(best.tile)
        if level == 0 and show in legal and self._shows(seat, wins):
            return show
        return best

    def _shows(self, seat: _Seat, wins: list[tuple[int, bool]]) -> bool:
        """Whether to show a ready hand whose waits are ``wins`` (kind, wins on discard)."""
        if seat.wall < self.show_min_wall:
            return False
        live = sum(seat.live[k] for k, _ in wins)
        if not live:
            return False
        # Showing lets a chicken hand win on any discard: worth it even on few tiles.
        chicken_only = not any(on_discard for _, on_discard in wins)
        return live >= self.show_min_live or chicken_only

    def _best_discard(
        self, seat: _Seat, hand: Hand, discards: list[Discard]
    ) -> tuple[Discard, int, list[tuple[int, bool]]]:
        """The discard leaving the lowest shanten, then the most (weighted) ukeire, then
        the safest; with its shanten and, when ready, its waits."""
        safe = [a for a in discards if _INDEX[a.tile] not in seat.danger]
        candidates = safe or discards
        after = {a.tile: hand.changed(_INDEX[a.tile], -1) for a in candidates}
        lowest = min(after.values())
        shortlist = [a for a in candidates if after[a.tile] == lowest]
        scored: list[tuple[tuple[float, int, int], Discard, list[tuple[int, bool]]]] = []
        for action in shortlist:
            k = _INDEX[action.tile]
            rest = hand.less(k)
            if lowest == 0:
                value, wins = self._ready_value(seat, rest)
            else:
                value, wins = float(self._ukeire(rest, lowest, seat.live)), []
            scored.append(((-value, seat.live[k], k), action, wins))
        _, choice, wins = min(scored, key=lambda item: item[0])
        return choice, lowest, wins

    @staticmethod
    def _ukeire(hand: Hand, level: int, live: list[int]) -> int:
        """Live tiles that would lower the shanten below ``level``."""
        return sum(live[k] for k in range(len(KINDS)) if live[k] and hand.changed(k, 1) < level)

    def _ready_value(self, seat: _Seat, hand: Hand) -> tuple[float, list[tuple[int, bool]]]:
        """What a ready hand's waits are worth, and each wait with whether it may win on
        a discard (not a chicken hand)."""
        tiles = hand.tiles()
        value = 0.0
        wins: list[tuple[int, bool]] = []
        for k in range(len(KINDS)):
            if hand.changed(k, 1) >= 0:
                continue
            tile = KINDS[k]
            whole = [*tiles, tile]
            drawn = score_win(whole, seat.melds, tile, source="self_draw", cap=seat.cap)
            if drawn is None:  # a shape the shanten count accepts but the rules do not
                continue
            fired = score_win(whole, seat.melds, tile, source="discard", cap=seat.cap)
            on_discard = fired is not None and not fired.chicken
            wins.append((k, on_discard))
            worth = self.self_draw_share * 2 * drawn.multiplier
            if on_discard and fired is not None:
                worth += (1 - self.self_draw_share) * fired.multiplier
            value += seat.live[k] * worth
        return value, wins

    # -- someone else's discard -------------------------------------------------------

    def _claim(self, view: View, legal: Sequence[AnyAction]) -> AnyAction:
        assert view.call is not None
        seat = self._seat(view)
        now = seat.hand().shanten()
        best: AnyAction = Pass()
        best_key: tuple[int, float] | None = None
        for action in legal:
            if not isinstance(action, Claim) or action.kind == "win":
                continue
            rest = seat.counts.copy()
            for tile in action.tiles:
                rest[_INDEX[tile]] -= 1
            after = Hand(_SHAPE, rest, seat.sets - 1)
            if action.kind == "kong":
                # the replacement tile comes before the discard: no step lost is a gain
                level = after.shanten()
                if level > now:
                    continue
                key = (level, 0.0)
            else:
                # a pong is followed by the claimer's discard
                held = [Discard(KINDS[k]) for k, c in enumerate(rest) if c]
                if not held:
                    continue
                melds = (*seat.melds, Meld(kind="pong", tiles=(view.call.tile,) * 3))
                ponged = _Seat(
                    counts=rest,
                    melds=melds,
                    sets=seat.sets - 1,
                    seven=False,
                    live=seat.live,
                    danger=seat.danger,
                    cap=seat.cap,
                    wall=seat.wall,
                )
                choice, level, _ = self._best_discard(ponged, after, held)
                if level >= now:
                    continue
                left = after.less(_INDEX[choice.tile])
                key = (level, -float(self._ukeire(left, level, seat.live)))
            if best_key is None or key < best_key:
                best, best_key = action, key
        return best if best in legal else legal[-1]  # the engine lists Pass last
