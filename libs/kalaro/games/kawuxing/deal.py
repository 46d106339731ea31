"""The deal, and the checks that every tile is accounted for and every hand has its size."""

from __future__ import annotations

from collections.abc import Iterable

from kalaro.games.base import shuffled
from kalaro.games.kawuxing.hands import HAND_SIZE, TILES_84
from kalaro.games.kawuxing.options import Options
from kalaro.games.kawuxing.state import SEATS, Player, State
from kalaro.games.tilegame import flow as tilegame
from kalaro.games.tiles import sort_key

#: The deal: three rounds of four tiles from the dealer, then one more each (13).
_DEAL_ROUNDS = 3
_DEAL_BATCH = 4


def new_hand(options: Options, seed: bytes, dealer: int | None = None) -> State:
    """Shuffle the 84 tiles with ``seed`` and deal 13 to each seat; the dealer draws first.

    The first host is drawn from the seed when ``dealer`` is None; afterwards the worker
    passes ``result(previous).next_dealer``.
    """
    dealer = tilegame.choose_dealer(seed, dealer, SEATS)
    batches = [_DEAL_BATCH] * _DEAL_ROUNDS + [1]
    hands, wall = tilegame.deal(shuffled(TILES_84, seed), dealer, SEATS, batches)
    players = tuple(Player(hand=tuple(sorted(hands[s], key=sort_key))) for s in range(SEATS))
    return tilegame.dealt_hand(State, options, dealer, players, wall)


def tiles_in_play(state: State) -> Iterable[str]:
    """Every tile the state holds, wherever it is (for "all 84 accounted for" checks)."""
    yield from state.wall
    for player in state.players:
        yield from player.hand
        yield from player.discards
        for meld in player.melds:
            yield from meld.tiles


def hand_size_ok(state: State) -> bool:
    """Each seat holds 13 tiles, counting 3 per meld, the turn's player one more after drawing."""
    for seat, player in enumerate(state.players):
        held = len(player.hand) + 3 * len(player.melds)
        # The player to move holds the drawn tile, also while others may rob its kong.
        robbing = state.call is not None and state.call.robbing
        extra = seat == state.turn and (state.phase == "discard" or robbing)
        # The first winner on a discard holds the winning tile too.
        won = state.outcome is not None and seat in state.outcome.winners[:1]
        if held != HAND_SIZE + (extra or won):
            return False
    return True
