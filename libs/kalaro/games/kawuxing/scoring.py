"""Who pays whom when a hand ends, who deals next, and the most one player can lose.

Units × the table's bet (the wallet multiplies; the engine never sees money). Everything
is settled once, when the hand ends, as one list of charges:

- **Kong scores**, for every kong made in the hand — also when the hand ends in a draw:
  an exposed kong 2 from the player whose discard it was; a concealed kong 2 from each
  other player; an extended kong 1 from each other player. With ``kong_on_kong``, a
  kong declared on the replacement tile of its owner's previous kong scores double. A
  kong that is robbed never happens and scores nothing.
- **Wins**: the score multiplier ``M`` is the product of the win's score items (base 1),
  cut to the cap (``Options.cap``, default 8; never below 16 for seven pairs with four
  identical pairs). On a discard (or a robbed kong) the discarder pays ``M``; on a
  self-draw each other player pays ``M``. Show Hand doubles the win of a shown winner
  and the loss of a shown loser (both: ×4). A shown hand that wins on a discard is
  scored as a self-draw, all of it paid by the discarder: twice that discarder's share.
  Kong scores are not doubled.

No loser pays more than ``max_loss_units(options)``, the hold: charges are paid in
order (kong scores, then wins, the first winner first) until a loser reaches it. The
bound is a true maximum of what the rules can charge, so this only ever cuts anything
under the ``loss_limit`` house rule.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from kalaro.games.kawuxing.hands import WINNING_SETS
from kalaro.games.kawuxing.items import ITEM_MULTIPLIERS, Score, ScoreItem, Source, score_win
from kalaro.games.kawuxing.options import Options
from kalaro.games.kawuxing.state import SEATS, Ending, KongKind, Meld, State

Reason = Literal["win", "exposed_kong", "concealed_kong", "extended_kong"]

#: What each kind of kong scores from each player who pays for it.
KONG_UNITS: dict[KongKind, int] = {"exposed": 2, "concealed": 2, "extended": 1}

#: The largest product of score items any hand can reach (no cap): three concealed tile
#: hogs (4·4·4) in one suit (×4), won on a Ka Wu Xing 5 (×2) drawn as the last tile (×2),
#: e.g. ``4444 5555 6666 77s``, read as four 4-5-6 runs. Checked by scoring every
#: one-suit hand: with a kong of one's own (for Win on Kong) the best is 256, and
#: dragons (Big 3 Dragons ×8) rule out Pure One Suit and tile hogs among them.
MAX_RAW_MULTIPLIER = 1024
#: The largest product for seven pairs with four identical pairs (×16): one suit (×4)
#: and one situation item (×2: last tile, fire on kong or robbed kong; no kong of one's
#: own fits in seven pairs).
MAX_BIG_ITEM_MULTIPLIER = 128
#: Show Hand doubles a shown winner's win and a shown loser's loss.
SHOW_FACTOR = 2
#: Most winners on one tile: both other players.
MAX_WINNERS = SEATS - 1


class Win(msgspec.Struct, frozen=True, kw_only=True):
    """One winner's score."""

    seat: int
    tile: str
    source: Source
    #: Who paid it all (discard or robbed kong); None for a self-draw.
    discarder: int | None
    items: tuple[ScoreItem, ...]
    #: The product of the items before the cap, the cap that applied, and after it.
    raw: int
    cap: int | None
    multiplier: int
    shown: bool
    #: A shown hand fired by a discard: scored as a self-draw, paid by the discarder.
    as_self_draw: bool


class Charge(msgspec.Struct, frozen=True, kw_only=True):
    """One payment: ``payer`` owes ``payee`` ``due`` units for ``reason``, and pays ``units``."""

    payer: int
    payee: int
    reason: Reason
    #: The kong's tile, or the winning tile.
    tile: str
    due: int
    #: What is actually paid: ``due``, unless the payer reached the most one loser pays.
    units: int


class RevealedHand(msgspec.Struct, frozen=True, kw_only=True):
    """A seat's tiles as everyone sees them at the end (concealed kongs face up)."""

    seat: int
    hand: tuple[str, ...]
    melds: tuple[Meld, ...]
    shown: bool


class Result(msgspec.Struct, frozen=True, kw_only=True):
    """How a finished hand ended and what it moves."""

    ending: Ending
    #: Winners, the first (who deals next) first; empty for a draw.
    winners: tuple[int, ...]
    discarder: int | None
    winning_tile: str | None
    wins: tuple[Win, ...]
    #: Net units per seat (positive = receives); sums to zero. × bet in the wallet.
    payments: tuple[int, ...]
    charges: tuple[Charge, ...]
    hands: tuple[RevealedHand, ...]
    dealer: int
    next_dealer: int


# -- the most one player can lose -----------------------------------------------------


def max_multiplier(options: Options) -> int:
    """The largest multiplier a win can have after the cap under ``options``."""
    cap = options.cap
    if cap is None:
        return MAX_RAW_MULTIPLIER
    big = ITEM_MULTIPLIERS["seven_pairs_four_identical"]
    return max(min(cap, MAX_RAW_MULTIPLIER), min(max(cap, big), MAX_BIG_ITEM_MULTIPLIER))


def max_kong_units(options: Options) -> int:
    """Most one player pays in kong scores: each other player makes at most four kongs
    (four sets), each costing at most 2, and all but the first of them may be a kong on
    kong (double)."""
    worst = max(KONG_UNITS.values())
    doubled = 2 * worst if options.kong_on_kong else worst
    return (SEATS - 1) * (worst + (WINNING_SETS - 1) * doubled)


def rules_max_loss_units(options: Options) -> int:
    """Most the rules can charge one player in one hand, before any ``loss_limit``.

    The worst win: both other players shown and winning on this player's discard while
    this player is shown too. Each is scored as a self-draw (two shares) paid by the
    discarder, doubled for the shown winner and again for the shown loser.
    """
    worst_win = 2 * SHOW_FACTOR * SHOW_FACTOR * max_multiplier(options)
    return MAX_WINNERS * worst_win + max_kong_units(options)


def max_loss_units(options: Options) -> int:
    """Most one player can lose in one hand, in units of the bet (the hold)."""
    bound = rules_max_loss_units(options)
    return bound if options.loss_limit is None else min(bound, options.loss_limit)


# -- the charges ----------------------------------------------------------------------


def kong_charges(state: State) -> list[tuple[int, int, Reason, str, int]]:
    """(payer, payee, reason, tile, units) for every kong on the table, seat by seat."""
    out: list[tuple[int, int, Reason, str, int]] = []
    reasons: dict[KongKind, Reason] = {
        "exposed": "exposed_kong",
        "concealed": "concealed_kong",
        "extended": "extended_kong",
    }
    for seat, player in enumerate(state.players):
        for meld in player.melds:
            if meld.kong is None:
                continue
            units = KONG_UNITS[meld.kong] * (
                2 if meld.on_kong and state.options.kong_on_kong else 1
            )
            if meld.kong == "exposed":
                assert meld.from_seat is not None
                payers = [meld.from_seat]
            else:
                payers = [s for s in range(SEATS) if s != seat]
            out.extend((payer, seat, reasons[meld.kong], meld.tiles[0], units) for payer in payers)
    return out


def _score(state: State, seat: int, source: Source) -> Score:
    outcome = state.outcome
    assert outcome is not None and outcome.tile is not None
    player = state.players[seat]
    hand = player.hand
    if seat != outcome.winners[0]:
        # The tile went to the first winner; the second is scored holding it too.
        hand = (*hand, outcome.tile)
    score = score_win(
        hand,
        player.melds,
        outcome.tile,
        source=source,
        after_kong=outcome.after_kong,
        last_tile=outcome.last_tile,
        cap=state.options.cap,
    )
    assert score is not None, "a winner's hand is a winning hand"
    return score


def wins(state: State) -> list[Win]:
    """Each winner's score, the first winner first."""
    outcome = state.outcome
    if outcome is None or outcome.tile is None:
        return []
    source: Source = (
        "self_draw"
        if outcome.ending == "self_draw"
        else "robbed_kong"
        if outcome.ending == "robbed_kong"
        else "discard"
    )
    out: list[Win] = []
    for seat in outcome.winners:
        score = _score(state, seat, source)
        shown = state.players[seat].shown
        out.append(
            Win(
                seat=seat,
                tile=outcome.tile,
                source=source,
                discarder=outcome.discarder,
                items=score.items,
                raw=score.raw,
                cap=score.cap,
                multiplier=score.multiplier,
                shown=shown,
                as_self_draw=shown and source != "self_draw",
            )
        )
    return out


def win_charges(state: State, win: Win) -> list[tuple[int, int, Reason, str, int]]:
    """(payer, payee, "win", tile, units) for one win."""
    shown = [p.shown for p in state.players]
    won = win.multiplier * (SHOW_FACTOR if win.shown else 1)
    losers = [s for s in range(SEATS) if s != win.seat]

    def share(payer: int) -> int:
        return won * (SHOW_FACTOR if shown[payer] else 1)

    if win.discarder is None:
        return [(payer, win.seat, "win", win.tile, share(payer)) for payer in losers]
    # On a discard the discarder pays; a shown winner's win counts as a self-draw, so the
    # discarder pays the shares of both players, at its own rate.
    shares = len(losers) if win.as_self_draw else 1
    return [(win.discarder, win.seat, "win", win.tile, shares * share(win.discarder))]


def next_dealer(dealer: int, winners: tuple[int, ...]) -> int:
    """The first winner hosts the next hand; a draw keeps the host."""
    return winners[0] if winners else dealer


def result(state: State) -> Result | None:
    """The result of a finished hand; None while it is in progress."""
    outcome = state.outcome
    if state.phase != "over" or outcome is None:
        return None
    scored = wins(state)
    due = kong_charges(state)
    for win in scored:
        due.extend(win_charges(state, win))
    limit = max_loss_units(state.options)
    paid = [0] * SEATS
    charges: list[Charge] = []
    payments = [0] * SEATS
    for payer, payee, reason, tile, units in due:
        actual = min(units, limit - paid[payer])
        paid[payer] += actual
        payments[payer] -= actual
        payments[payee] += actual
        charges.append(
            Charge(payer=payer, payee=payee, reason=reason, tile=tile, due=units, units=actual)
        )
    hands = tuple(
        RevealedHand(seat=s, hand=p.hand, melds=p.melds, shown=p.shown)
        for s, p in enumerate(state.players)
    )
    return Result(
        ending=outcome.ending,
        winners=outcome.winners,
        discarder=outcome.discarder,
        winning_tile=outcome.tile,
        wins=tuple(scored),
        payments=tuple(payments),
        charges=tuple(charges),
        hands=hands,
        dealer=state.dealer,
        next_dealer=next_dealer(state.dealer, outcome.winners),
    )
