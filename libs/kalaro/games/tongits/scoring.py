"""How a Tongits hand ends: deadwood, who wins (with every tie rule), and who pays what.

Payment tables (units of the bet, each loser pays the winner):

Table A (``kalaro``)::

    ending                    loser not burned                      loser burned
    Tongits                   2                                     4
    stock out                 1                                     2
    draw won by the caller    fighter 2, folder 1                   2
    draw won by a fighter     caller 2, other fighter 2, folder 1   2

Table B (``classic``): base 1; 3 instead for a Tongits win or a challenged draw won;
+3 per secret four-card set of the winner's (face down on the table or concealed in
hand); +1 per ace in the winner's hand or own melds, counting only aces the winner
placed there; +1 if the loser is burned.

No loser is charged more than :func:`max_loss_units` (the hold), which is table B's
true worst case, so that guard never cuts what the tables say is owed.
"""

from __future__ import annotations

from collections.abc import Collection

from kalaro.games.cards import cards_value, rank_of
from kalaro.games.tongits.melds import best_deadwood, four_of_a_kinds
from kalaro.games.tongits.options import TABLE_A, TABLE_B, Options, max_loss_units
from kalaro.games.tongits.state import DrawCall, Ending, Result, State

SEATS = (0, 1, 2)


def after(seat: int) -> tuple[int, int, int]:
    """All seats in turn order starting with the one after ``seat`` (``seat`` last)."""
    return ((seat + 1) % 3, (seat + 2) % 3, seat)


def deadwood(state: State, seat: int) -> int:
    """The deadwood of ``seat``'s hand under the table's deadwood option."""
    return hand_deadwood(state.options, state.hands[seat])


def hand_deadwood(options: Options, cards: Collection[str]) -> int:
    """The deadwood of ``cards`` held in hand under ``options.deadwood``."""
    if options.deadwood == "hand":
        return cards_value(cards)
    return best_deadwood(cards)


def draw_winner(state: State, call: DrawCall, points: tuple[int, ...]) -> int:
    """The winner of a Draw call: lowest deadwood among the caller and the fighters.

    A tie between the caller and a fighter goes by ``draw_tie``; between tied fighters,
    to the first in turn order after the caller.
    """
    caller = call.caller
    fighters = [s for s in after(caller) if call.answers[s] == "fight"]
    if not fighters:
        return caller
    best = min(points[s] for s in (caller, *fighters))
    tied_fighters = [s for s in fighters if points[s] == best]
    if points[caller] == best and (state.options.draw_tie == "caller" or not tied_fighters):
        return caller
    return tied_fighters[0]


def stock_out_winners(state: State, last_drawer: int, points: tuple[int, ...]) -> tuple[int, ...]:
    """Winners at stock out: the lowest deadwood among opened players (burned players
    cannot win); none if nobody opened.

    Ties: ``split`` keeps every tied player, in turn order after the last drawer (that
    order decides the remainder and the next dealer); ``last_drawer`` picks the last
    drawer if tied, else the tied player first in turn order after them.
    """
    order = after(last_drawer)
    eligible = [s for s in order if state.opened(s)]
    if not eligible:
        return ()
    best = min(points[s] for s in eligible)
    tied = tuple(s for s in eligible if points[s] == best)
    if len(tied) == 1 or state.options.stock_out_tie == "split":
        return tied
    if last_drawer in tied:
        return (last_drawer,)
    return tied[:1]


def _table_a(ending: Ending, call: DrawCall | None, loser: int, burned: bool) -> int:
    row = TABLE_A[ending]
    if burned:
        return row["burned"]
    if ending != "draw":
        return row["not_burned"]
    assert call is not None
    # the caller and fighters pay the "caller"/"fight" entries; anyone else folded
    return row.get(call.answers[loser], row["fold"])


def winner_aces(state: State, winner: int) -> int:
    """Aces in the winner's hand or own melds that the winner placed there."""
    held = sum(1 for name in state.hands[winner] if rank_of(name) == 0)
    placed = sum(
        1
        for meld in state.melds
        if meld.owner == winner
        for name, by in zip(meld.cards, meld.placed_by, strict=True)
        if by == winner and rank_of(name) == 0
    )
    return held + placed


def secret_sets(state: State, winner: int) -> int:
    """The winner's secret four-card sets: face down on the table or concealed in hand."""
    if not state.options.secret_sets:
        return 0
    face_down = sum(1 for meld in state.melds if meld.owner == winner and meld.face_down)
    return face_down + len(four_of_a_kinds(state.hands[winner]))


def _table_b(state: State, ending: Ending, call: DrawCall | None, winner: int) -> int:
    """What each non-burned loser owes ``winner`` under table B."""
    challenged = call is not None and "fight" in call.answers
    big = ending == "tongits" or (ending == "draw" and challenged)
    base = TABLE_B["tongits_or_challenged"] if big else TABLE_B["base"]
    sets = TABLE_B["per_secret_set"] * secret_sets(state, winner)
    return base + sets + TABLE_B["per_ace"] * winner_aces(state, winner)


def finish(
    state: State,
    ending: Ending,
    winners: tuple[int, ...],
    points: tuple[int, ...],
    *,
    last_drawer: int | None = None,
) -> Result:
    """The result of a hand ending now with ``winners`` (in tie order)."""
    cap = max_loss_units(state.options)
    burned = tuple(not state.opened(s) and s not in winners for s in SEATS)
    call = state.draw_call if ending == "draw" else None
    owed = [0, 0, 0]
    payments = [0, 0, 0]
    if winners:
        # with tied winners each loser owes what they would owe the first of them
        # (the same for every tied winner under table A), shared equally
        first = winners[0]
        table_b_base = (
            _table_b(state, ending, call, first) if state.options.payments == "table_b" else 0
        )
        for loser in SEATS:
            if loser in winners:
                continue
            if state.options.payments == "table_a":
                amount = _table_a(ending, call, loser, burned[loser])
            else:
                amount = table_b_base + (TABLE_B["burned"] if burned[loser] else 0)
            owed[loser] = amount
            # never binds: the hold is the tables' true maximum (see max_loss_units)
            paid = min(amount, cap)
            payments[loser] -= paid
            share, remainder = divmod(paid, len(winners))
            for w in winners:
                payments[w] += share
            payments[first] += remainder
    return Result(
        ending=ending,
        winners=winners,
        payments=tuple(payments),
        deadwood=points,
        burned=burned,
        hands=state.hands,
        melds=state.melds,
        next_dealer=winners[0] if winners else state.dealer,
        draw_call=state.draw_call if ending == "draw" else None,
        last_drawer=last_drawer,
        owed=tuple(owed),
    )


def all_deadwood(state: State) -> tuple[int, ...]:
    return tuple(deadwood(state, s) for s in SEATS)
