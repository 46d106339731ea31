"""Filipino Mahjong, ``kalaro`` ruleset: one or more tests per rule line of RULES.md.

Hands are rigged (see ``helpers.rig``); seat 0 deals unless a test says otherwise.
"""

from __future__ import annotations

import pytest

from kalaro.games import mahjong as mj
from kalaro.games.base import IllegalAction, pick, shuffled
from kalaro.games.mahjong import (
    CallAnswered,
    CallsPassed,
    CallWindowOpened,
    Claim,
    ClaimsOffered,
    DeclareKang,
    DeclareWin,
    Discard,
    Draw,
    FlowerReplaced,
    HandWon,
    KangDeclared,
    Meld,
    Pass,
    State,
    TileClaimed,
    TileDiscarded,
    TileDrawn,
    TimeOut,
    Timer,
    WallExhausted,
)
from kalaro.games.tiles import MAHJONG_144, is_flower
from tests.unit.mahjong.helpers import accounted, play, rig
from tests.unit.mahjong.tables import (
    CLAIMS,
    KANG_CLAIM,
    KANGS,
    TWO_WINNERS,
    WIN_OVER_PONG,
    after_discard,
    rotated,
)


def raises(state: State, seat: int, action: mj.AnyAction, code: str) -> None:
    """The action is refused with ``code`` and the state is what it was."""
    before = mj.view(state, seat)
    with pytest.raises(IllegalAction) as caught:
        mj.apply(state, seat, action)
    assert caught.value.code == code
    assert mj.view(state, seat) == before


# -- 144 tiles, the deal, flowers ----------------------------------------------------------


def _expected_deal(seed: bytes, dealer: int) -> tuple[list[list[str]], list[list[str]], int]:
    """The documented deal, rebuilt by hand: four rounds of four from the dealer, then
    seat by seat from the dealer, flowers aside and replaced from the back, repeatedly.
    """
    tiles = shuffled(MAHJONG_144, seed)
    hands: list[list[str]] = [[] for _ in range(4)]
    flowers: list[list[str]] = [[] for _ in range(4)]
    front, back = 0, len(tiles)
    for _ in range(4):
        for i in range(4):
            hands[(dealer + i) % 4] += tiles[front : front + 4]
            front += 4
    for i in range(4):
        seat = (dealer + i) % 4
        while any(is_flower(t) for t in hands[seat]):
            for tile in [t for t in hands[seat] if is_flower(t)]:
                hands[seat].remove(tile)
                flowers[seat].append(tile)
                back -= 1
                hands[seat].append(tiles[back])
    return hands, flowers, back - front


@pytest.mark.parametrize("n", range(12))
def test_deal_16_each_flowers_aside_and_replaced_from_the_back(n: int) -> None:
    seed = f"deal-{n}".encode()
    state = mj.new_hand(mj.options_for("kalaro"), seed)
    dealer = pick(seed, "dealer", 4)
    hands, flowers, wall = _expected_deal(seed, dealer)
    assert state.dealer == dealer
    for seat in range(4):
        assert sorted(state.players[seat].hand) == sorted(hands[seat])
        assert len(state.players[seat].hand) == 16
        assert not any(is_flower(t) for t in state.players[seat].hand)
        assert list(state.players[seat].flowers) == flowers[seat]
    assert len(state.wall) == wall == 80 - sum(len(f) for f in flowers)
    assert accounted(state)


def test_a_flower_drawn_as_a_deal_replacement_is_replaced_again() -> None:
    # Some seed makes a replacement at the deal itself a flower; find one and check.
    for n in range(500):
        seed = f"chain-{n}".encode()
        dealer = pick(seed, "dealer", 4)
        tiles = shuffled(MAHJONG_144, seed)
        dealt_flowers = sum(is_flower(t) for t in tiles[:64])
        state = mj.new_hand(mj.options_for("kalaro"), seed)
        total = sum(len(p.flowers) for p in state.players)
        if total > dealt_flowers:
            assert accounted(state)
            assert all(not any(is_flower(t) for t in p.hand) for p in state.players)
            assert len(state.wall) == 80 - total
            assert state.dealer == dealer
            return
    pytest.fail("no seed in range gave a flower chain at the deal")


def test_the_dealer_draws_first() -> None:
    state = mj.new_hand(mj.options_for("kalaro"), b"first", dealer=2)
    assert (state.turn, state.phase, mj.to_act(state)) == (2, "draw", [2])
    assert mj.legal_actions(state, 2) == [Draw()]
    assert all(mj.legal_actions(state, s) == [] for s in (0, 1, 3))
    raises(state, 3, Draw(), "not_your_turn")
    state, events = mj.apply(state, 2, Draw())
    assert len(state.players[2].hand) == 17
    assert state.drawn is not None and not is_flower(state.drawn)
    assert isinstance(events[0], TileDrawn) and not events[0].replacement
    assert (state.turn, state.phase) == (2, "discard")


def test_first_dealer_comes_from_the_seed_and_a_bad_dealer_is_refused() -> None:
    dealers = {mj.new_hand(mj.options_for("kalaro"), bytes([n])).dealer for n in range(40)}
    assert dealers == {0, 1, 2, 3}
    with pytest.raises(ValueError):
        mj.new_hand(mj.options_for("kalaro"), b"x", dealer=4)


def test_flowers_drawn_in_play_are_replaced_from_the_back_repeatedly() -> None:
    state = rig(CLAIMS, front="1f", back="2f 3f 9s")
    wall = state.wall
    state, events = mj.apply(state, 0, Draw())
    assert events == [
        TileDrawn(seat=0, tile="1f"),
        FlowerReplaced(seat=0, flower="1f"),
        TileDrawn(seat=0, tile="2f", replacement=True),
        FlowerReplaced(seat=0, flower="2f"),
        TileDrawn(seat=0, tile="3f", replacement=True),
        FlowerReplaced(seat=0, flower="3f"),
        TileDrawn(seat=0, tile="9s", replacement=True),
    ]
    assert state.players[0].flowers[-3:] == ("1f", "2f", "3f")
    assert state.drawn == "9s" and "9s" in state.players[0].hand
    assert state.wall == wall[1:-3]
    assert accounted(state)


def test_a_flower_chain_that_empties_the_wall_is_tabla() -> None:
    state = rig(CLAIMS, front="1f", back="2f", wall_size=2)
    state, events = mj.apply(state, 0, Draw())
    assert isinstance(events[-1], WallExhausted)
    result = mj.result(state)
    assert result is not None and result.ending == "wall_out"
    assert accounted(state)


# -- the turn -------------------------------------------------------------------------


def test_draw_then_discard_passes_the_turn() -> None:
    state = rig(CLAIMS, front="9s")
    raises(state, 0, Discard("5m"), "must_draw_first")
    raises(state, 0, DeclareWin(), "must_draw_first")
    state, _ = mj.apply(state, 0, Draw())
    raises(state, 0, Draw(), "already_drawn")
    raises(state, 0, Discard("9p"), "tile_not_in_hand")
    raises(state, 1, Discard("3m"), "not_your_turn")
    state, events = mj.apply(state, 0, Discard("7z"))  # nobody can use a 7z
    assert events == [TileDiscarded(seat=0, tile="7z")]
    assert (state.turn, state.phase) == (1, "draw")
    assert state.players[0].discards[-1] == "7z"


def test_legal_actions_after_a_draw_list_each_tile_once() -> None:
    state, _ = play(rig(CLAIMS, front="9s"), [(0, Draw())])
    legal = mj.legal_actions(state, 0)
    assert legal == [Discard(t) for t in dict.fromkeys(state.players[0].hand)]


def test_concealed_kang_draws_a_replacement_from_the_back() -> None:
    state = rig(KANGS, front="7s", back="7s 7s")
    state, _ = mj.apply(state, 0, Draw())
    assert DeclareKang("1p") in mj.legal_actions(state, 0)
    assert DeclareKang("2p") in mj.legal_actions(state, 0)
    wall = state.wall
    state, events = mj.apply(state, 0, DeclareKang("1p"))
    meld = Meld(kind="kang", tiles=("1p",) * 4, concealed=True)
    assert events == [
        KangDeclared(seat=0, meld=meld, added=False),
        TileDrawn(seat=0, tile="7s", replacement=True),
    ]
    assert state.players[0].melds == (meld,)
    assert "1p" not in state.players[0].hand
    assert state.wall == wall[:-1]
    assert (state.turn, state.phase, state.drawn) == (0, "discard", "7s")
    assert accounted(state)


def test_added_kang_puts_the_fourth_tile_on_ones_pong() -> None:
    pong = Meld(kind="pong", tiles=("9m",) * 3, claimed="9m", from_seat=3)
    hands = ("9m 222p 333p 444p 55p 7p", "111m 222m 333m 444m 55m 2z 3z",
             "666m 777m 888m 5m 1s 2s 3s 4s 5z 6z", "56789s 56789s 1z 2z 3z 4z 5z 6z")  # fmt: skip
    state = rig(hands, front="1z", back="6p", melds={0: [pong]})
    raises(state, 0, DeclareKang("9m"), "must_draw_first")
    state, _ = mj.apply(state, 0, Draw())
    assert DeclareKang("9m") in mj.legal_actions(state, 0)
    raises(state, 0, DeclareKang("2p"), "cannot_kang")
    raises(state, 0, DeclareKang("8m"), "tile_not_in_hand")
    state, events = mj.apply(state, 0, DeclareKang("9m"))
    kang = Meld(kind="kang", tiles=("9m",) * 4, claimed="9m", from_seat=3)
    assert events[0] == KangDeclared(seat=0, meld=kang, added=True)
    assert state.players[0].melds == (kang,)
    assert state.drawn == "6p" and len(state.players[0].hand) == 14
    assert accounted(state)


def test_no_kang_when_no_tile_is_left_for_the_replacement() -> None:
    state = rig(KANGS, front="7s", wall_size=1)
    state, _ = mj.apply(state, 0, Draw())
    assert not any(isinstance(a, DeclareKang) for a in mj.legal_actions(state, 0))
    raises(state, 0, DeclareKang("1p"), "cannot_kang")


def test_self_draw_win_bunot() -> None:
    state = rig(KANGS, front="7s", back="7s 7s")
    state, _ = play(state, [(0, Draw()), (0, DeclareKang("1p"))])
    raises(state, 0, DeclareWin(), "hand_not_complete")
    state, _ = mj.apply(state, 0, DeclareKang("2p"))
    assert mj.legal_actions(state, 0)[0] == DeclareWin()
    state, events = mj.apply(state, 0, DeclareWin())
    assert events == [HandWon(seat=0, tile="7s", self_draw=True)]
    assert mj.is_over(state) and mj.to_act(state) == []
    raises(state, 0, Discard("7s"), "hand_over")
    assert all(mj.legal_actions(state, s) == [] for s in range(4))


# -- claims on a discard ----------------------------------------------------------------


def test_each_player_is_told_privately_what_they_may_claim() -> None:
    state = rig(CLAIMS, front="9s")
    state, _ = mj.apply(state, 0, Draw())
    state, events = mj.apply(state, 0, Discard("5m"))
    chows = [
        Claim(kind="chow", tiles=("3m", "4m")),
        Claim(kind="chow", tiles=("4m", "6m")),
        Claim(kind="chow", tiles=("6m", "7m")),
    ]
    assert events == [
        TileDiscarded(seat=0, tile="5m"),
        CallWindowOpened(discarder=0, tile="5m", seconds=10),
        ClaimsOffered(seat=1, tile="5m", claims=tuple(chows), seconds=10),
        ClaimsOffered(
            seat=2, tile="5m", claims=(Claim(kind="pong", tiles=("5m", "5m")),), seconds=10
        ),
    ]
    assert mj.to_act(state) == [1, 2]  # seat 3 has nothing to claim: not waited on
    assert mj.legal_actions(state, 1) == [*chows, Pass()]
    assert mj.legal_actions(state, 2) == [Claim(kind="pong", tiles=("5m", "5m")), Pass()]
    assert mj.legal_actions(state, 3) == [] == mj.legal_actions(state, 0)
    offer = events[2]
    assert mj.event_for(offer, 1) == offer
    assert mj.event_for(offer, 2) is None
    assert mj.event_for(offer, None) is None
    assert mj.view(state, 2).legal == (Claim(kind="pong", tiles=("5m", "5m")), Pass())
    assert mj.view(state, 3).legal == ()
    assert mj.pending_timer(state) == Timer(kind="call", seats=(1, 2), seconds=10, opened_at=2)


def test_chow_only_for_the_next_player() -> None:
    # Seat 3 holds 3m 4m 6m 7m too, but only seat 1 follows the discarder.
    state = after_discard(CLAIMS, "9s", "5m")
    assert state.call is not None
    assert state.call.offers[3] == ()
    assert all(c.kind == "chow" for c in state.call.offers[1])
    raises(state, 3, Claim(kind="chow", tiles=("3m", "4m")), "cannot_claim")


def test_chow_is_offered_to_the_next_player_around_the_table() -> None:
    state = rig(rotated(CLAIMS, 3), dealer=3, front="9s")
    state, _ = play(state, [(3, Draw()), (3, Discard("5m"))])
    assert state.call is not None
    assert [c.kind for c in state.call.offers[0]] == ["chow", "chow", "chow"]  # (3 + 1) % 4
    assert state.call.offers[2] == ()  # the seat across holds the chow shape, not next


def test_pong_beats_chow_even_when_the_chow_answers_first() -> None:
    state = after_discard(CLAIMS, "9s", "5m")
    state, events = mj.apply(state, 1, Claim(kind="chow", tiles=("3m", "4m")))
    assert state.phase == "calls" and mj.to_act(state) == [2]  # a pong could still beat it
    assert events == [CallAnswered(seat=1, claim=Claim(kind="chow", tiles=("3m", "4m")))]
    assert mj.event_for(events[0], 2) is None
    state, events = mj.apply(state, 2, Claim(kind="pong", tiles=("5m", "5m")))
    meld = Meld(kind="pong", tiles=("5m",) * 3, claimed="5m", from_seat=0)
    assert events[-1] == TileClaimed(seat=2, discarder=0, meld=meld)
    assert state.players[2].melds == (meld,)
    assert state.players[1].melds == ()
    assert "5m" not in state.players[0].discards  # the claimed tile leaves the discards
    assert (state.turn, state.phase, state.drawn) == (2, "discard", None)
    assert accounted(state)


def test_a_claim_nobody_left_can_beat_resolves_at_once() -> None:
    state = after_discard(CLAIMS, "9s", "5m")
    state, _ = mj.apply(state, 2, Claim(kind="pong", tiles=("5m", "5m")))  # seat 1 only has chows
    assert (state.phase, state.turn, mj.to_act(state)) == ("discard", 2, [2])
    # The claimer's turn starts: its turn clock (30 s by default) replaces the window's.
    assert mj.pending_timer(state) == Timer(kind="turn", seats=(2,), seconds=30, opened_at=3)


def test_chow_wins_when_the_pong_holder_passes_and_the_claimer_discards_without_drawing() -> None:
    state = after_discard(CLAIMS, "9s", "5m")
    state, _ = play(
        state, [(1, Claim(kind="chow", tiles=("4m", "3m"))), (2, Pass())]
    )  # any tile order
    assert state.players[1].melds == (
        Meld(kind="chow", tiles=("3m", "4m", "5m"), claimed="5m", from_seat=0),
    )
    assert (state.turn, state.phase) == (1, "discard")
    raises(state, 1, Draw(), "already_drawn")
    raises(state, 1, DeclareWin(), "cannot_win")
    raises(state, 1, DeclareKang("1s"), "cannot_kang")
    assert all(isinstance(a, Discard) for a in mj.legal_actions(state, 1))
    state, _ = mj.apply(state, 1, Discard("7m"))
    # seat 2 follows the claimer; the 7m is useless to everybody here
    assert (state.turn, state.phase) == (2, "draw")


def test_everybody_passing_leaves_the_discard_and_the_next_seat_draws() -> None:
    state = after_discard(CLAIMS, "9s", "5m")
    state, _ = mj.apply(state, 2, Pass())
    assert state.phase == "calls" and mj.to_act(state) == [1]
    state, events = mj.apply(state, 1, Pass())
    assert events[-1] == CallsPassed(discarder=0, tile="5m")
    assert (state.turn, state.phase, state.call) == (1, "draw", None)
    assert state.players[0].discards[-1] == "5m"


def test_the_call_window_closes_on_time_outs_as_passes() -> None:
    state = after_discard(CLAIMS, "9s", "5m")
    timer = mj.pending_timer(state)
    assert timer is not None and timer.seats == (1, 2) and timer.seconds == 10
    raises(state, 3, TimeOut(), "not_your_turn")
    state, _ = mj.apply(state, 2, TimeOut())
    now = mj.pending_timer(state)
    assert now is not None and now.seats == (1,) and now.opened_at == timer.opened_at
    state, events = mj.apply(state, 1, TimeOut())
    assert events[-1] == CallsPassed(discarder=0, tile="5m")
    assert (state.turn, state.phase) == (1, "draw")
    now = mj.pending_timer(state)
    assert now is not None and (now.kind, now.seats) == ("turn", (1,))


def test_a_claim_made_before_the_time_out_still_counts() -> None:
    state = after_discard(CLAIMS, "9s", "5m")
    state, _ = play(state, [(1, Claim(kind="chow", tiles=("6m", "7m"))), (2, TimeOut())])
    assert state.players[1].melds[0].tiles == ("5m", "6m", "7m")


def test_the_call_window_length_is_an_option() -> None:
    options = mj.options_for("kalaro", call_seconds=25)
    state = after_discard(CLAIMS, "9s", "5m", options=options)
    timer = mj.pending_timer(state)
    assert timer is not None and timer.seconds == 25
    assert mj.view(state, None).call == mj.CallView(discarder=0, tile="5m", seconds=25)


def test_claims_not_offered_are_refused() -> None:
    state = after_discard(CLAIMS, "9s", "5m")
    raises(state, 1, Claim(kind="pong", tiles=("5m", "5m")), "cannot_claim")
    raises(state, 2, Claim(kind="chow", tiles=("3m", "4m")), "cannot_claim")
    raises(state, 2, Claim(kind="kang", tiles=("5m", "5m", "5m")), "cannot_claim")
    raises(state, 2, Claim(kind="mahjong"), "cannot_claim")
    raises(state, 3, Pass(), "not_your_turn")
    raises(state, 0, Draw(), "not_your_turn")
    raises(state, 1, Draw(), "not_your_turn")
    raises(state, 0, Discard("9s"), "not_your_turn")
    state, _ = mj.apply(state, 1, Claim(kind="chow", tiles=("3m", "4m")))
    raises(state, 1, Pass(), "already_answered")
    before = rig(CLAIMS, front="9s")
    raises(before, 1, Claim(kind="chow", tiles=("3m", "4m")), "cannot_claim")
    raises(before, 1, Pass(), "not_your_turn")


def test_kang_claim_beats_chow_and_draws_a_replacement_first() -> None:
    state = after_discard(KANG_CLAIM, "9s", "5m", back="8p")
    assert state.call is not None
    assert state.call.offers[2] == (
        Claim(kind="kang", tiles=("5m",) * 3),
        Claim(kind="pong", tiles=("5m",) * 2),
    )
    state, _ = mj.apply(state, 1, Claim(kind="chow", tiles=("3m", "4m")))
    state, events = mj.apply(state, 2, Claim(kind="kang", tiles=("5m",) * 3))
    meld = Meld(kind="kang", tiles=("5m",) * 4, claimed="5m", from_seat=0)
    assert events[-2:] == [
        TileClaimed(seat=2, discarder=0, meld=meld),
        TileDrawn(seat=2, tile="8p", replacement=True),
    ]
    assert (state.turn, state.phase, state.drawn) == (2, "discard", "8p")
    assert len(state.players[2].hand) == 16 - 3 + 1
    assert accounted(state)


def test_no_kang_claim_on_the_last_discard() -> None:
    state = after_discard(KANG_CLAIM, "9s", "5m", wall_size=1)
    assert state.call is not None
    assert state.call.offers[2] == (Claim(kind="pong", tiles=("5m",) * 2),)


def test_mahjong_beats_pong() -> None:
    state = after_discard(WIN_OVER_PONG, "1z", "5m")
    state, _ = mj.apply(state, 2, Claim(kind="pong", tiles=("5m", "5m")))
    assert state.phase == "calls"  # seat 3 may still win
    state, events = mj.apply(state, 3, Claim(kind="mahjong"))
    assert events[-1] == HandWon(seat=3, tile="5m", self_draw=False, discarder=0)
    assert state.players[2].melds == ()
    result = mj.result(state)
    assert result is not None and (result.winner, result.ending) == (3, "discard")


def test_pong_stands_when_the_winner_passes() -> None:
    state = after_discard(WIN_OVER_PONG, "1z", "5m")
    state, _ = play(state, [(2, Claim(kind="pong", tiles=("5m", "5m"))), (3, Pass())])
    assert state.players[2].melds[0].kind == "pong"
    assert (state.turn, state.phase) == (2, "discard")


@pytest.mark.parametrize("by", range(4))
def test_two_possible_winners_the_nearer_after_the_discarder_wins(by: int) -> None:
    state = rig(rotated(TWO_WINNERS, by), dealer=by, front="1z")
    discarder, near, far = by, (by + 2) % 4, (by + 3) % 4
    state, _ = play(state, [(discarder, Draw()), (discarder, Discard("5m"))])
    assert mj.to_act(state) == sorted([near, far])
    state, _ = mj.apply(state, far, Claim(kind="mahjong"))
    assert state.phase == "calls"  # the nearer one may still win
    state, events = mj.apply(state, near, Claim(kind="mahjong"))
    assert events[-1] == HandWon(seat=near, tile="5m", self_draw=False, discarder=discarder)
    result = mj.result(state)
    assert result is not None and result.winner == near


def test_the_nearer_winner_resolves_at_once_and_the_farther_wins_if_the_nearer_passes() -> None:
    state = after_discard(TWO_WINNERS, "1z", "5m")
    won, _ = mj.apply(state, 2, Claim(kind="mahjong"))
    assert mj.is_over(won)
    passed, _ = play(state, [(2, Pass()), (3, Claim(kind="mahjong"))])
    result = mj.result(passed)
    assert result is not None and result.winner == 3


def test_a_winning_discard_is_revealed_in_the_winners_hand() -> None:
    state = after_discard(TWO_WINNERS, "1z", "5m")
    state, _ = mj.apply(state, 2, Claim(kind="mahjong"))
    result = mj.result(state)
    assert result is not None
    assert result.hands[2].hand.count("5m") == 2 and len(result.hands[2].hand) == 17
    assert result.winning_tile == "5m" and result.discarder == 0
    assert accounted(state)


# -- wall out (tabla) and dealer rotation -------------------------------------------------


def test_wall_out_is_tabla_nobody_pays_and_the_dealer_keeps_the_deal() -> None:
    state = rig(CLAIMS, front="9s", wall_size=1, dealer=0)
    state, _ = mj.apply(state, 0, Draw())
    assert state.wall == ()
    state, events = mj.apply(state, 0, Discard("7z"))
    assert events == [TileDiscarded(seat=0, tile="7z"), WallExhausted()]
    result = mj.result(state)
    assert result is not None
    assert (result.ending, result.winner, result.payments) == ("wall_out", None, (0, 0, 0, 0))
    assert result.charges == () and result.next_dealer == 0
    assert accounted(state)


def test_the_last_discard_may_still_be_claimed() -> None:
    state = after_discard(TWO_WINNERS, "1z", "5m", wall_size=1)
    assert state.wall == () and state.phase == "calls"
    state, _ = mj.apply(state, 2, Claim(kind="mahjong"))
    result = mj.result(state)
    assert result is not None and result.ending == "discard"


def test_pong_on_the_last_discard_then_wall_out() -> None:
    state = after_discard(CLAIMS, "9s", "5m", wall_size=1)
    state, _ = mj.apply(state, 2, Claim(kind="pong", tiles=("5m", "5m")))
    state, events = mj.apply(state, 2, Discard("9m"))
    assert events[-1] == WallExhausted()
    result = mj.result(state)
    assert result is not None and result.ending == "wall_out"


@pytest.mark.parametrize(
    ("dealer", "winner", "expected"),
    [(0, 0, 0), (0, 2, 1), (3, 3, 3), (3, 1, 0), (2, None, 2)],
)
def test_dealer_rotation(dealer: int, winner: int | None, expected: int) -> None:
    assert mj.next_dealer(dealer, winner) == expected


def test_dealer_rotation_in_results() -> None:
    kept = after_discard(TWO_WINNERS, "1z", "5m")
    passed_on, _ = mj.apply(kept, 2, Claim(kind="mahjong"))
    result = mj.result(passed_on)
    assert result is not None and (result.dealer, result.next_dealer) == (0, 1)
    state = rig(rotated(TWO_WINNERS, 3), dealer=3, front="1z")
    state, _ = play(state, [(3, Draw()), (3, Discard("5m")), (1, Claim(kind="mahjong"))])
    result = mj.result(state)
    assert result is not None and (result.winner, result.next_dealer) == (1, 0)


# -- payments ----------------------------------------------------------------------------


def test_win_on_a_discard_discarder_pays_2_others_1() -> None:
    state = after_discard(TWO_WINNERS, "1z", "5m")
    state, _ = mj.apply(state, 2, Claim(kind="mahjong"))
    result = mj.result(state)
    assert result is not None
    assert result.payments == (-2, -1, 4, -1)
    assert {c.payer: [(i.name, i.units) for i in c.items] for c in result.charges} == {
        0: [("discarder", 2)],
        1: [("other_loser", 1)],
        3: [("other_loser", 1)],
    }


@pytest.mark.parametrize(
    ("hand", "kangs", "payments"),
    [
        ("5m 222p 333p 111s 222s", ("1p",), (-3, -2, 7, -2)),
        # The rules page's example: two kangs, the discarder pays 4, the others 3 each.
        ("5m 333p 111s 222s", ("1p", "2p"), (-4, -3, 10, -3)),
    ],
)
def test_win_on_a_discard_with_kangs_adds_1_per_kang_from_every_loser(
    hand: str, kangs: tuple[str, ...], payments: tuple[int, ...]
) -> None:
    hands = list(TWO_WINNERS)
    hands[2] = hand
    melds = [Meld(kind="kang", tiles=(tile,) * 4, concealed=True) for tile in kangs]
    state = after_discard(tuple(hands), "1z", "5m", melds={2: melds})
    state, _ = mj.apply(state, 2, Claim(kind="mahjong"))
    result = mj.result(state)
    assert result is not None and result.payments == payments


def test_self_draw_everyone_pays_2() -> None:
    hands = ("5m 111p 222p 333p 111s 222s", "11m 2m 3m 777s 888s 999s 2z 3z 4z",
             "5m 777p 888p 99p 555s 666s 7z", "5m 444p 555p 666p 333s 444s")  # fmt: skip
    state = rig(hands, front="5m")
    state, _ = play(state, [(0, Draw()), (0, DeclareWin())])
    result = mj.result(state)
    assert result is not None and result.ending == "self_draw"
    assert result.payments == (6, -2, -2, -2)
    assert all(c.items == (mj.Item(name="self_draw", units=2),) for c in result.charges)


def test_self_draw_with_two_kangs_everyone_pays_4() -> None:
    state = rig(KANGS, front="7s", back="7s 7s")
    moves = [(0, Draw()), (0, DeclareKang("1p")), (0, DeclareKang("2p")), (0, DeclareWin())]
    state, _ = play(state, moves)
    result = mj.result(state)
    assert result is not None
    assert result.payments == (12, -4, -4, -4)
    assert result.charges[0].items == (
        mj.Item(name="self_draw", units=2),
        mj.Item(name="kang", units=2),
    )
    assert result.next_dealer == 0  # the dealer won


def test_the_cap_limits_what_each_loser_pays() -> None:
    options = mj.options_for("kalaro", cap_units=3)
    state = rig(KANGS, front="7s", back="7s 7s", options=options)
    moves = [(0, Draw()), (0, DeclareKang("1p")), (0, DeclareKang("2p")), (0, DeclareWin())]
    state, _ = play(state, moves)
    result = mj.result(state)
    assert result is not None
    assert result.payments == (9, -3, -3, -3)
    assert all((c.total, c.units) == (4, 3) for c in result.charges)


def test_the_default_cap_is_10_units_per_loser() -> None:
    options = mj.options_for("kalaro")
    assert mj.max_loss_units(options) == 10
    bill = mj.scoring.charge(options, winner=0, loser=1, discarder=1, kangs=9)
    assert (bill.total, bill.units) == (11, 10)
    bill = mj.scoring.charge(options, winner=0, loser=1, discarder=None, kangs=8)
    assert (bill.total, bill.units) == (10, 10)


# -- options ------------------------------------------------------------------------------


def test_options_for_kalaro_and_house_rules() -> None:
    options = mj.options_for("kalaro")
    assert (options.ruleset, options.call_seconds, options.cap_units) == ("kalaro", 10, 10)
    assert not (options.jokers or options.robbing_the_kang or options.special_hands)
    assert (options.turn_seconds, options.away_after_timeouts) == (30, 2)
    assert mj.options_for("kalaro", call_seconds=5).call_seconds == 5


@pytest.mark.parametrize(
    ("ruleset", "overrides", "message"),
    [
        ("tongits", {}, "unknown Mahjong ruleset"),
        ("kalaro", {"special_hands": True}, "needs a points table"),
        ("pinoy", {"points": None}, "needs a points table"),
        ("kalaro", {"turn_seconds": 0}, ">= 1"),
        ("kalaro", {"colour": "red"}, "unknown Mahjong option"),
        ("kalaro", {"call_seconds": "10"}, "bad Mahjong option value"),
        ("kalaro", {"call_seconds": 0}, ">= 1"),
        ("kalaro", {"cap_units": 0}, ">= 1"),
        ("kalaro", {"call_seconds": True}, "bad Mahjong option value"),
    ],
)
def test_options_refused(ruleset: str, overrides: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        mj.options_for(ruleset, **overrides)


def test_a_hand_refuses_options_it_cannot_play() -> None:
    with pytest.raises(ValueError, match="needs a points table"):
        mj.new_hand(mj.Options(special_hands=True), b"seed")
    with pytest.raises(ValueError, match="unknown Mahjong ruleset"):
        mj.new_hand(mj.Options(ruleset="hongkong"), b"seed")


def test_turning_a_future_toggle_off_explicitly_is_fine() -> None:
    assert mj.options_for("kalaro", jokers=False, turn_seconds=30) == mj.options_for("kalaro")
