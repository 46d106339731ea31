"""The ``pinoy`` options, beyond both seeds: robbing the kang, turn timers with auto-play,
and special hands (ambisyon) with their payouts."""

from __future__ import annotations

import msgspec
import pytest

from kalaro.games import mahjong as mj
from kalaro.games.base import IllegalAction
from kalaro.games.mahjong import (
    CallsPassed,
    CallWindowOpened,
    Claim,
    ClaimsOffered,
    DeclareKang,
    DeclareWin,
    Discard,
    Draw,
    HandWon,
    Item,
    KangDeclared,
    Meld,
    Pass,
    State,
    TileDiscarded,
    TileDrawn,
    TimeOut,
    Timer,
)
from tests.unit.mahjong.helpers import JOKER, PINOY, accounted, play, rig
from tests.unit.mahjong.tables import CLAIMS

# -- robbing the kang ----------------------------------------------------------------------

PONG = Meld(kind="pong", tiles=("9m",) * 3, claimed="9m", from_seat=3)
# Seat 0 holds the fourth 9m for its pong; seat 2 waits on 6m-9m (7-8 of characters).
ROB = ("9m 222p 333p 444p 55p 7p", "111m 222m 333m 444m 1z 2z 3z 5z",
       "78m 456m 678p 123s 456s 11z", "99p 88p 11s 22z 33z 66z 77z 5z 7s")  # fmt: skip


def _kang_declared(options: mj.Options = PINOY, hands: tuple[str, ...] = ROB) -> tuple[State, list]:  # type: ignore[type-arg]
    state = rig(
        hands,
        front="1z",
        back="6p",
        melds={0: [PONG]},
        indicator="4z",
        options=options,
        wall_size=40,
    )
    return play(state, [(0, Draw()), (0, DeclareKang("9m"))])


def test_an_added_kang_opens_a_window_where_only_a_win_may_take_the_tile() -> None:
    state, events = _kang_declared()
    assert events[-2:] == [
        CallWindowOpened(discarder=0, tile="9m", seconds=10, robbing=True),
        ClaimsOffered(seat=2, tile="9m", claims=(Claim(kind="mahjong"),), seconds=10),
    ]
    assert not any(isinstance(e, KangDeclared) for e in events)  # not yet
    assert mj.to_act(state) == [2]
    assert mj.legal_actions(state, 2) == [Claim(kind="mahjong"), Pass()]
    assert mj.legal_actions(state, 0) == []
    assert mj.view(state, 1).call == mj.CallView(discarder=0, tile="9m", seconds=10, robbing=True)
    timer = mj.pending_timer(state)
    assert timer is not None and (timer.kind, timer.seats) == ("call", (2,))
    assert state.players[0].melds == (PONG,) and "9m" in state.players[0].hand
    assert accounted(state)


def test_robbing_the_kang_is_paid_as_a_win_on_a_discard_by_the_declarer() -> None:
    state, _ = _kang_declared()
    state, events = mj.apply(state, 2, Claim(kind="mahjong"))
    assert events[-1] == HandWon(
        seat=2,
        tile="9m",
        self_draw=False,
        discarder=0,
        category="Win by Discard Regular",
        robbed_kang=True,
    )
    result = mj.result(state)
    assert result is not None
    assert (result.ending, result.discarder, result.robbed_kang) == ("discard", 0, True)
    assert result.specials == ("Concealed Hand",)
    # The declarer pays as the discarder (2), the others 1; every loser adds Concealed Hand 1.
    assert result.payments == (-3, -2, 7, -2)
    assert {c.payer: c.items for c in result.charges}[0] == (
        Item(name="discarder", units=2, detail="Win by Discard Regular"),
        Item(name="special", units=1, detail="Concealed Hand"),
    )
    assert state.players[0].melds == (PONG,)  # the pong never became a kang
    assert "9m" in state.players[2].hand and "9m" not in state.players[0].hand
    assert accounted(state)


def test_when_nobody_robs_the_kang_stands_and_the_replacement_is_drawn() -> None:
    state, _ = _kang_declared()
    state, events = mj.apply(state, 2, Pass())
    kang = Meld(kind="kang", tiles=("9m",) * 4, claimed="9m", from_seat=3)
    assert events[-3:] == [
        CallsPassed(discarder=0, tile="9m"),
        KangDeclared(seat=0, meld=kang, added=True),
        TileDrawn(seat=0, tile="6p", replacement=True),
    ]
    assert (state.turn, state.phase, state.drawn) == (0, "discard", "6p")
    assert state.players[0].melds == (kang,)
    assert state.passed_win[2]  # passing a winning tile blocks, robbed or discarded
    assert accounted(state)


def test_time_out_in_the_robbing_window_robs_the_kang_it_may_win_on() -> None:
    state, _ = _kang_declared()
    state, events = mj.apply(state, 2, TimeOut())
    assert events[0] == mj.TimedOut(seat=2, away=False, call=True)
    assert isinstance(events[-1], HandWon) and events[-1].robbed_kang
    assert mj.is_over(state) and state.players[0].melds == (PONG,)


def test_nobody_able_to_rob_means_no_window() -> None:
    hands = (ROB[0], ROB[1], "7m 3m 456m 678p 123s 456s 11z", ROB[3])  # waits on nothing
    state, events = _kang_declared(hands=hands)
    assert isinstance(events[-2], KangDeclared) and state.phase == "discard"


def test_without_the_option_the_kang_cannot_be_robbed() -> None:
    state, events = _kang_declared(JOKER)
    assert isinstance(events[-2], KangDeclared) and events[-2].added
    assert state.phase == "discard"


def test_robbing_at_a_kalaro_table_pays_the_kalaro_way() -> None:
    options = mj.options_for("kalaro", robbing_the_kang=True)
    state, _ = _kang_declared(options)
    state, _ = mj.apply(state, 2, Claim(kind="mahjong"))
    result = mj.result(state)
    assert result is not None and result.robbed_kang and result.category is None
    assert result.payments == (-2, -1, 4, -1)


# -- turn timers --------------------------------------------------------------------------


# CLAIMS (tables.py) with 9p jokers (nobody holds a 9p): the dealer draws a 9s.
def _timed(**kw: object) -> State:
    return rig(CLAIMS, front="9s", indicator="9p", options=PINOY, discarded=True, **kw)  # type: ignore[arg-type]


def test_the_turn_timer_covers_the_whole_turn() -> None:
    state = _timed()
    timer = Timer(kind="turn", seats=(0,), seconds=20, opened_at=0)
    assert mj.pending_timer(state) == timer
    state, _ = mj.apply(state, 0, Draw())
    assert mj.pending_timer(state) == timer  # drawing does not restart it


def test_a_turn_time_out_draws_and_discards_the_drawn_tile() -> None:
    state = _timed()
    state, events = mj.apply(state, 0, TimeOut())
    assert events[:3] == [
        mj.TimedOut(seat=0, away=False),
        TileDrawn(seat=0, tile="9s"),
        TileDiscarded(seat=0, tile="9s"),
    ]
    assert state.players[0].hand == rig(CLAIMS).players[0].hand
    # Seat 3 holds 99s: the call window's timer takes over, and its time-out passes.
    timer = mj.pending_timer(state)
    assert timer is not None and (timer.kind, timer.seats) == ("call", (3,))
    state, events = mj.apply(state, 3, TimeOut())
    assert events[-1] == CallsPassed(discarder=0, tile="9s")
    next_turn = mj.pending_timer(state)
    assert next_turn == Timer(kind="turn", seats=(1,), seconds=20, opened_at=state.step)
    assert accounted(state)


def test_a_turn_time_out_after_drawing_discards_the_drawn_tile() -> None:
    state, _ = mj.apply(_timed(), 0, Draw())
    state, events = mj.apply(state, 0, TimeOut())
    assert events[1] == TileDiscarded(seat=0, tile="9s")


def test_a_turn_time_out_after_a_claim_discards_the_rightmost_tile_not_a_joker() -> None:
    # 2z jokers: seat 1 holds three of them, which sort last but are shown first.
    state = rig(CLAIMS, front="9s", indicator="2z", options=PINOY, discarded=True)
    state, _ = play(state, [(0, Draw()), (0, Discard("5m"))])
    state, _ = play(state, [(1, Claim(kind="chow", tiles=("3m", "4m"))), (2, Pass())])
    assert (state.turn, state.phase, state.drawn) == (1, "discard", None)
    assert state.players[1].hand[-1] == "2z"
    timer = mj.pending_timer(state)
    assert timer is not None and timer.kind == "turn" and timer.opened_at == state.step
    state, events = mj.apply(state, 1, TimeOut())
    assert events[1] == TileDiscarded(seat=1, tile="1z")
    assert state.players[1].hand.count("2z") == 3


def test_turn_time_outs_only_for_the_player_to_move_and_only_with_the_option() -> None:
    state = _timed()
    with pytest.raises(IllegalAction) as caught:
        mj.apply(state, 2, TimeOut())
    assert caught.value.code == "not_your_turn"
    untimed = msgspec.structs.replace(JOKER, turn_seconds=None)
    plain = rig(CLAIMS, front="9s", indicator="9p", options=untimed, discarded=True)
    assert mj.pending_timer(plain) is None
    with pytest.raises(IllegalAction) as caught:
        mj.apply(plain, 0, TimeOut())
    assert caught.value.code == "no_timer"


def test_a_kalaro_table_may_run_turn_timers_too() -> None:
    options = mj.options_for("kalaro", turn_seconds=15)
    state = rig(CLAIMS, front="9s", options=options, discarded=True)
    assert mj.pending_timer(state) == Timer(kind="turn", seats=(0,), seconds=15, opened_at=0)
    state, events = mj.apply(state, 0, TimeOut())
    assert events[2] == TileDiscarded(seat=0, tile="9s")


def test_a_turn_time_out_that_finds_the_wall_empty_ends_the_hand() -> None:
    state = rig(CLAIMS, indicator="9p", options=PINOY, discarded=True, wall_size=0)
    state, events = mj.apply(state, 0, TimeOut())
    assert isinstance(events[-1], mj.WallExhausted) and mj.is_over(state)
    assert mj.pending_timer(state) is None


# -- special hands (ambisyon) ---------------------------------------------------------------

OTHERS = ("123m 456m 789m 123p 456p 7p", "123s 456s 789s 234p 567p 8p")


@pytest.mark.parametrize(
    ("hand", "tile", "specials", "total"),
    [
        # Win by Draw Regular 2 + All Pongs 2 + Concealed Hand 1
        ("111m 999p 333s 555m 777s 7z", "7z", ("All Pongs", "Concealed Hand"), 5),
        # 2 + All Honours 6 + Small Three Dragons 2 + Concealed Hand 1 = 11, capped at 10
        (
            "111z 222z 333z 555z 666z 7z",
            "7z",
            ("All Honours", "Small Three Dragons", "Concealed Hand"),
            11,
        ),
    ],
)
def test_special_hands_add_their_points_to_every_bill(
    hand: str, tile: str, specials: tuple[str, ...], total: int
) -> None:
    west = "4m 6m 8m 2s 2s 4s 6s 2m 3m 7m 9m 1p 3p 5p 7p 9p"
    state = rig((hand, *OTHERS, west), front=tile, indicator="4z", options=PINOY, wall_size=40)
    state, _ = play(state, [(0, Draw()), (0, DeclareWin())])
    result = mj.result(state)
    assert result is not None
    assert result.category == "Win by Draw Regular" and result.specials == specials
    paid = min(total, 10)
    assert result.payments == (3 * paid, -paid, -paid, -paid)
    for bill in result.charges:
        assert bill.items[0] == Item(name="self_draw", units=2, detail="Win by Draw Regular")
        assert [i.detail for i in bill.items[1:]] == list(specials)
        assert (bill.total, bill.units) == (total, paid)
    # The same win at a joker table (no special hands): 2 each.
    plain = rig((hand, *OTHERS, west), front=tile, indicator="4z", options=JOKER, wall_size=40)
    plain, _ = play(plain, [(0, Draw()), (0, DeclareWin())])
    plain_result = mj.result(plain)
    assert plain_result is not None and plain_result.specials == ()
    assert plain_result.payments == (6, -2, -2, -2)


def test_a_host_may_change_a_special_hands_payout() -> None:
    options = mj.options_for("pinoy", points={"All Pongs": 5, "Concealed Hand": 0})
    west = "4m 6m 8m 2s 2s 4s 6s 2m 3m 7m 9m 1p 3p 5p 7p 9p"
    state = rig(
        ("111m 999p 333s 555m 777s 7z", *OTHERS, west),
        front="7z",
        indicator="4z",
        options=options,
        wall_size=40,
    )
    state, _ = play(state, [(0, Draw()), (0, DeclareWin())])
    result = mj.result(state)
    assert result is not None and result.payments == (21, -7, -7, -7)
    assert [i.detail for i in result.charges[0].items] == ["Win by Draw Regular", "All Pongs"]


# -- wire formats of what is new ---------------------------------------------------------


def test_new_states_events_and_results_round_trip() -> None:
    state, events = _kang_declared()
    assert msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=State) == state
    assert msgspec.json.decode(msgspec.json.encode(state), type=State) == state
    over, won = mj.apply(state, 2, Claim(kind="mahjong"))
    for event in [*events, *won]:
        assert mj.EVENT_JSON_DECODER.decode(msgspec.json.encode(event)) == event
    for seat in (None, 0, 2):
        seen = mj.view(over, seat)
        assert msgspec.json.decode(msgspec.json.encode(seen), type=mj.View) == seen
    assert msgspec.json.decode(msgspec.json.encode(mj.result(over)), type=mj.Result) == mj.result(
        over
    )
