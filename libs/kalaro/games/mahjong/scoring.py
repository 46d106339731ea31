"""Who pays whom when a hand ends (``kalaro`` payments), and who deals next.

Units × the table's bet (the wallet multiplies; the engine never sees money):

- win on a discard: the discarder pays 2, each other loser 1;
- self-draw (bunot): every loser pays 2;
- each kang the winner holds (claimed, concealed or added): +1 from every loser;
- no loser pays more than ``Options.cap_units`` (10).

Wall out (tabla): nobody pays and the dealer keeps the deal. A dealer win keeps the
deal too; any other win passes it to the next seat.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from kalaro.games.mahjong.options import Options
from kalaro.games.mahjong.state import SEATS, Ending, Meld, State

ItemName = Literal["discarder", "other_loser", "self_draw", "kang"]


class Item(msgspec.Struct, frozen=True):
    """One line of a loser's bill."""

    name: ItemName
    units: int


class Charge(msgspec.Struct, frozen=True):
    """What one loser pays the winner: the items, their sum, and the capped amount."""

    payer: int
    payee: int
    items: tuple[Item, ...]
    #: The sum of the items before the cap.
    total: int
    #: What is actually paid: ``min(total, cap)``.
    units: int


class RevealedHand(msgspec.Struct, frozen=True):
    """A seat's tiles as everyone sees them at the end (the winner's includes the winning tile)."""

    seat: int
    hand: tuple[str, ...]
    melds: tuple[Meld, ...]
    flowers: tuple[str, ...]


class Result(msgspec.Struct, frozen=True):
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


def charge(options: Options, winner: int, loser: int, discarder: int | None, kangs: int) -> Charge:
    """One loser's bill; ``discarder`` is None for a self-draw."""
    items: list[Item] = []
    if discarder is None:
        items.append(Item("self_draw", 2))
    elif loser == discarder:
        items.append(Item("discarder", 2))
    else:
        items.append(Item("other_loser", 1))
    if kangs:
        items.append(Item("kang", kangs))
    total = sum(item.units for item in items)
    return Charge(
        payer=loser,
        payee=winner,
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
        charges = tuple(
            charge(state.options, winner, loser, outcome.discarder, kangs)
            for loser in range(SEATS)
            if loser != winner
        )
        for bill in charges:
            payments[bill.payer] -= bill.units
            payments[bill.payee] += bill.units
    hands = tuple(
        RevealedHand(seat=s, hand=p.hand, melds=p.melds, flowers=p.flowers)
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
    )
