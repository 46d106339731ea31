"""Who may win, and the win itself: patterns, Bisaklat, claim offers, the category.

Pure helpers of :mod:`~kalaro.games.mahjong.engine` over :class:`State`; what makes a
winning hand, and what a win is called, is :mod:`~kalaro.games.mahjong.hands`.
"""

from __future__ import annotations

import msgspec

from kalaro.games.mahjong.actions import Claim
from kalaro.games.mahjong.events import AnyEvent, HandWon
from kalaro.games.mahjong.hands import (
    WINNING_SETS,
    Pattern,
    Source,
    category,
    claim_pattern,
    is_joker_eye,
    special_hands,
    winning_pattern,
)
from kalaro.games.mahjong.state import SEATS, Outcome, State
from kalaro.games.tilegame.table import with_tiles, without_tiles
from kalaro.games.tiles import chow_partners, is_complete

#: A seat holding this many jokers before the dealer's first discard wins (Bisaklat).
TRIPLE = 3


def self_draw_pattern(state: State, seat: int) -> Pattern | None:
    """The pattern ``seat``'s hand makes now (after its own draw), or None."""
    player = state.players[seat]
    options = state.options
    if state.joker is None and not (options.seven_pairs or options.eskalera):
        # ``kalaro``'s hot path: 5 sets + 1 pair and nothing else.
        return "Regular" if is_complete(player.hand, WINNING_SETS - len(player.melds)) else None
    return winning_pattern(player.hand, player.melds, state.joker, options)


def may_win_on(state: State, seat: int, tile: str) -> Pattern | None:
    """The pattern ``seat`` completes with another player's ``tile``, if it may win on it."""
    if state.options.passed_win_blocks and state.passed_win[seat]:
        return None
    player = state.players[seat]
    options = state.options
    if state.joker is None and not (options.seven_pairs or options.eskalera):
        complete = is_complete(with_tiles(player.hand, tile), WINNING_SETS - len(player.melds))
        return "Regular" if complete else None
    return claim_pattern(player.hand, tile, player.melds, state.joker, options)


def pattern_on_claim(state: State, seat: int) -> Pattern:
    """The pattern ``seat`` won with on another player's tile (now in its hand)."""
    player = state.players[seat]
    assert state.call is not None
    before = without_tiles(player.hand, state.call.tile)
    if state.joker is None and not (state.options.seven_pairs or state.options.eskalera):
        return "Regular"
    pattern = claim_pattern(before, state.call.tile, player.melds, state.joker, state.options)
    assert pattern is not None, "a Mahjong claim is offered only on a winning tile"
    return pattern


def jokers_held(state: State, seat: int) -> int:
    joker = state.joker
    return 0 if joker is None else state.players[seat].hand.count(joker)


def first_turn(state: State) -> bool:
    """The dealer's first turn, before anyone has discarded: Bisaklat may happen."""
    return state.turn == state.dealer and not state.discarded


def claim_offers(state: State, discarder: int, tile: str) -> tuple[tuple[Claim, ...], ...]:
    """What each seat may claim on ``discarder``'s ``tile`` (nothing for the discarder)."""
    joker = state.joker
    offers: list[tuple[Claim, ...]] = []
    for seat, player in enumerate(state.players):
        if seat == discarder or tile == joker:  # a discarded joker is dead
            offers.append(())
            continue
        mine: list[Claim] = []
        hand = player.hand
        if may_win_on(state, seat, tile):
            mine.append(Claim(kind="mahjong"))
        held = hand.count(tile)
        if held >= 3 and state.wall:  # a kang needs a replacement tile
            mine.append(Claim(kind="kang", tiles=(tile, tile, tile)))
        if held >= 2:
            mine.append(Claim(kind="pong", tiles=(tile, tile)))
        if seat == (discarder + 1) % SEATS:  # chow: only the next player
            mine.extend(
                Claim(kind="chow", tiles=(low, high))
                for low, high in chow_partners(tile)
                if low in hand and high in hand and joker not in (low, high)
            )
        offers.append(tuple(mine))
    return tuple(offers)


def rob_offers(state: State, declarer: int, tile: str) -> tuple[tuple[Claim, ...], ...]:
    """Who may rob ``declarer``'s added kang of ``tile``: Mahjong only."""
    return tuple(
        (Claim(kind="mahjong"),) if seat != declarer and may_win_on(state, seat, tile) else ()
        for seat in range(SEATS)
    )


def win(
    state: State,
    seat: int,
    *,
    tile: str | None,
    pattern: Pattern | None,
    events: list[AnyEvent],
    discarder: int | None = None,
    robbed: bool = False,
) -> State:
    """``seat`` wins: name the category (under a points table) and end the hand.

    ``tile`` is in ``seat``'s hand already (None: a Bisaklat triple-joker win, no tile
    and ``pattern`` None). ``discarder`` is None unless the tile was another player's.
    """
    player = state.players[seat]
    source: Source = "discard"
    if discarder is None:
        source = "bisaklat" if first_turn(state) and seat == state.dealer else "draw"
    if pattern is None:
        source = "bisaklat"
    before_fifth = sum(len(p.discards) for p in state.players) < 5
    joker_eye = (
        source == "draw"
        and tile is not None
        and pattern is not None
        and is_joker_eye(without_tiles(player.hand, tile), player.melds, state.joker, pattern)
    )
    # ``kalaro`` payments do not depend on the category, and its results stay as they were.
    name = category(source, pattern, before_fifth, joker_eye) if state.options.points else None
    specials: tuple[str, ...] = ()
    if state.options.special_hands and pattern is not None:
        specials = special_hands(player.hand, player.melds, state.joker)
    events.append(
        HandWon(
            seat=seat,
            tile=tile,
            self_draw=discarder is None,
            discarder=discarder,
            category=name,
            robbed_kang=robbed,
        )
    )
    outcome = Outcome(
        ending="self_draw" if discarder is None else "discard",
        winner=seat,
        discarder=discarder,
        tile=tile,
        category=name,
        specials=specials,
        robbed_kang=robbed,
    )
    return msgspec.structs.replace(state, phase="over", call=None, outcome=outcome)
