"""Re-deal what one seat cannot know: the other states that seat's view must not tell apart.

``REDEALS[game](state, seat, rng)`` returns a state that agrees with everything ``seat``
(``None``: the audience) may know of ``state`` — its own hand, every meld, discard and
flower in sight, a shown hand, the counts, its own claim options and answers — and
re-deals the rest at random: the other seats' concealed tiles or cards and the wall or
stock (the same sizes, shuffled among those places), and in a tile game's call window
the other seats' claim options, re-derived from their new hands by the engine's own
rules, and their answers so far. A seat's view (clock included) must be the same for
every such state (``tests/unit/test_view_redeal.py``).

Each game needs one entry here; the test refuses a registered game without one. What a
seat knows beyond the raw state is kept in place: a tile game's hand never holds a
flower (they stay in the wall); a kong being robbed keeps its tile in the declarer's
hand; face-down sets (a secret Tongits set, a secret Mahjong kang) are left as they are.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from msgspec.structs import replace

from kalaro.games.cards import card_index
from kalaro.games.kawuxing import offers as kawuxing_offers
from kalaro.games.mahjong import wins as mahjong_wins
from kalaro.games.tiles import is_flower, sort_key

Redeal = Callable[[Any, int | None, random.Random], Any]


def _hidden_seats(seats: int, seat: int | None, over: bool) -> list[int]:
    """The seats whose concealed holding ``seat`` cannot see (none once the hand is over)."""
    return [] if over else [s for s in range(seats) if s != seat]


def _deal(
    pool: list[str], sizes: Sequence[int], rng: random.Random
) -> tuple[list[list[str]], list[str]]:
    """``pool`` shuffled into hands of ``sizes``, and what is left (shuffled too)."""
    rng.shuffle(pool)
    hands, at = [], 0
    for size in sizes:
        hands.append(pool[at : at + size])
        at += size
    return hands, pool[at:]


# -- Tongits ------------------------------------------------------------------------


def _tongits(state: Any, seat: int | None, rng: random.Random) -> Any:
    hidden = _hidden_seats(len(state.hands), seat, state.phase == "over")
    pool = [card for s in hidden for card in state.hands[s]] + list(state.stock)
    dealt, stock = _deal(pool, [len(state.hands[s]) for s in hidden], rng)
    hands = list(state.hands)
    for s, hand in zip(hidden, dealt, strict=True):
        hands[s] = tuple(sorted(hand, key=card_index))
    return replace(state, hands=tuple(hands), stock=tuple(stock))


# -- the tile games -----------------------------------------------------------------


def _tiles(
    state: Any,
    seat: int | None,
    rng: random.Random,
    *,
    offers: Callable[[Any, Any], tuple[tuple[Any, ...], ...]],
    secret: Callable[[Any, int, Any], Any] = lambda alt, s, rng: alt,
) -> Any:
    """Re-deal a tile game: ``offers(alt, call)`` re-derives a window's claim options;
    ``secret(alt, s, rng)`` re-deals the game's own private per-seat facts of seat ``s``."""
    players = list(state.players)
    hidden = [
        s
        for s in _hidden_seats(len(players), seat, state.phase == "over")
        if not getattr(players[s], "shown", False)  # a shown hand (Ka Wu Xing) is public
    ]
    call = state.call
    kept: dict[int, list[str]] = {s: [] for s in hidden}
    if call is not None and call.robbing and call.discarder in kept:
        kept[call.discarder].append(call.tile)  # the kong being added: in sight
    pool = [t for t in state.wall if not is_flower(t)]
    for s in hidden:
        hand = list(players[s].hand)
        for tile in kept[s]:
            hand.remove(tile)
        pool += hand
    dealt, rest = _deal(pool, [len(players[s].hand) - len(kept[s]) for s in hidden], rng)
    for s, hand in zip(hidden, dealt, strict=True):
        players[s] = replace(players[s], hand=tuple(sorted(hand + kept[s], key=sort_key)))
    wall = rest + [t for t in state.wall if is_flower(t)]  # a hand never holds a flower
    rng.shuffle(wall)
    alt = replace(state, players=tuple(players), wall=tuple(wall))
    if state.drawn is not None and state.turn in hidden:
        alt = replace(alt, drawn=rng.choice(players[state.turn].hand))
    for s in hidden:
        alt = secret(alt, s, rng)
    if call is None:
        return alt
    derived = offers(alt, call)
    new_offers, answered, claims = list(call.offers), list(call.answered), list(call.claims)
    for s in hidden:
        new_offers[s] = derived[s]
        answered[s] = bool(derived[s]) and rng.random() < 0.5
        claims[s] = rng.choice([None, *derived[s]]) if answered[s] else None
    window = replace(call, offers=tuple(new_offers), answered=tuple(answered), claims=tuple(claims))
    return replace(alt, call=window)


def _mahjong_offers(alt: Any, call: Any) -> Any:
    if call.robbing:
        return mahjong_wins.rob_offers(alt, call.discarder, call.tile)
    return mahjong_wins.claim_offers(alt, call.discarder, call.tile)


def _mahjong_secret(alt: Any, s: int, rng: random.Random) -> Any:
    """Whether ``s`` passed a winning tile is its own business."""
    flags = list(alt.passed_win)
    flags[s] = rng.random() < 0.5
    return replace(alt, passed_win=tuple(flags))


def _mahjong(state: Any, seat: int | None, rng: random.Random) -> Any:
    return _tiles(state, seat, rng, offers=_mahjong_offers, secret=_mahjong_secret)


def _kawuxing_offers(alt: Any, call: Any) -> Any:
    return kawuxing_offers.claim_offers(
        alt, call.discarder, call.tile, robbing=call.robbing, after_kong=call.after_kong
    )


def _kawuxing(state: Any, seat: int | None, rng: random.Random) -> Any:
    return _tiles(state, seat, rng, offers=_kawuxing_offers)


REDEALS: dict[str, Redeal] = {
    "tongits": _tongits,
    "mahjong": _mahjong,
    "kawuxing": _kawuxing,
}
