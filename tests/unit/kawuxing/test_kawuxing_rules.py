"""Ka Wu Xing table flow: the deal, turns, claims and their priority, kongs, Show Hand
locking, wall out, timers, options. Scoring has its own file.
"""

from __future__ import annotations

import msgspec
import pytest

from kalaro.games import kawuxing as kw
from kalaro.games.base import IllegalAction, pick, shuffled
from kalaro.games.kawuxing import (
    CallAnswered,
    CallsPassed,
    CallWindowOpened,
    Claim,
    ClaimsOffered,
    DeclareKong,
    DeclareWin,
    Discard,
    Draw,
    HandShown,
    Pass,
    ShowHand,
    State,
    TileClaimed,
    TileDiscarded,
    TileDrawn,
    TimeOut,
    Timer,
    WallExhausted,
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


def raises(state: State, seat: int, action: kw.AnyAction, code: str) -> None:
    """The action is refused with ``code`` and the state is what it was."""
    before = msgspec.msgpack.encode(state)
    with pytest.raises(IllegalAction) as caught:
        kw.apply(state, seat, action)
    assert caught.value.code == code
    assert msgspec.msgpack.encode(state) == before


# -- 84 tiles and the deal ------------------------------------------------------------


def test_the_set_is_84_tiles_of_dots_bamboo_and_dragons() -> None:
    assert len(kw.TILES_84) == 84
    assert sorted(set(kw.TILES_84)) == sorted(
        [f"{r}p" for r in range(1, 10)] + [f"{r}s" for r in range(1, 10)] + ["5z", "6z", "7z"]
    )
    assert all(kw.TILES_84.count(kind) == 4 for kind in kw.KINDS)


@pytest.mark.parametrize("n", range(8))
def test_deal_13_each_three_rounds_of_four_then_one(n: int) -> None:
    seed = f"deal-{n}".encode()
    state = kw.new_hand(DEFAULT, seed)
    dealer = pick(seed, "dealer", 3)
    tiles = shuffled(kw.TILES_84, seed)
    hands: list[list[str]] = [[], [], []]
    front = 0
    for batch in (4, 4, 4, 1):
        for i in range(3):
            hands[(dealer + i) % 3] += tiles[front : front + batch]
            front += batch
    assert state.dealer == dealer
    for seat in range(3):
        assert sorted(state.players[seat].hand) == sorted(hands[seat])
    assert state.wall == tuple(tiles[39:]) and len(state.wall) == 45
    assert accounted(state)


def test_first_host_comes_from_the_seed_and_a_bad_dealer_is_refused() -> None:
    assert {kw.new_hand(DEFAULT, bytes([n])).dealer for n in range(30)} == {0, 1, 2}
    with pytest.raises(ValueError):
        kw.new_hand(DEFAULT, b"x", dealer=3)


def test_the_dealer_draws_first() -> None:
    state = kw.new_hand(DEFAULT, b"first", dealer=1)
    assert (state.turn, state.phase, kw.to_act(state)) == (1, "draw", [1])
    assert kw.legal_actions(state, 1) == [Draw()]
    assert kw.legal_actions(state, 0) == kw.legal_actions(state, 2) == []
    raises(state, 2, Draw(), "not_your_turn")
    state, events = kw.apply(state, 1, Draw())
    assert len(state.players[1].hand) == 14
    assert events == [TileDrawn(seat=1, tile=state.drawn)]


# -- the turn -------------------------------------------------------------------------


def test_draw_then_discard_passes_the_turn() -> None:
    state = rig([None, None, None], front="9s")
    raises(state, 0, Discard("9s"), "must_draw_first")
    raises(state, 0, DeclareWin(), "must_draw_first")
    state, _ = kw.apply(state, 0, Draw())
    raises(state, 0, Draw(), "already_drawn")
    assert "3p" not in state.players[0].hand
    raises(state, 0, Discard("3p"), "tile_not_in_hand")
    raises(state, 1, Discard("9s"), "not_your_turn")
    raises(state, 0, DeclareWin(), "hand_not_complete")
    raises(state, 1, TimeOut(), "not_your_turn")
    state, events = kw.apply(state, 0, Discard("9s"))
    assert events == [TileDiscarded(seat=0, tile="9s")]
    assert (state.turn, state.phase, state.players[0].discards) == (1, "draw", ("9s",))


def test_legal_actions_after_a_draw_list_each_tile_once() -> None:
    state, _ = play(rig([None, None, None], front="9s"), [(0, Draw())])
    hand = state.players[0].hand
    assert kw.legal_actions(state, 0) == [Discard(t) for t in dict.fromkeys(hand)]


def test_a_self_draw_is_offered_and_wins() -> None:
    state, _ = play(rig(["46s 123p 456p 789p 99s", None, None], front="5s"), [(0, Draw())])
    assert kw.legal_actions(state, 0)[0] == DeclareWin()
    state, events = kw.apply(state, 0, DeclareWin())
    assert events == [kw.HandWon(seat=0, tile="5s", self_draw=True)]
    assert kw.is_over(state) and kw.to_act(state) == []
    raises(state, 0, Draw(), "hand_over")


# -- claims ---------------------------------------------------------------------------

# Seat 0 discards 5s: seat 1 can pong it (chicken win impossible), seat 2 wins on it.
WIN_OVER_PONG = [None, "55s 14p 25p 7p 36s 9s 5z 6z 7z", "46s 123p 456p 789p 99s"]


def test_the_window_asks_only_seats_that_can_claim_and_privately() -> None:
    state = rig(WIN_OVER_PONG, front="5s")
    state, events = play(state, [(0, Draw()), (0, Discard("5s"))])
    assert events[2:] == [
        CallWindowOpened(discarder=0, tile="5s", seconds=10),
        ClaimsOffered(
            seat=1, tile="5s", claims=(Claim(kind="pong", tiles=("5s", "5s")),), seconds=10
        ),
        ClaimsOffered(seat=2, tile="5s", claims=(Claim(kind="win"),), seconds=10),
    ]
    assert kw.to_act(state) == [1, 2]
    assert kw.pending_timer(state) == Timer(kind="call", seats=(1, 2), seconds=10, opened_at=2)
    offered = events[3]
    assert kw.event_for(offered, 2) is None and kw.event_for(offered, None) is None
    assert kw.event_for(offered, 1) == offered


def test_win_beats_pong_and_a_pong_waits_for_a_possible_win() -> None:
    state = rig(WIN_OVER_PONG, front="5s")
    state, _ = play(state, [(0, Draw()), (0, Discard("5s"))])
    state, events = kw.apply(state, 1, Claim(kind="pong", tiles=("5s", "5s")))
    assert events == [CallAnswered(seat=1, claim=Claim(kind="pong", tiles=("5s", "5s")))]
    assert kw.to_act(state) == [2]
    raises(state, 1, Pass(), "already_answered")
    state, _ = kw.apply(state, 2, Claim(kind="win"))
    assert result(state).winners == (2,)


def test_a_pong_goes_ahead_when_the_winner_passes_then_the_claimer_discards() -> None:
    state = rig(WIN_OVER_PONG, front="5s")
    state, _ = play(
        state, [(0, Draw()), (0, Discard("5s")), (1, Claim(kind="pong", tiles=("5s", "5s")))]
    )
    state, events = kw.apply(state, 2, Pass())
    meld = kw.Meld(kind="pong", tiles=("5s",) * 3, claimed="5s", from_seat=0)
    assert events[-1] == TileClaimed(seat=1, discarder=0, meld=meld)
    assert (state.turn, state.phase, state.drawn) == (1, "discard", None)
    assert state.players[0].discards == ()
    # After a pong: no self-draw win, no kong; only discards (or Show Hand).
    raises(state, 1, DeclareWin(), "cannot_win")
    assert all(isinstance(a, Discard | ShowHand) for a in kw.legal_actions(state, 1))
    state, _ = kw.apply(state, 1, Discard("9s"))
    assert accounted(state)


def test_claims_must_be_offered() -> None:
    state = rig(WIN_OVER_PONG, front="5s")
    state, _ = play(state, [(0, Draw()), (0, Discard("5s"))])
    raises(state, 1, Claim(kind="kong", tiles=("5s", "5s", "5s")), "cannot_claim")
    raises(state, 1, Claim(kind="pong", tiles=("5s", "9s")), "cannot_claim")
    raises(state, 0, Claim(kind="win"), "cannot_claim")
    raises(state, 0, Pass(), "not_your_turn")
    raises(state, 0, TimeOut(), "not_your_turn")
    raises(state, 1, Draw(), "not_your_turn")


def test_nobody_claims_the_discard_stays_and_the_next_seat_draws() -> None:
    state = rig(WIN_OVER_PONG, front="5s")
    state, events = play(state, [(0, Draw()), (0, Discard("5s")), (1, Pass()), (2, Pass())])
    assert events[-1] == CallsPassed(discarder=0, tile="5s")
    assert (state.turn, state.phase, state.players[0].discards) == (1, "draw", ("5s",))


def test_a_kong_needs_a_tile_left_for_the_replacement() -> None:
    # The last tile of the wall is the fourth 1s: no kong, only win or discard.
    state = rig(["111s 258p 258s 5z 6z 7z 9p", None, None], front="1s", wall_size=1)
    state, _ = kw.apply(state, 0, Draw())
    assert not any(isinstance(a, DeclareKong) for a in kw.legal_actions(state, 0))
    raises(state, 0, DeclareKong("1s"), "cannot_kong")
    state, events = kw.apply(state, 0, Discard("1s"))
    assert events[-1] == WallExhausted() and result(state).ending == "wall_out"


def test_a_kong_needs_four_or_a_pong() -> None:
    state = rig(["11s 258p 258s 5z 6z 7z 9p 4s", None, None], front="1s")
    state, _ = kw.apply(state, 0, Draw())
    raises(state, 0, DeclareKong("1s"), "cannot_kong")
    raises(state, 0, DeclareKong("3s"), "tile_not_in_hand")


def test_the_last_discard_can_be_won_on_then_the_wall_is_out() -> None:
    state = rig([None, "46s 123p 456p 789p 99s", None], front="5s", wall_size=1)
    state, _ = play(state, [(0, Draw()), (0, Discard("5s"))])
    assert kw.to_act(state) == [1]
    won, _ = kw.apply(state, 1, Claim(kind="win"))
    assert result(won).ending == "discard"
    assert "win_on_last_tile" not in [i.name for i in result(won).wins[0].items]
    _, events = kw.apply(state, 1, Pass())
    assert events[-1] == WallExhausted()


# -- Show Hand ------------------------------------------------------------------------

SHOWN = ["46s 123p 456p 789p 99s", "11s 258p 2s 5z 6z 7z 36p 9s 8s", None]


def test_show_hand_needs_a_waiting_hand() -> None:
    state, _ = play(rig(SHOWN, front="1s"), [(0, Draw())])
    assert [a for a in kw.legal_actions(state, 0) if isinstance(a, ShowHand)] == [ShowHand("1s")]
    raises(state, 0, ShowHand("9s"), "not_waiting")
    state, events = kw.apply(state, 0, ShowHand("1s"))
    assert events[:2] == [
        TileDiscarded(seat=0, tile="1s"),
        HandShown(seat=0, hand=state.players[0].hand, waits=("5s",)),
    ]
    assert state.players[0].shown


def test_a_shown_hand_is_public_locked_and_discards_its_draws() -> None:
    state, _ = play(rig(SHOWN, front="1s 9p 9s 3p"), [(0, Draw()), (0, ShowHand("1s"))])
    # Everyone sees the shown hand.
    for viewer in (None, 1, 2):
        seen = kw.view(state, viewer)
        assert seen.players[0].hand == state.players[0].hand and seen.players[0].shown
    # Seat 1 passes on 1s (it could pong) and plays on; seat 2 too.
    assert kw.legal_actions(state, 1) == [Claim(kind="pong", tiles=("1s", "1s")), Pass()]
    state, _ = play(state, [(1, Pass()), (1, Draw()), (1, Discard("9p")), (2, Draw())])
    state, _ = kw.apply(state, 2, Discard("9s"))
    assert (state.turn, kw.legal_actions(state, 0)) == (0, [Draw()])
    locked = state.players[0].hand
    state, events = kw.apply(state, 0, Draw())
    assert events[:2] == [
        TileDrawn(seat=0, tile="3p", shown=True),
        TileDiscarded(seat=0, tile="3p", auto=True),
    ]
    assert kw.event_for(events[0], 2) == events[0]  # a shown hand's draw is public
    assert state.players[0].hand == kw.view(state, None).players[0].hand
    assert state.players[0].hand == locked and state.players[0].discards[-1] == "3p"
    assert (state.turn, state.phase) == (1, "draw")


def test_a_shown_hand_is_offered_no_pong_or_kong_only_wins() -> None:
    # Seat 0 holds 99s and has shown; seat 2 discards 9s and 5s.
    state = rig(SHOWN, front="1s 9p 9s", shown=[0])
    state, _ = play(state, [(0, Draw()), (1, Pass()), (1, Draw()), (1, Discard("9p")), (2, Draw())])
    state, _ = kw.apply(state, 2, Discard("9s"))
    assert (state.phase, state.turn) == ("draw", 0), "a shown hand may not pong"


def test_a_shown_hand_decides_on_a_winning_draw() -> None:
    state = rig(SHOWN, front="5s", shown=[0])
    state, _ = kw.apply(state, 0, Draw())
    assert kw.legal_actions(state, 0) == [DeclareWin(), Discard("5s")]
    raises(state, 0, Discard("4s"), "hand_shown")
    raises(state, 0, ShowHand("5s"), "already_shown")
    let_go, _ = kw.apply(state, 0, Discard("5s"))
    assert not kw.is_over(let_go)
    won, _ = kw.apply(state, 0, DeclareWin())
    assert result(won).wins[0].shown


def test_a_shown_hand_cannot_kong() -> None:
    # Shown with a pong of 1s and the fourth 1s in hand, waiting on 9p: no extended kong.
    state = rig(["123s 456p 789p 9p", None, None], melds={0: [pong("1s")]}, front="9p", shown=[0])
    state, _ = kw.apply(state, 0, Draw())
    assert kw.legal_actions(state, 0) == [DeclareWin(), Discard("9p")]
    raises(state, 0, DeclareKong("1s"), "hand_shown")


# -- Rob a Kong window ----------------------------------------------------------------


def test_passing_on_a_robbable_kong_lets_the_kong_go_ahead() -> None:
    state = rig(
        ["258p 258s 5z 6z 7z 1p", "56s 234p 567p 888p 99s", None],
        front="7s",
        back="4p",
        melds={0: [pong("7s", from_seat=2)]},
    )
    state, events = play(state, [(0, Draw()), (0, DeclareKong("7s"))])
    assert events[1] == kw.KongOffered(seat=0, tile="7s")
    assert events[2] == CallWindowOpened(discarder=0, tile="7s", seconds=10, robbing=True)
    assert kw.view(state, 2).call == kw.CallView(discarder=0, tile="7s", seconds=10, robbing=True)
    assert kw.legal_actions(state, 1) == [Claim(kind="win"), Pass()]
    state, events = kw.apply(state, 1, Pass())
    assert isinstance(events[-2], kw.KongDeclared) and events[-2].kong == "extended"
    assert (state.drawn, state.replacement, state.turn, state.phase) == ("4p", True, 0, "discard")
    assert accounted(state)


# -- options --------------------------------------------------------------------------


def test_options_the_ruleset_its_platform_alias_and_house_rules() -> None:
    assert kw.options_for("kalaro") == kw.options_for("kawuxing") == DEFAULT
    assert DEFAULT.ruleset == "kawuxing" and DEFAULT.cap == 8 and DEFAULT.call_seconds == 10
    assert kw.options_for("kawuxing", cap=None, kong_on_kong=True).cap is None
    for bad in ({"cap": 0}, {"call_seconds": 0}, {"kong_on_kong": "yes"}, {"loss_limit": 0}):
        with pytest.raises(ValueError, match="bad Ka Wu Xing option"):
            kw.options_for("kawuxing", **bad)
    with pytest.raises(ValueError, match="unknown Ka Wu Xing option"):
        kw.options_for("kawuxing", jokers=True)
    with pytest.raises(ValueError, match="unknown Ka Wu Xing ruleset"):
        kw.options_for("classic")


def test_a_call_window_uses_the_tables_call_seconds() -> None:
    options = kw.options_for("kawuxing", call_seconds=25)
    state = rig(WIN_OVER_PONG, front="5s", options=options)
    state, _ = play(state, [(0, Draw()), (0, Discard("5s"))])
    timer = kw.pending_timer(state)
    assert timer is not None and timer.seconds == 25
    assert kw.pending_timer(play_out(state)) is None
