"""What a seat may do besides discarding: win on a tile, claim it, declare a kong, show.

A chicken hand (no score item) may not win on another player's tile unless it is shown;
a shown hand is locked. Pure helpers of :mod:`~kalaro.games.kawuxing.engine`.
"""

from __future__ import annotations

from kalaro.games.kawuxing.actions import Claim
from kalaro.games.kawuxing.hands import is_winning, waiting_discards
from kalaro.games.kawuxing.items import score_win
from kalaro.games.kawuxing.state import Player, State
from kalaro.games.tilegame import flow as tilegame
from kalaro.games.tilegame.table import with_tiles


def can_win_on(
    state: State, seat: int, tile: str, *, robbing: bool, after_kong: bool
) -> tuple[bool, bool]:
    """Whether ``tile`` from another player completes ``seat``'s hand, and whether it
    may win with it: a chicken hand wins only by self-draw, unless it is shown."""
    player = state.players[seat]
    hand = with_tiles(player.hand, tile)
    if not is_winning(hand, player.melds):
        return False, False
    if player.shown:
        return True, True
    score = score_win(
        hand,
        player.melds,
        tile,
        source="robbed_kong" if robbing else "discard",
        after_kong=after_kong,
        cap=state.options.cap,
    )
    return True, score is not None and not score.chicken


def claim_offers(
    state: State, discarder: int, tile: str, *, robbing: bool, after_kong: bool
) -> tuple[tuple[Claim, ...], ...]:
    """What each seat may claim on ``discarder``'s ``tile`` (nothing for the discarder)."""
    offers: list[tuple[Claim, ...]] = []
    for seat, player in enumerate(state.players):
        mine: list[Claim] = []
        if seat != discarder:
            _, may_win = can_win_on(state, seat, tile, robbing=robbing, after_kong=after_kong)
            if may_win:
                mine.append(Claim(kind="win"))
            # A shown hand is locked; a robbed kong's tile can only be won on.
            if not player.shown and not robbing:
                held = player.hand.count(tile)
                if held >= 3 and state.wall:  # a kong needs a replacement tile
                    mine.append(Claim(kind="kong", tiles=(tile, tile, tile)))
                if held >= 2:
                    mine.append(Claim(kind="pong", tiles=(tile, tile)))
        offers.append(tuple(mine))
    return tuple(offers)


def kong_tiles(state: State, seat: int) -> list[str]:
    """Tiles ``seat`` may declare a kong of now (none once its hand is shown)."""
    return [] if state.players[seat].shown else tilegame.kong_tiles(state, seat)


def show_tiles(player: Player) -> list[str]:
    """The discards after which the rest of the hand is waiting (Show Hand options)."""
    if player.shown:
        return []
    return list(waiting_discards(player.hand, player.melds))
