"""Ka Wu Xing scoring: one scenario per score item and per kong score, the cap, Show Hand,
two winners on one discard, host rotation, and the most one player can lose.

Hands are rigged (``kawuxing_helpers.rig``); seat 0 deals and draws first; ``None``
seats hold filler tiles that can claim nothing. Notation: ``p`` dots, ``s`` bamboo,
``5z 6z 7z`` the White, Green and Red dragons.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kalaro.games import kawuxing as kw
from kalaro.games.kawuxing import (
    Claim,
    DeclareKong,
    DeclareWin,
    Discard,
    Draw,
    HandWon,
    Meld,
    Options,
    Pass,
    ShowHand,
)
from tests.unit.kawuxing.kawuxing_helpers import (
    DEFAULT,
    accounted,
    play,
    play_out,
    pong,
    result,
    rig,
)


def on_discard(
    hand: str,
    tile: str,
    melds: Sequence[Meld] = (),
    *,
    shown: Sequence[int] = (),
    options: Options = DEFAULT,
) -> kw.Result:
    """Seat 0 draws ``tile`` and discards it; seat 1, holding ``hand``, wins on it."""
    state = rig([None, hand, None], front=tile, melds={1: melds}, shown=shown, options=options)
    state, _ = play(state, [(0, Draw()), (0, Discard(tile))])
    assert kw.legal_actions(state, 1)[0] == Claim(kind="win")
    state, _ = kw.apply(state, 1, Claim(kind="win"))
    assert accounted(state)
    return result(state)


def self_drawn(
    hand: str,
    tile: str,
    melds: Sequence[Meld] = (),
    *,
    options: Options = DEFAULT,
    wall_size: int | None = None,
) -> kw.Result:
    """Seat 0, holding ``hand``, draws ``tile`` and wins."""
    state = rig(
        [hand, None, None], front=tile, melds={0: melds}, options=options, wall_size=wall_size
    )
    state, _ = play(state, [(0, Draw()), (0, DeclareWin())])
    assert accounted(state)
    return result(state)


def items(outcome: kw.Result, winner: int = 0) -> list[str]:
    return [item.name for item in outcome.wins[winner].items]


# -- score items, one scenario each -------------------------------------------------------


def test_all_triplets_x2() -> None:
    outcome = on_discard("222p 333s 555p 77s 88s", "8s")
    assert items(outcome) == ["all_triplets"]
    assert (outcome.wins[0].multiplier, outcome.payments) == (2, (-2, 2, 0))


def test_exposed_tile_hog_x2_counts_the_claimed_winning_tile() -> None:
    # Pong of 3s on the table, the fourth 3s is the discard that completes 3-4-5.
    outcome = on_discard("45s 567p 789p 11p", "3s", [pong("3s", from_seat=2)])
    assert [(i.name, i.tile) for i in outcome.wins[0].items] == [("exposed_tile_hog", "3s")]
    assert outcome.payments == (-2, 2, 0)


def test_concealed_tile_hog_x4_counts_the_claimed_winning_tile() -> None:
    outcome = on_discard("333s 45s 567p 789p 11p", "3s")
    assert [(i.name, i.tile) for i in outcome.wins[0].items] == [("concealed_tile_hog", "3s")]
    assert outcome.payments == (-4, 4, 0)


def test_seven_pairs_x4() -> None:
    outcome = on_discard("11p 33p 55p 77s 99s 22s 6z", "6z")
    assert items(outcome) == ["seven_pairs"]
    assert outcome.payments == (-4, 4, 0)


def test_seven_pairs_with_two_identical_pairs_x8() -> None:
    outcome = on_discard("1111p 33p 55p 77s 99s 6z", "6z")
    assert items(outcome) == ["seven_pairs_two_identical"]
    assert outcome.payments == (-8, 8, 0)


def test_seven_pairs_with_four_identical_pairs_x16_beats_the_cap_of_8() -> None:
    outcome = on_discard("1111p 3333p 55p 77s 6z", "6z")
    win = outcome.wins[0]
    assert items(outcome) == ["seven_pairs_four_identical"]
    assert (win.raw, win.cap, win.multiplier) == (16, 16, 16)
    assert outcome.payments == (-16, 16, 0)


def test_the_x16_exception_is_itself_capped_at_16() -> None:
    # Four identical pairs in one suit: 16 x 4 = 64, cut to 16 (not to 8).
    outcome = on_discard("1111p 3333p 55p 77p 9p", "9p")
    win = outcome.wins[0]
    assert items(outcome) == ["seven_pairs_four_identical", "pure_one_suit"]
    assert (win.raw, win.cap, win.multiplier) == (64, 16, 16)


def test_big_three_dragons_x8() -> None:
    outcome = on_discard("555z 666z 77z 123p 99p", "7z")
    assert items(outcome) == ["big_three_dragons"]
    assert outcome.payments == (-8, 8, 0)


def test_small_three_dragons_x4() -> None:
    # The same hand completed on the other wait: two dragon pongs and a dragon pair.
    outcome = on_discard("555z 666z 77z 123p 99p", "9p")
    assert items(outcome) == ["small_three_dragons"]
    assert outcome.payments == (-4, 4, 0)


def test_dragon_pongs_count_when_exposed_too() -> None:
    outcome = on_discard("77z 123p 99p", "7z", [pong("5z"), pong("6z", from_seat=2)])
    assert items(outcome) == ["big_three_dragons"]


def test_a_concealed_kong_replacement_win_is_no_win_on_kong() -> None:
    # Issue 17: Win on Kong only after a visible kong; this one is concealed.
    state = rig(["1111s 234p 567p 8p 55z", None, None], front="8p", back="5z")
    state, _ = play(state, [(0, Draw()), (0, DeclareKong("1s"))])
    assert state.drawn == "5z" and state.replacement
    state, _ = kw.apply(state, 0, DeclareWin())
    outcome = result(state)
    assert items(outcome) == []  # a chicken hand, fine by self-draw
    # Win: 1 from each (self-draw); concealed kong: 2 from each.
    assert outcome.payments == (6, -3, -3)
    assert [(c.payer, c.reason, c.units) for c in outcome.charges] == [
        (1, "concealed_kong", 2),
        (2, "concealed_kong", 2),
        (1, "win", 1),
        (2, "win", 1),
    ]


def test_win_on_kong_x2_after_an_exposed_kong_claimed_from_a_discard() -> None:
    state = rig(["111s 234p 567p 88p 55z", None, None], front="1s", back="5z", dealer=1)
    state, _ = play(state, [(1, Draw()), (1, Discard("1s"))])
    state, _ = play(state, [(0, Claim(kind="kong", tiles=("1s", "1s", "1s")))])
    assert state.drawn == "5z" and state.replacement
    state, _ = kw.apply(state, 0, DeclareWin())
    outcome = result(state)
    assert items(outcome) == ["win_on_kong"]
    # Win: 2 from each (self-draw); exposed kong: 2 from the discarder (seat 1).
    assert outcome.payments == (6, -4, -2)


def test_win_on_kong_x2_after_an_extended_kong() -> None:
    state = rig(["1s 234p 567p 8p 55z", None, None], front="8p", back="5z", melds={0: [pong("1s")]})
    state, _ = play(state, [(0, Draw()), (0, DeclareKong("1s"))])
    assert state.players[0].melds[0].kong == "extended" and state.drawn == "5z"
    state, _ = kw.apply(state, 0, DeclareWin())
    outcome = result(state)
    assert items(outcome) == ["win_on_kong"]
    # Win: 2 from each (self-draw); extended kong: 1 from each.
    assert outcome.payments == (6, -3, -3)


def test_a_normal_self_draw_is_not_a_win_on_kong() -> None:
    outcome = self_drawn("234p 567p 88p 55z 111s", "5z")
    assert items(outcome) == []  # a chicken hand, fine by self-draw
    assert outcome.payments == (2, -1, -1)


# Seat 1's hand (edge wait on 3p) is a chicken hand: it wins on seat 0's 3p discard only
# with Fire on Kong, i.e. right after a visible kong of seat 0's.
FIRE = ["1111s 258p 258s 5z 6z 7z", "12p 456s 789s 234p 99s", None]


def test_no_fire_on_kong_after_a_concealed_kong_so_a_chicken_hand_is_not_offered() -> None:
    # Issue 17: seat 0 conceals a kong of 1s, replaces with 3p and discards it.
    state = rig(FIRE, front="9p", back="3p")
    state, _ = play(state, [(0, Draw()), (0, DeclareKong("1s")), (0, Discard("3p"))])
    assert state.call is None and (state.phase, state.turn) == ("draw", 1)  # nobody asked
    assert not kw.can_win_on(state, 1, "3p", robbing=False, after_kong=False)[1]


def test_fire_on_kong_x2_after_an_extended_kong_lets_a_chicken_hand_win() -> None:
    hands = ["1s 258p 258s 5z 6z 7z", FIRE[1], None]
    state = rig(hands, front="9p", back="3p", melds={0: [pong("1s", from_seat=2)]})
    state, _ = play(state, [(0, Draw()), (0, DeclareKong("1s")), (0, Discard("3p"))])
    assert kw.legal_actions(state, 1) == [Claim(kind="win"), Pass()]
    state, _ = kw.apply(state, 1, Claim(kind="win"))
    outcome = result(state)
    assert items(outcome, 0) == ["fire_on_kong"]
    # Seat 0 pays the win (2) but collects its extended kong (1 from each).
    assert outcome.payments == (-2 + 2, 2 - 1, -1)


def test_without_the_kong_the_same_discard_is_a_chicken_hand_and_not_offered() -> None:
    state = rig(FIRE, front="3p")
    state, _ = play(state, [(0, Draw()), (0, Discard("3p"))])
    assert state.phase == "draw" and state.turn == 1  # nobody was asked


# Seat 0 holds a pong of 7s and draws the fourth; seat 1 waits on 4s-7s with a chicken hand.
ROB = ["258p 258s 5z 6z 7z 1p", "56s 234p 567p 888p 99s", None]


def test_rob_a_kong_x2_paid_by_the_kong_maker_and_the_kong_never_scores() -> None:
    state = rig(ROB, front="7s", melds={0: [pong("7s", from_seat=2)]})
    state, events = play(state, [(0, Draw()), (0, DeclareKong("7s"))])
    assert isinstance(events[-1], kw.ClaimsOffered) and state.call and state.call.robbing
    assert kw.legal_actions(state, 1) == [Claim(kind="win"), Pass()]
    state, events = kw.apply(state, 1, Claim(kind="win"))
    assert any(isinstance(e, HandWon) and e.robbed_kong for e in events)
    outcome = result(state)
    assert (outcome.ending, outcome.discarder, items(outcome)) == ("robbed_kong", 0, ["rob_a_kong"])
    assert outcome.payments == (-2, 2, 0)
    assert state.players[0].melds == (pong("7s", from_seat=2),)  # still a pong
    assert "7s" in state.players[1].hand and "7s" not in state.players[0].hand
    assert accounted(state)


def test_an_unrobbed_extended_kong_scores_1_from_each_other_player() -> None:
    state = rig(ROB, front="7s", melds={0: [pong("7s", from_seat=2)]}, wall_size=8)
    state, _ = play(state, [(0, Draw()), (0, DeclareKong("7s")), (1, Pass())])
    assert state.players[0].melds[0].kong == "extended"
    outcome = result(play_out(state))
    assert outcome.ending == "wall_out"
    assert outcome.payments == (2, -1, -1)


def test_pure_one_suit_x4() -> None:
    outcome = on_discard("123p 456p 789p 11p 23p", "4p")
    assert items(outcome) == ["pure_one_suit"]
    assert outcome.payments == (-4, 4, 0)


def test_one_in_hand_x4_comes_with_all_triplets() -> None:
    melds = [pong("2p"), pong("5s"), pong("6z", from_seat=2), pong("8p")]
    outcome = on_discard("9s", "9s", melds)
    assert items(outcome) == ["all_triplets", "one_in_hand"]
    assert outcome.wins[0].multiplier == 8


def test_ka_wu_xing_x2_win_on_the_closed_5() -> None:
    outcome = on_discard("46s 123p 456p 789p 99s", "5s")
    assert items(outcome) == ["ka_wu_xing"]
    assert outcome.payments == (-2, 2, 0)


def test_a_5_that_is_not_the_middle_of_4_5_6_is_no_ka_wu_xing() -> None:
    # 6-7 waiting on 5s or 8s: a 5-6-7 run, a chicken hand, so only a self-draw wins.
    state = rig([None, "67s 123p 456p 789p 99s", None], front="5s")
    state, _ = play(state, [(0, Draw()), (0, Discard("5s"))])
    assert state.phase == "draw"
    assert items(self_drawn("67s 123p 456p 789p 99s", "5s")) == []


def test_ka_wu_xing_takes_the_reading_that_scores_it() -> None:
    # 4-6 and a 5-5 pair waiting on 5s (or 4-6 + 5 pong): read as 4-5-6 + 5-5 it is the
    # closed 5, and the best reading counts.
    outcome = on_discard("46s 55s 123p 456p 789p", "5s")
    assert "ka_wu_xing" in items(outcome)


def test_win_on_last_tile_x2() -> None:
    outcome = self_drawn("234p 567p 88p 55z 111s", "5z", wall_size=1)
    assert items(outcome) == ["win_on_last_tile"]
    assert outcome.payments == (4, -2, -2)


def test_items_multiply() -> None:
    # Pure one suit (x4) and Ka Wu Xing (x2) and a concealed tile hog (x4): 32, cut to 8.
    outcome = on_discard("111p 123p 46p 789p 99p", "5p")
    win = outcome.wins[0]
    assert items(outcome) == ["concealed_tile_hog", "pure_one_suit", "ka_wu_xing"]
    assert (win.raw, win.cap, win.multiplier) == (32, 8, 8)


# -- the cap --------------------------------------------------------------------------


@pytest.mark.parametrize(("cap", "paid"), [(8, 8), (4, 4), (32, 16), (None, 16)])
def test_the_cap_cuts_the_product_of_the_items(cap: int | None, paid: int) -> None:
    # Seven pairs (x4) in one suit (x4) = 16.
    options = kw.options_for("kawuxing", cap=cap)
    outcome = on_discard("11p 33p 55p 77p 99p 22p 4p", "4p", options=options)
    assert outcome.wins[0].raw == 16
    assert outcome.payments == (-paid, paid, 0)


# -- chicken hands --------------------------------------------------------------------


def test_a_chicken_hand_is_not_offered_a_discard_and_the_claim_says_why() -> None:
    # Seat 1 waits on 5s or 8s with no score item; seat 2 can pong 8s, so a window opens.
    state = rig([None, "67s 123p 456p 789p 99s", "88s 14p 25p 7p 369s 5z 6z 7z"], front="8s")
    seen = kw.view(state, 1)
    assert [(w.tile, w.self_draw_only) for w in seen.waits] == [("5s", True), ("8s", True)]
    state, _ = play(state, [(0, Draw()), (0, Discard("8s"))])
    assert kw.to_act(state) == [2]
    assert kw.legal_actions(state, 1) == []
    before = kw.view(state, 1)
    with pytest.raises(kw.IllegalAction) as refused:
        kw.apply(state, 1, Claim(kind="win"))
    assert refused.value.code == "chicken_hand"
    assert kw.view(state, 1) == before


def test_a_waiting_hand_with_an_item_is_told_it_may_win_on_a_discard() -> None:
    state = rig([None, "46s 123p 456p 789p 99s", None])
    assert [(w.tile, w.self_draw_only) for w in kw.view(state, 1).waits] == [("5s", False)]


# -- kong scores ----------------------------------------------------------------------


def test_an_exposed_kong_scores_2_from_the_discarder_even_in_a_draw() -> None:
    state = rig([None, "777s 14p 25p 36p 5z 6z 7z 9p", None], front="7s", wall_size=6)
    state, _ = play(state, [(0, Draw()), (0, Discard("7s"))])
    assert kw.legal_actions(state, 1) == [
        Claim(kind="kong", tiles=("7s", "7s", "7s")),
        Claim(kind="pong", tiles=("7s", "7s")),
        Pass(),
    ]
    state, _ = kw.apply(state, 1, Claim(kind="kong", tiles=("7s", "7s", "7s")))
    assert state.players[1].melds[0].kong == "exposed" and state.replacement
    outcome = result(play_out(state))
    assert outcome.ending == "wall_out"
    assert [(c.payer, c.payee, c.reason, c.units) for c in outcome.charges] == [
        (0, 1, "exposed_kong", 2)
    ]
    assert outcome.payments == (-2, 2, 0)


def test_a_concealed_kong_scores_2_from_each_other_player() -> None:
    state = rig(["1111s 258p 258s 5z 6z 7z", None, None], front="9p", wall_size=6)
    state, _ = play(state, [(0, Draw()), (0, DeclareKong("1s"))])
    outcome = result(play_out(state))
    assert outcome.payments == (4, -2, -2)


@pytest.mark.parametrize("kong_on_kong", [False, True])
def test_kong_on_kong_doubles_the_second_kong_when_the_option_is_on(kong_on_kong: bool) -> None:
    # The replacement of the concealed 1s kong is the fourth 7s of an exposed pong.
    options = kw.options_for("kawuxing", kong_on_kong=kong_on_kong)
    state = rig(
        ["1111s 258p 25s 6z", None, None],
        melds={0: [pong("7s", from_seat=1)]},
        front="9p",
        back="7s",
        wall_size=8,
        options=options,
    )
    state, _ = play(state, [(0, Draw()), (0, DeclareKong("1s")), (0, DeclareKong("7s"))])
    assert [m.on_kong for m in state.players[0].melds] == [True, False]  # extended, then concealed
    outcome = result(play_out(state))
    extended = 2 if kong_on_kong else 1
    assert outcome.payments == (2 * (2 + extended), -(2 + extended), -(2 + extended))


# -- Show Hand ------------------------------------------------------------------------


def test_a_shown_hand_doubles_its_self_draw() -> None:
    # Seat 0 shows after its first draw; seats 1 and 2 draw 9p and 9s; then seat 0 draws 5s.
    state = rig(["46s 123p 456p 789p 99s", None, None], front="1s 9p 9s 5s")
    state, _ = play(state, [(0, Draw()), (0, ShowHand("1s"))])
    state = play_until_turn(state, 0)
    state, _ = play(state, [(0, Draw()), (0, DeclareWin())])
    outcome = result(state)
    win = outcome.wins[0]
    assert (items(outcome), win.shown, win.multiplier) == (["ka_wu_xing"], True, 2)
    assert outcome.payments == (8, -4, -4)


def test_a_shown_hand_fired_by_a_discard_is_paid_as_a_self_draw_by_the_discarder() -> None:
    # A shown chicken hand may win on a discard; scored x1, doubled, two shares, all from seat 0.
    outcome = on_discard("67s 123p 456p 789p 99s", "5s", shown=[1])
    win = outcome.wins[0]
    assert (items(outcome), win.shown, win.as_self_draw) == ([], True, True)
    assert outcome.payments == (-4, 4, 0)


def test_a_shown_loser_pays_double() -> None:
    state = rig(["456p 789p 555z 66z 77z", "46s 123p 456p 789p 99s", None], front="5s", shown=[0])
    state, events = kw.apply(state, 0, Draw())  # a shown hand's draw is discarded for it
    assert isinstance(events[1], kw.TileDiscarded) and events[1].auto
    state, _ = kw.apply(state, 1, Claim(kind="win"))
    assert result(state).payments == (-4, 4, 0)


def test_two_winners_on_one_discard_both_paid_by_the_discarder() -> None:
    state = rig([None, "46s 123p 456p 789p 99s", "5s 11p 33p 77p 22s 88s 55z"], front="5s")
    state, _ = play(state, [(0, Draw()), (0, Discard("5s"))])
    state, _ = kw.apply(state, 2, Claim(kind="win"))
    assert kw.to_act(state) == [1], "the window waits for the other possible winner"
    state, events = kw.apply(state, 1, Claim(kind="win"))
    assert [e.seat for e in events if isinstance(e, HandWon)] == [1, 2]
    outcome = result(state)
    assert outcome.winners == (1, 2) and outcome.discarder == 0
    assert [items(outcome, 0), items(outcome, 1)] == [["ka_wu_xing"], ["seven_pairs"]]
    assert outcome.payments == (-6, 2, 4)
    assert outcome.next_dealer == 1, "the first winner (nearer after the discarder) hosts next"
    assert accounted(state)


def test_when_one_of_two_possible_winners_passes_the_other_wins_alone() -> None:
    state = rig([None, "46s 123p 456p 789p 99s", "5s 11p 33p 77p 22s 88s 55z"], front="5s")
    state, _ = play(state, [(0, Draw()), (0, Discard("5s")), (1, Pass()), (2, Claim(kind="win"))])
    outcome = result(state)
    assert (outcome.winners, outcome.payments, outcome.next_dealer) == ((2,), (-4, 0, 4), 2)


# -- host rotation --------------------------------------------------------------------


def test_a_draw_keeps_the_host() -> None:
    state = rig([None, None, None], dealer=2, wall_size=3)
    outcome = result(play_out(state))
    assert (outcome.ending, outcome.next_dealer, outcome.payments) == ("wall_out", 2, (0, 0, 0))


def test_the_winner_hosts_next() -> None:
    assert on_discard("46s 123p 456p 789p 99s", "5s").next_dealer == 1


# -- the most one player can lose -----------------------------------------------------


def test_max_loss_is_computed_from_cap_show_hand_two_winners_and_kongs() -> None:
    # Two winners x (two shares x shown winner x shown loser) x 16, plus 2 x (2 + 3 x 2).
    assert kw.max_loss_units(DEFAULT) == 2 * 8 * 16 + 16 == 272
    assert kw.max_loss_units(kw.options_for("kawuxing", kong_on_kong=True)) == 256 + 2 * (2 + 12)
    assert kw.max_loss_units(kw.options_for("kawuxing", cap=32)) == 16 * 32 + 16
    assert kw.max_loss_units(kw.options_for("kawuxing", cap=None)) == 16 * 1024 + 16
    assert kw.max_loss_units(kw.options_for("kawuxing", cap=2)) == 16 * 16 + 16
    assert kw.max_loss_units(kw.options_for("kawuxing", loss_limit=50)) == 50


def test_the_worst_win_reaches_the_bound() -> None:
    # Seat 0 is shown and its draw (9s) is discarded for it; both others are shown with
    # seven pairs with four identical pairs, waiting on 9s: each is paid as a self-draw
    # (x2), shown (x2), by a shown loser (x2), at x16.
    state = rig(
        ["456p 789p 555z 66z 77z", "1111p 3333p 55p 77p 9s", "2222s 4444s 66s 88s 9s"],
        front="9s",
        shown=[0, 1, 2],
    )
    state, _ = play(state, [(0, Draw()), (1, Claim(kind="win")), (2, Claim(kind="win"))])
    outcome = result(state)
    assert outcome.payments == (-256, 128, 128)
    assert -outcome.payments[0] == kw.max_loss_units(DEFAULT) - 16  # all but the kong part


def test_the_largest_product_of_items_is_the_documented_hand() -> None:
    # Three concealed tile hogs, one suit, Ka Wu Xing, the last tile: 4 x 4 x 4 x 4 x 2 x 2.
    outcome = self_drawn(
        "4444s 555s 6666s 77s", "5s", wall_size=1, options=kw.options_for("kawuxing", cap=None)
    )
    win = outcome.wins[0]
    assert win.raw == win.multiplier == kw.scoring.MAX_RAW_MULTIPLIER == 1024
    assert kw.max_multiplier(kw.options_for("kawuxing", cap=None)) == 1024
    assert outcome.payments == (2048, -1024, -1024)


def test_a_loss_limit_cuts_what_a_loser_pays() -> None:
    options = kw.options_for("kawuxing", loss_limit=10)
    outcome = on_discard("1111p 3333p 55p 77s 6z", "6z", options=options)
    charge = outcome.charges[-1]
    assert (charge.due, charge.units, outcome.payments) == (16, 10, (-10, 10, 0))


# -- helpers for Show Hand scenarios --------------------------------------------------


def play_until_turn(state: kw.State, seat: int) -> kw.State:
    """Let the others draw and discard their draws (passing claims) until ``seat`` must draw."""
    while not (state.phase == "draw" and state.turn == seat):
        if state.phase == "calls":
            state, _ = kw.apply(state, kw.to_act(state)[0], Pass())
        elif state.phase == "draw":
            state, _ = kw.apply(state, state.turn, Draw())
        else:
            state, _ = kw.apply(state, state.turn, Discard(state.drawn or ""))
    return state
