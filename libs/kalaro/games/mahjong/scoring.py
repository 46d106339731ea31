"""Who pays whom when a hand ends, and who deals next.

Units × the table's bet (the wallet multiplies; the engine never sees money).

``kalaro`` payments (``Options.points`` None):

- win on a discard: the discarder pays 2, each other loser 1;
- self-draw (bunot): every loser pays 2;
- each kang the winner holds (claimed, concealed or added): +1 from every loser.

A points table (``joker``, ``pinoy``): the win's category entry is paid by the
discarder on a win by Discard (each other loser pays the "Each other player (by
Discard)" entry), and by every loser on a win by Draw or a Bisaklat; every loser adds
the kang entry per kang the winner holds and each special hand's entry. Robbing the
kang is paid as a win on a discard by the kang's declarer.

Either way no loser pays more than ``Options.cap_units`` (10).

Wall out (tabla): nobody pays and the dealer keeps the deal. A dealer win keeps the
deal too; any other win passes it to the next seat.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from kalaro.games.mahjong.hands import jokers_first
from kalaro.games.mahjong.options import KANG_BONUS, OTHER_PLAYER, Options, Points
from kalaro.games.mahjong.state import SEATS, Ending, Meld, Outcome, State

ItemName = Literal["discarder", "other_loser", "self_draw", "kang", "special"]

#: ``kalaro`` payments, units × bet: a discard win's discarder and other losers, each
#: loser of a self-draw, and each kang of the winner's from every loser.
KALARO_PAYMENTS: dict[str, int] = {"discarder": 2, "other_loser": 1, "self_draw": 2, "kang": 1}


class Item(msgspec.Struct, frozen=True, kw_only=True):
    """One line of a loser's bill.

    ``self_draw`` is every loser's share of a win not on a discard (Bisaklat too).
    ``detail`` names the category (on ``discarder`` / ``self_draw`` lines under a points
    table) or the special hand (``special`` lines); empty under ``kalaro`` payments.
    """

    name: ItemName
    units: int
    detail: str = ""


class Charge(msgspec.Struct, frozen=True, kw_only=True):
    """What one loser pays the winner: the items, their sum, and the capped amount."""

    payer: int
    payee: int
    items: tuple[Item, ...]
    #: The sum of the items before the cap.
    total: int
    #: What is actually paid: ``min(total, cap)``.
    units: int


class RevealedHand(msgspec.Struct, frozen=True, kw_only=True):
    """A seat's tiles as everyone sees them at the end (the winner's includes the winning tile).

    Jokers come first in ``hand``, as the app shows them.
    """

    seat: int
    hand: tuple[str, ...]
    melds: tuple[Meld, ...]
    flowers: tuple[str, ...]


class Result(msgspec.Struct, frozen=True, kw_only=True):
    """How a finished hand ended and what it moves."""

    ending: Ending
    winner: int | None
    discarder: int | None
    winning_tile: str | None
    #: Net units per seat (positive = receives); sums to zero. × bet in the wallet.
    payments: tuple[int, ...]
    charges: tuple[Charge, ...]
    hands: tuple[RevealedHand, ...]
    dealer: int
    next_dealer: int
    #: The win category, named as the seed names it (``options.CATEGORIES``).
    category: str | None = None
    #: Special hands (ambisyon) the winner made, when the option is on.
    specials: tuple[str, ...] = ()
    #: The winner robbed ``discarder``'s kang.
    robbed_kang: bool = False
    #: The kind that was wild this hand (with jokers).
    joker: str | None = None


def charge(options: Options, winner: int, loser: int, discarder: int | None, kangs: int) -> Charge:
    """One loser's bill; ``discarder`` is None for a self-draw."""
    items: list[Item] = []
    pay = KALARO_PAYMENTS
    if discarder is None:
        items.append(Item(name="self_draw", units=pay["self_draw"]))
    elif loser == discarder:
        items.append(Item(name="discarder", units=pay["discarder"]))
    else:
        items.append(Item(name="other_loser", units=pay["other_loser"]))
    if kangs:
        items.append(Item(name="kang", units=kangs * pay["kang"]))
    total = sum(item.units for item in items)
    return Charge(
        payer=loser,
        payee=winner,
        items=tuple(items),
        total=total,
        units=min(total, options.cap_units),
    )


def table_charge(
    options: Options, points: Points, outcome: Outcome, loser: int, kangs: int
) -> Charge:
    """One loser's bill under a points table (the category is on ``outcome``)."""
    assert outcome.winner is not None and outcome.category is not None
    name = outcome.category
    items: list[Item] = []
    if outcome.discarder is None:
        items.append(Item(name="self_draw", units=points.units(name), detail=name))
    elif loser == outcome.discarder:
        items.append(Item(name="discarder", units=points.units(name), detail=name))
    else:
        items.append(Item(name="other_loser", units=points.units(OTHER_PLAYER)))
    if kangs and points.units(KANG_BONUS):
        items.append(Item(name="kang", units=kangs * points.units(KANG_BONUS)))
    items.extend(
        Item(name="special", units=points.units(s), detail=s)
        for s in outcome.specials
        if points.units(s)
    )
    total = sum(item.units for item in items)
    return Charge(
        payer=loser,
        payee=outcome.winner,
        items=tuple(items),
        total=total,
        units=min(total, options.cap_units),
    )


def next_dealer(dealer: int, winner: int | None) -> int:
    """Tabla or a dealer win keeps the deal; otherwise it passes to the next seat."""
    if winner is None or winner == dealer:
        return dealer
    return (dealer + 1) % SEATS


def result(state: State) -> Result | None:
    """The result of a finished hand; None while it is in progress."""
    outcome = state.outcome
    if state.phase != "over" or outcome is None:
        return None
    winner = outcome.winner
    charges: tuple[Charge, ...] = ()
    payments = [0] * SEATS
    if winner is not None:
        kangs = sum(1 for meld in state.players[winner].melds if meld.kind == "kang")
        points = state.options.points
        charges = tuple(
            charge(state.options, winner, loser, outcome.discarder, kangs)
            if points is None
            else table_charge(state.options, points, outcome, loser, kangs)
            for loser in range(SEATS)
            if loser != winner
        )
        for bill in charges:
            payments[bill.payer] -= bill.units
            payments[bill.payee] += bill.units
    hands = tuple(
        RevealedHand(
            seat=s, hand=jokers_first(p.hand, state.joker), melds=p.melds, flowers=p.flowers
        )
        for s, p in enumerate(state.players)
    )
    return Result(
        ending=outcome.ending,
        winner=winner,
        discarder=outcome.discarder,
        winning_tile=outcome.tile,
        payments=tuple(payments),
        charges=charges,
        hands=hands,
        dealer=state.dealer,
        next_dealer=next_dealer(state.dealer, winner),
        category=outcome.category,
        specials=outcome.specials,
        robbed_kang=outcome.robbed_kang,
        joker=state.joker,
    )
