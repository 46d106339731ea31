"""The wall: the deal with its flowers and joker, and every draw with its flower chain.

A draw that ends the wall ends the hand (tabla); in the dealer's first turn a draw may
bring Bisaklat (three jokers). Pure helpers of :mod:`~kalaro.games.mahjong.engine`.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from kalaro.games.base import shuffled
from kalaro.games.mahjong.events import AnyEvent, FlowerReplaced, TileDrawn
from kalaro.games.mahjong.options import Options, check_options
from kalaro.games.mahjong.state import SEATS, Player, State
from kalaro.games.mahjong.table import TABLE
from kalaro.games.mahjong.wins import TRIPLE, first_turn, jokers_held, self_draw_pattern, win
from kalaro.games.tilegame import flow as tilegame
from kalaro.games.tilegame.table import replaced, with_tiles
from kalaro.games.tiles import MAHJONG_144, is_flower, sort_key

#: Tiles in a hand before the turn's draw; a winning hand is 5 sets + 1 pair.
HAND_SIZE = 16
#: The deal goes round four times, four tiles each time, starting with the dealer.
_DEAL_ROUNDS = 4
_DEAL_BATCH = 4


class _Drawn(msgspec.Struct, frozen=True, kw_only=True):
    """A draw with its flower chain: the tile kept (None if the wall ran out)."""

    tile: str | None
    wall: tuple[str, ...]
    flowers: tuple[str, ...]


def _draw_from_wall(
    wall: tuple[str, ...], seat: int, replacement: bool, events: list[AnyEvent]
) -> _Drawn:
    """Draw from the front (or the back, for a replacement), replacing flowers from the back."""
    flowers: list[str] = []
    while wall:
        tile, wall = tilegame.wall_tile(wall, replacement)
        events.append(TileDrawn(seat=seat, tile=tile, replacement=replacement))
        if not is_flower(tile):
            return _Drawn(tile=tile, wall=wall, flowers=tuple(flowers))
        flowers.append(tile)
        events.append(FlowerReplaced(seat=seat, flower=tile))
        replacement = True
    return _Drawn(tile=None, wall=wall, flowers=tuple(flowers))


def new_hand(options: Options, seed: bytes, dealer: int | None = None) -> State:
    """Shuffle the 144 tiles with ``seed``, deal 16 to each seat, replace flowers.

    The first dealer is drawn from the seed when ``dealer`` is None; afterwards the
    worker passes ``result(previous).next_dealer``. The dealer draws first. With
    jokers, the last non-flower tile of the wall is then revealed and set aside (the
    joker indicator). ``ValueError`` for options that cannot be played.
    """
    check_options(options)
    dealer = tilegame.choose_dealer(seed, dealer, SEATS)
    batches = [_DEAL_BATCH] * _DEAL_ROUNDS
    hands, wall = tilegame.deal(shuffled(MAHJONG_144, seed), dealer, SEATS, batches)
    order = tilegame.seats_from(dealer, SEATS)
    flowers: list[list[str]] = [[] for _ in range(SEATS)]
    # Flowers go aside seat by seat from the dealer; a replacement that is itself a
    # flower is replaced in turn. Only 8 flowers exist, so the wall cannot run out here.
    for seat in order:
        while found := [t for t in hands[seat] if is_flower(t)]:
            for flower in found:
                hands[seat].remove(flower)
                flowers[seat].append(flower)
                hands[seat].append(wall[-1])
                wall = wall[:-1]
    indicator = None
    if options.jokers:
        # Flowers are skipped (they stay in the wall, to be drawn and replaced as usual).
        back = max(i for i, tile in enumerate(wall) if not is_flower(tile))
        indicator, wall = wall[back], wall[:back] + wall[back + 1 :]
    players = tuple(
        Player(hand=tuple(sorted(hands[s], key=sort_key)), flowers=tuple(flowers[s]))
        for s in range(SEATS)
    )
    return tilegame.dealt_hand(State, options, dealer, players, wall, indicator=indicator)


def take_tile(state: State, seat: int, replacement: bool, events: list[AnyEvent]) -> State:
    """``seat`` draws (front or back) with its flower chain; tabla if the wall runs out.

    A draw lifts the seat's passed-win block. In the dealer's first turn, a dealer now
    holding all three jokers wins at once (Bisaklat; named by the hand's pattern if it
    is complete).
    """
    draw = _draw_from_wall(state.wall, seat, replacement, events)
    player = state.players[seat]
    player = msgspec.structs.replace(
        player,
        hand=player.hand if draw.tile is None else with_tiles(player.hand, draw.tile),
        flowers=player.flowers + draw.flowers,
    )
    state = msgspec.structs.replace(
        state,
        players=replaced(state.players, seat, player),
        wall=draw.wall,
        turn=seat,
        phase="discard",
        drawn=draw.tile,
        call=None,
        passed_win=replaced(state.passed_win, seat, False),
    )
    if draw.tile is None:
        return tilegame.wall_out(TABLE, state, events)
    if first_turn(state) and jokers_held(state, seat) >= TRIPLE:
        pattern = self_draw_pattern(state, seat)
        return win(state, seat, tile=draw.tile if pattern else None, pattern=pattern, events=events)
    return state


def tiles_in_play(state: State) -> Iterable[str]:
    """Every tile the state holds, wherever it is (for "all 144 accounted for" checks)."""
    if state.indicator is not None:
        yield state.indicator
    yield from state.wall
    for player in state.players:
        yield from player.hand
        yield from player.flowers
        yield from player.discards
        for meld in player.melds:
            yield from meld.tiles
