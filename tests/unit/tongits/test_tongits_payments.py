"""Payments: every row of tables A and B, the cap, stock-out ties, and the next dealer."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import combinations

import pytest
from msgspec.structs import replace

from kalaro.games.tongits import (
    Action,
    CallDraw,
    Discard,
    Draw,
    ExposeSecretSet,
    Fight,
    Fold,
    LayOff,
    Meld,
    Options,
    Result,
    State,
    TableMeld,
    TakeDiscard,
    apply,
    max_loss_units,
    options_for,
)
from kalaro.games.tongits.options import MAX_CARDS_HELD
from kalaro.games.tongits.scoring import finish
from kalaro.games.tongits.state import DrawCall
from tests.unit.tongits.tongits_helpers import CLASSIC, KALARO, meld, table


def _run(state: State, *steps: tuple[int, Action]) -> Result:
    for seat, action in steps:
        state, _ = apply(state, seat, action)
    assert state.result is not None, "the hand should be over"
    assert sum(state.result.payments) == 0
    return state.result


def _tongits(options: Options, melds: Sequence[TableMeld], last: str = "2S 3S 4S") -> Result:
    """Seat 0 goes Tongits by melding its last three cards."""
    state = table(options, hands=[last, "AH 2H", "9C 10S"], melds=melds, turn=0, phase="play")
    return _run(state, (0, Meld(tuple(last.split()))))


def _stock_out(
    options: Options,
    hands: Sequence[str],
    melds: Sequence[TableMeld],
    last_drawer: int = 0,
    dealer: int = 0,
) -> Result:
    """``last_drawer`` draws the last stock card and discards it: stock out."""
    state = table(options, hands=hands, melds=melds, stock="KD", turn=last_drawer, dealer=dealer)
    return _run(state, (last_drawer, Draw()), (last_drawer, Discard("KD")))


def _draw(
    options: Options, hands: Sequence[str], melds: Sequence[TableMeld], **answers: Action
) -> Result:
    """Seat 0 calls Draw; ``s1``/``s2`` answer."""
    state = table(options, hands=hands, melds=melds, turn=0)
    steps: list[tuple[int, Action]] = [(0, CallDraw())]
    steps += [(int(key[1]), answer) for key, answer in answers.items()]
    return _run(state, *steps)


OPEN = (meld(0, 0, "7S 8S 9S"), meld(1, 1, "JH QH KH"), meld(2, 2, "5D 5C 5H"))
OPEN_01 = OPEN[:2]  # seat 2 burned


# -- table A -------------------------------------------------------------------------------


def test_table_a_tongits_2_or_4_if_burned() -> None:
    result = _tongits(KALARO, OPEN_01)
    assert result.burned == (False, False, True)
    assert result.payments == (6, -2, -4)
    assert result.next_dealer == 0


def test_table_a_stock_out_1_or_2_if_burned() -> None:
    result = _stock_out(KALARO, ["2C 3D", "9C 10S", "AC 2D"], OPEN_01, dealer=1)
    # seat 2 has the lowest deadwood but is burned: it cannot win
    assert result.deadwood == (5, 19, 3)
    assert result.winners == (0,)
    assert result.payments == (3, -1, -2)
    assert result.next_dealer == 0


def test_table_a_draw_won_by_the_caller_fighter_2_folder_1() -> None:
    result = _draw(KALARO, ["2C 3D", "9C 10S", "8C 6D"], OPEN, s1=Fight(), s2=Fold())
    assert result.winners == (0,)
    assert result.payments == (3, -2, -1)


def test_table_a_draw_won_by_the_caller_burned_2() -> None:
    result = _draw(KALARO, ["2C 3D", "9C 10S", "AC"], OPEN_01, s1=Fight())
    assert result.payments == (4, -2, -2)
    result = _draw(KALARO, ["2C 3D", "9C 10S", "AC"], OPEN_01, s1=Fold())
    assert result.payments == (3, -1, -2)


def test_table_a_draw_won_by_a_fighter_caller_2_other_fighter_2() -> None:
    result = _draw(KALARO, ["9C 3D", "8C 10S", "AC 2C"], OPEN, s1=Fight(), s2=Fight())
    assert result.winners == (2,)
    assert result.payments == (-2, -2, 4)


def test_table_a_draw_won_by_a_fighter_folder_1_burned_2() -> None:
    result = _draw(KALARO, ["9C 3D", "AC 2C", "8C 10S"], OPEN, s1=Fight(), s2=Fold())
    assert result.winners == (1,)
    assert result.payments == (-2, 3, -1)
    result = _draw(KALARO, ["9C 3D", "AC 2C", "8C 10S"], OPEN_01, s1=Fight())
    assert result.payments == (-2, 4, -2)


# -- table B -------------------------------------------------------------------------------


def test_table_b_base_1_plus_1_if_burned() -> None:
    result = _stock_out(CLASSIC, ["2C 3D", "9C 10S", "2H 2D"], OPEN_01)
    assert result.winners == (0,)
    assert result.payments == (3, -1, -2)


def test_table_b_tongits_3() -> None:
    result = _tongits(CLASSIC, OPEN)
    assert result.payments == (6, -3, -3)
    result = _tongits(CLASSIC, OPEN_01)
    assert result.payments == (7, -3, -4)


def test_table_b_challenged_draw_3_unchallenged_1() -> None:
    hands = ["2C 3D", "9C 10S", "8C 6D"]
    assert _draw(CLASSIC, hands, OPEN, s1=Fight(), s2=Fold()).payments == (6, -3, -3)
    assert _draw(CLASSIC, hands, OPEN, s1=Fold(), s2=Fold()).payments == (2, -1, -1)
    # won by a fighter: also a challenged draw
    result = _draw(CLASSIC, ["9C 3D", "2C 2D", "8C 10S"], OPEN, s1=Fight(), s2=Fold())
    assert (result.winners, result.payments) == ((1,), (-3, 6, -3))


def test_table_b_aces_the_winner_placed_in_hand_or_own_melds() -> None:
    melds = [
        meld(0, 0, "AS 2S 3S"),  # the winner's own ace: counts
        meld(1, 1, "AH 2H 3H 4H", by=(0, 1, 1, 1)),  # laid off by the winner on seat 1: no
        meld(2, 0, "AD 2D 3D 4D", by=(2, 0, 0, 0)),  # laid off on the winner by seat 2: no
        meld(3, 2, "5D 5C 5H"),
    ]
    state = table(CLASSIC, hands=["AC 2C 3C", "9C 10S", "KH 6S"], melds=melds, turn=0, phase="play")
    result = _run(state, (0, Meld(("AC", "2C", "3C"))))  # the final meld's ace counts
    assert result.owed == (0, 5, 5)  # Tongits 3 + 2 aces
    assert result.payments == (10, -5, -5)


def test_table_b_ace_from_the_discard_counts_and_aces_in_hand_count() -> None:
    state = table(
        CLASSIC,
        hands=["AH AD AC 2C 9C", "9D 10S", "8C 10H"],
        melds=OPEN[1:],
        discards="AS",
        turn=0,
    )
    result = _run(
        state,
        (0, TakeDiscard(("AH", "AD"))),  # AS AH AD: the discard's ace is the winner's too
        (0, Discard("9C")),
        (1, Draw()),
        (1, Discard("9D")),
        (2, Draw()),
        (2, Discard("8C")),
        (0, CallDraw()),
        (1, Fold()),
        (2, Fold()),
    )
    assert result.winners == (0,)
    assert result.deadwood[0] == 3  # AC 2C
    assert result.owed == (0, 5, 5)  # unchallenged 1 + 3 aces in the meld + 1 in hand
    assert result.payments == (10, -5, -5)


def test_table_b_secret_set_3_face_down() -> None:
    state = table(
        CLASSIC,
        hands=["9S 9H 9D 9C 2S 3S 4S", "8C 10S", "8D 6S"],
        melds=OPEN[1:],
        turn=0,
        phase="play",
    )
    result = _run(
        state,
        (0, ExposeSecretSet(("9S", "9H", "9D", "9C"))),
        (0, Meld(("2S", "3S", "4S"))),
    )
    assert result.owed == (0, 6, 6)  # Tongits 3 + secret set 3
    assert result.melds[2].face_down  # revealed in the result
    assert result.melds[2].cards == ("9S", "9H", "9D", "9C")


def test_table_b_secret_set_concealed_in_the_winners_hand() -> None:
    state = table(CLASSIC, hands=["6S 6H 6D 6C 2S", "9C 10S", "8C 4D"], melds=OPEN, turn=0)
    result = _run(state, (0, CallDraw()), (1, Fold()), (2, Fold()))
    assert result.deadwood[0] == 2  # the concealed set is not deadwood under classic
    assert result.owed == (0, 4, 4)  # unchallenged 1 + secret set 3


def test_table_b_charges_the_full_worst_case_and_the_hold_covers_it() -> None:
    # Issue 17: the dealer's first turn, four aces and two more four-card sets all face
    # down, the 13th card discarded: Tongits 3 + three secret sets 9 + four aces 4 +
    # burned 1 = 17 from each loser, all of it charged (the hold was 11 and cut it).
    state = table(
        CLASSIC,
        hands=["AS AH AD AC 2S 2H 2D 2C 3S 3H 3D 3C 9S", "9C 10S", "8C 6D"],
        turn=0,
        phase="play",
    )
    result = _run(
        state,
        (0, ExposeSecretSet(("AS", "AH", "AD", "AC"))),
        (0, ExposeSecretSet(("2S", "2H", "2D", "2C"))),
        (0, ExposeSecretSet(("3S", "3H", "3D", "3C"))),
        (0, Discard("9S")),
    )
    assert result.ending == "tongits" and result.burned == (False, True, True)
    assert result.owed == (0, 17, 17)
    assert result.payments == (34, -17, -17)
    assert max_loss_units(CLASSIC) == 17


def test_table_b_two_secret_sets_and_four_aces_are_owed_in_full() -> None:
    # the example: four aces and four 2s face down, an opened loser owes 13
    state = table(
        CLASSIC,
        hands=["AS AH AD AC", "9C 10S", "8C 6D"],
        melds=[replace(meld(0, 0, "2S 2H 2D 2C"), face_down=True), meld(1, 1, "JH JD JC")],
        turn=0,
        phase="play",
    )
    result = _run(state, (0, ExposeSecretSet(("AS", "AH", "AD", "AC"))))
    assert result.owed == (0, 13, 14)
    assert result.payments == (27, -13, -14)


def _worst_holdings() -> Iterator[tuple[str, list[TableMeld], tuple[str, ...]]]:
    """Every shape of the cards a Table B winner can own (at most MAX_CARDS_HELD):
    ``k`` secret sets of any ranks, split between face down and concealed in hand, and
    every number of further aces in hand."""
    ranks = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
    for k in range(MAX_CARDS_HELD // 4 + 1):
        for chosen in combinations(ranks, k):
            quads = [[r + s for s in "SHDC"] for r in chosen]
            free = MAX_CARDS_HELD - 4 * k
            loose = 0 if "A" in chosen else min(4, free)
            for aces in range(loose + 1):
                for down in range(k + 1):
                    melds = [
                        replace(meld(i, 0, " ".join(q)), face_down=True)
                        for i, q in enumerate(quads[:down])
                    ]
                    hand = [c for q in quads[down:] for c in q]
                    hand += ["A" + s for s in "SHDC"[:aces]]
                    yield f"{chosen}/{aces}/{down}", melds, tuple(hand)


def test_the_classic_hold_is_the_enumerated_worst_case_of_table_b() -> None:
    """Enumerate every holding shape through the real scoring: the largest charge is
    exactly the hold, so the hold neither falls short nor is padded."""
    worst = 0
    for ending in ("tongits", "draw"):
        for name, melds, hand in _worst_holdings():
            state = table(CLASSIC, hands=[" ".join(hand), "", ""], melds=melds, stock="")
            call = DrawCall(caller=0, answers=("caller", "fight", "fold"))
            state = replace(state, draw_call=call if ending == "draw" else None)
            result = finish(state, ending, (0,), (0, 19, 14))  # type: ignore[arg-type]
            assert result.owed[2] <= max_loss_units(CLASSIC), name
            assert result.payments[2] == -result.owed[2], name
            worst = max(worst, result.owed[2])
    assert worst == max_loss_units(CLASSIC) == 17


def test_table_a_pays_no_bonuses_for_secret_sets_or_aces() -> None:
    options = options_for("kalaro", secret_sets=True)
    state = table(
        options, hands=["AS AH AD AC", "9C 10S", "8C 6D"], melds=OPEN[1:], turn=0, phase="play"
    )
    result = _run(state, (0, ExposeSecretSet(("AS", "AH", "AD", "AC"))))
    assert result.payments == (4, -2, -2)


# -- stock-out ties ---------------------------------------------------------------------


def test_split_tie_shares_each_payment_with_the_remainder_in_turn_order() -> None:
    # seats 0 and 1 tie at 5; after the last drawer (0) the order is 1, 2, 0
    result = _stock_out(KALARO, ["2C 3D", "AC 4D", "9C 10S"], OPEN)
    assert result.winners == (1, 0)
    assert result.payments == (0, 1, -1)
    assert result.next_dealer == 1
    result = _stock_out(KALARO, ["2C 3D", "AC 4D", "9C 10S"], OPEN_01)
    assert result.payments == (1, 1, -2)


def test_split_tie_of_everyone_moves_nothing() -> None:
    result = _stock_out(KALARO, ["2C 3D", "AC 4D", "AH 4S"], OPEN, last_drawer=2)
    assert result.winners == (0, 1, 2)
    assert result.payments == (0, 0, 0)
    assert result.next_dealer == 0


def test_last_drawer_wins_a_tie_on_classic_tables() -> None:
    result = _stock_out(CLASSIC, ["2C 3D", "AC 4D", "9C 10S"], OPEN, last_drawer=0)
    assert result.winners == (0,)
    assert result.payments == (2, -1, -1)


def test_without_the_last_drawer_the_tied_player_first_after_them_wins() -> None:
    # last drawer 2 has 19; seats 0 and 1 tie; after seat 2 comes seat 0
    result = _stock_out(CLASSIC, ["2C 3D", "AC 4D", "9C 10S"], OPEN, last_drawer=2, dealer=1)
    assert result.winners == (0,)
    assert result.next_dealer == 0
    # last drawer 0 not in the tie of seats 1 and 2: seat 1 first after seat 0
    result = _stock_out(CLASSIC, ["9C 10S", "AC 4D", "2C 3D"], OPEN, last_drawer=0)
    assert result.winners == (1,)


def test_nobody_opened_at_stock_out_no_winner_and_the_dealer_stays() -> None:
    for options in (KALARO, CLASSIC):
        result = _stock_out(options, ["2C 3D", "AC 4D", "9C 10S"], [], dealer=2)
        assert result.ending == "stock_out"
        assert result.winners == ()
        assert result.payments == (0, 0, 0)
        assert result.next_dealer == 2
        assert result.burned == (True, True, True)


@pytest.mark.parametrize("options", [KALARO, CLASSIC])
def test_no_loser_pays_more_than_the_maximum(options: Options) -> None:
    result = _tongits(options, OPEN_01)
    assert min(result.payments) >= -max_loss_units(options)


def test_a_tongits_winner_who_never_opened_is_not_burned() -> None:
    state = table(
        hands=["8H", "AS 2H 5C", "8C 10S"], melds=[meld(0, 1, "5H 6H 7H")], turn=0, phase="play"
    )
    result = _run(state, (0, LayOff(cards=("8H",), meld_id=0)))
    assert result.winners == (0,)
    assert result.burned == (False, False, True)
    assert result.payments == (6, -2, -4)
