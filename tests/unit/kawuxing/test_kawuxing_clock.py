"""The Ka Wu Xing turn clock: one timer per turn, conservative auto-play on a time-out
(draw, win if complete, else discard the drawn tile; claim an offered win, else pass),
away marking after time-outs in a row, ``Back``, and what views and events show.
"""

from __future__ import annotations

import random

import msgspec
import pytest

from kalaro.games import kawuxing as kw
from kalaro.games.base import IllegalAction
from kalaro.games.kawuxing import (
    Back,
    CallAnswered,
    CallWindowOpened,
    Claim,
    Clock,
    DeclareKong,
    Discard,
    Draw,
    HandWon,
    KongOffered,
    Pass,
    Returned,
    State,
    TileDiscarded,
    TileDrawn,
    TimedOut,
    TimeOut,
    Timer,
)
from tests.unit.kawuxing.kawuxing_helpers import DEFAULT, accounted, choose, play, pong, rig

# Seat 0 discards 5s: seat 1 can pong it, seat 2 wins on it (Ka Wu Xing).
WIN_OVER_PONG = [None, "55s 14p 25p 7p 36s 9s 5z 6z 7z", "46s 123p 456p 789p 99s"]
# Seat 0 wins on a drawn 5s.
WAITS_5S = ["46s 123p 456p 789p 99s", None, None]
# Seat 0 holds four 1p (a concealed kong it may declare).
FOUR = ["1111p 258s 5z 6z 7z 36p 9s", None, None]


def raises(state: State, seat: int, action: kw.AnyAction, code: str) -> None:
    before = msgspec.msgpack.encode(state)
    with pytest.raises(IllegalAction) as caught:
        kw.apply(state, seat, action)
    assert caught.value.code == code
    assert msgspec.msgpack.encode(state) == before


def away(state: State, *seats: int) -> State:
    """``state`` with ``seats`` marked away (as two time-outs in a row would)."""
    flags = tuple(s in seats for s in range(kw.SEATS))
    return msgspec.structs.replace(state, away=flags, timeouts=tuple(2 * f for f in flags))


def discarded_5s() -> State:
    """Seat 0 draws and discards 5s: the window waits on seats 1 (pong) and 2 (win)."""
    state = rig(WIN_OVER_PONG, front="5s")
    state, _ = play(state, [(0, Draw()), (0, Discard("5s"))])
    return state


# -- options --------------------------------------------------------------------------


def test_the_turn_clock_is_on_by_default_with_bounds() -> None:
    assert (DEFAULT.turn_seconds, DEFAULT.away_after_timeouts, DEFAULT.call_seconds) == (30, 2, 10)
    assert kw.Options().turn_seconds == 30
    assert kw.options_for("kawuxing", turn_seconds=None).turn_seconds is None
    assert kw.options_for("kawuxing", turn_seconds=600, away_after_timeouts=10)
    for bad in (
        {"turn_seconds": 0},
        {"turn_seconds": 601},
        {"away_after_timeouts": 0},
        {"away_after_timeouts": 11},
    ):
        with pytest.raises(ValueError, match="bad Ka Wu Xing option"):
            kw.options_for("kawuxing", **bad)


def test_stored_options_and_states_from_before_the_clock_still_decode() -> None:
    stored = msgspec.to_builtins(rig([None, None, None], front="9s"))
    for field in ("turn_started", "away", "timeouts"):
        del stored[field]
    for field in ("turn_seconds", "away_after_timeouts"):
        del stored["options"][field]
    old = msgspec.convert(stored, State)
    assert (old.turn_started, old.away, old.timeouts) == (0, (), ())
    assert kw.away_seats(old) == () and kw.view(old, None).away == (False,) * 3
    after, events = kw.apply(old, 0, TimeOut())
    assert events[0] == TimedOut(seat=0, away=False)
    assert (after.away, after.timeouts) == ((False,) * 3, (1, 0, 0))


# -- one timer per turn ---------------------------------------------------------------


def test_the_turn_timer_runs_per_turn_not_restarted_by_a_draw_or_kong() -> None:
    state = rig(FOUR, front="4s", back="8s")
    timer = Timer(kind="turn", seats=(0,), seconds=30, opened_at=0)
    assert kw.pending_timer(state) == timer
    for action in (Draw(), DeclareKong("1p")):
        state, _ = kw.apply(state, 0, action)
        assert kw.pending_timer(state) == timer
    state, _ = kw.apply(state, 0, Discard("8s"))
    assert state.turn == 1
    assert kw.pending_timer(state) == Timer(
        kind="turn", seats=(1,), seconds=30, opened_at=state.step
    )


def test_a_pong_starts_the_claimers_turn_and_its_time_out_discards_the_rightmost() -> None:
    state = discarded_5s()
    state, _ = play(state, [(1, Claim(kind="pong", tiles=("5s", "5s"))), (2, Pass())])
    assert kw.pending_timer(state) == Timer(
        kind="turn", seats=(1,), seconds=30, opened_at=state.step
    )
    rightmost = state.players[1].hand[-1]
    state, events = kw.apply(state, 1, TimeOut())
    assert events[:2] == [TimedOut(seat=1, away=False), TileDiscarded(seat=1, tile=rightmost)]


def test_no_turn_timer_when_the_clock_is_off() -> None:
    options = kw.options_for("kawuxing", turn_seconds=None)
    state = rig([None, None, None], front="9s", options=options)
    assert kw.pending_timer(state) is None and kw.view(state, 0).clock is None
    raises(state, 0, TimeOut(), "no_timer")


# -- the turn's time-out --------------------------------------------------------------


def test_a_turn_time_out_draws_and_discards_the_drawn_tile_never_a_kong() -> None:
    state = rig(FOUR, front="4s", back="8s")
    state, events = kw.apply(state, 0, TimeOut())
    assert events == [
        TimedOut(seat=0, away=False),
        TileDrawn(seat=0, tile="4s"),
        TileDiscarded(seat=0, tile="4s"),
    ]
    assert state.players[0].hand.count("1p") == 4 and state.players[0].melds == ()
    assert (state.turn, state.phase, state.timeouts) == (1, "draw", (1, 0, 0))
    raises(state, 0, TimeOut(), "not_your_turn")
    assert accounted(state)


def test_a_turn_time_out_takes_an_offered_self_draw_win() -> None:
    state = rig(WAITS_5S, front="5s")
    state, events = kw.apply(state, 0, TimeOut())
    assert events == [
        TimedOut(seat=0, away=False),
        TileDrawn(seat=0, tile="5s"),
        HandWon(seat=0, tile="5s", self_draw=True),
    ]
    assert kw.is_over(state)


def test_a_time_out_after_drawing_a_winning_tile_declares_the_win() -> None:
    state, _ = kw.apply(rig(WAITS_5S, front="5s"), 0, Draw())
    state, events = kw.apply(state, 0, TimeOut())
    assert events == [TimedOut(seat=0, away=False), HandWon(seat=0, tile="5s", self_draw=True)]


def test_a_shown_hand_times_out_like_its_own_draw() -> None:
    state = rig(WAITS_5S, front="9p", shown=[0])
    state, events = kw.apply(state, 0, TimeOut())
    assert events[1:3] == [
        TileDrawn(seat=0, tile="9p", shown=True),
        TileDiscarded(seat=0, tile="9p", auto=True),
    ]
    state = rig(WAITS_5S, front="5s", shown=[0])
    state, events = kw.apply(state, 0, TimeOut())
    assert isinstance(events[-1], HandWon) and kw.result(state) is not None


# -- the call window's time-out -------------------------------------------------------


def test_a_call_window_time_out_passes_a_pong_but_claims_a_win() -> None:
    state = discarded_5s()
    state, events = kw.apply(state, 1, TimeOut())
    assert events == [TimedOut(seat=1, away=False, call=True), CallAnswered(seat=1, claim=None)]
    state, events = kw.apply(state, 2, TimeOut())
    assert events[:2] == [
        TimedOut(seat=2, away=False, call=True),
        CallAnswered(seat=2, claim=Claim(kind="win")),
    ]
    assert events[-1] == HandWon(seat=2, tile="5s", self_draw=False, discarder=0)


def test_a_time_out_robs_a_kong_it_may_win_on() -> None:
    state = rig(
        ["258p 258s 5z 6z 7z 1p", "56s 234p 567p 888p 99s", None],
        front="7s",
        back="4p",
        melds={0: [pong("7s", from_seat=2)]},
    )
    state, _ = play(state, [(0, Draw()), (0, DeclareKong("7s"))])
    state, events = kw.apply(state, 1, TimeOut())
    assert isinstance(events[-1], HandWon) and events[-1].robbed_kong
    assert kw.result(state) is not None


# -- away -----------------------------------------------------------------------------


def test_two_time_outs_in_a_row_mark_a_seat_away_and_its_clock_runs_0_s() -> None:
    state = msgspec.structs.replace(discarded_5s(), timeouts=(0, 1, 0))  # one turn let go
    state, _ = play(state, [(1, TimeOut()), (2, Pass())])  # the 5s: private, no count
    assert (state.turn, state.timeouts) == (1, (0, 1, 0))
    state, events = kw.apply(state, 1, TimeOut())  # and its own turn
    assert events[0] == TimedOut(seat=1, away=True)
    assert (state.away, state.timeouts) == ((False, True, False), (0, 2, 0))
    assert kw.away_seats(state) == (1,)
    later = away(rig([None, None, None], dealer=1), 1)
    assert kw.pending_timer(later) == Timer(kind="turn", seats=(1,), seconds=0, opened_at=0)


def test_the_away_threshold_is_an_option() -> None:
    options = kw.options_for("kawuxing", away_after_timeouts=3)
    state = rig([None, None, None], front="9s", options=options)
    state = msgspec.structs.replace(state, timeouts=(1, 0, 0))
    state, events = kw.apply(state, 0, TimeOut())
    assert events[0] == TimedOut(seat=0, away=False) and state.timeouts == (2, 0, 0)


def test_a_call_window_runs_its_full_length_even_waiting_only_on_away_seats() -> None:
    """Who may claim is private: a window's deadline (every seat sees it) must not tell
    that only away seats can claim, so it never shortens for them."""
    state = discarded_5s()  # waits on seats 1 and 2
    assert kw.pending_timer(away(state, 1)) == Timer(
        kind="call", seats=(1, 2), seconds=10, opened_at=2
    )
    assert kw.pending_timer(away(state, 1, 2)) == Timer(
        kind="call", seats=(1, 2), seconds=10, opened_at=2
    )
    for viewer in (0, None):  # not waited on: the same clock whoever is away
        assert kw.view(away(state, 1, 2), viewer).clock == Clock(kind="call", seats=(), seconds=10)
    assert kw.view(away(state, 1, 2), 1).clock == Clock(kind="call", seats=(1,), seconds=10)


def test_an_own_move_clears_away_and_resets_the_count() -> None:
    state = away(rig([None, None, None], front="9s"), 0, 2)
    state, events = kw.apply(state, 0, Draw())
    assert not any(isinstance(e, Returned) for e in events)
    assert (state.away, state.timeouts) == ((False, False, True), (0, 0, 2))


def test_answers_to_a_call_window_touch_no_away_mark_and_its_time_out_is_private() -> None:
    """The away marks are public and who may claim is private: a claim, a pass or a
    time-out in a call window neither counts nor clears, and only its seat is told of
    the time-out."""
    state = msgspec.structs.replace(discarded_5s(), timeouts=(0, 1, 1))
    state, _ = kw.apply(state, 1, Claim(kind="pong", tiles=("5s", "5s")))
    assert state.timeouts == (0, 1, 1)
    state, events = kw.apply(state, 2, TimeOut())
    assert events[0] == TimedOut(seat=2, away=False, call=True)
    assert [kw.event_for(events[0], viewer) for viewer in (None, 0, 1, 2)] == [
        None,
        None,
        None,
        events[0],
    ]
    assert state.away == () and state.timeouts == (0, 1, 1)
    assert kw.result(state) is not None


def test_a_window_only_away_seats_may_claim_is_settled_out_of_sight() -> None:
    state = away(rig(WIN_OVER_PONG, front="5s"), 1, 2)
    state, _ = kw.apply(state, 0, Draw())
    state, events = kw.apply(state, 0, Discard("5s"))
    assert not any(isinstance(e, CallWindowOpened) for e in events)
    assert CallAnswered(seat=1, claim=None) in events  # told to seat 1 alone
    assert events[-1] == HandWon(seat=2, tile="5s", self_draw=False, discarder=0)
    assert (state.away, state.timeouts) == ((False, True, True), (0, 2, 2))


def test_a_kong_only_away_seats_may_rob_is_not_offered_in_sight() -> None:
    state = rig(
        ["258p 258s 5z 6z 7z 1p", "56s 234p 567p 888p 99s", None],
        front="7s",
        back="4p",
        melds={0: [pong("7s", from_seat=2)]},
    )
    state, _ = kw.apply(away(state, 1), 0, Draw())
    state, events = kw.apply(state, 0, DeclareKong("7s"))  # seat 1 (away) robs it
    assert not any(isinstance(e, KongOffered | CallWindowOpened) for e in events)
    assert isinstance(events[-1], HandWon) and events[-1].robbed_kong


def test_back_is_offered_first_at_any_moment_and_changes_nothing_else() -> None:
    state = away(discarded_5s(), 0, 2)
    assert state.call is not None
    assert kw.legal_actions(state, 2) == [Back(), *state.call.offers[2], Pass()]
    assert kw.legal_actions(state, 0) == [Back()]  # the discarder, not waited on
    back, events = kw.apply(state, 0, Back())
    assert events == [Returned(seat=0)]
    assert (back.away, back.timeouts) == ((False, False, True), (0, 0, 2))
    unchanged = msgspec.structs.replace(back, away=state.away, timeouts=state.timeouts)
    assert unchanged == msgspec.structs.replace(state, step=state.step + 1)
    assert kw.legal_actions(back, 0) == []
    raises(back, 0, Back(), "not_away")
    raises(back, 1, Back(), "not_away")


def test_back_restores_the_full_clock() -> None:
    state = away(rig([None, None, None], front="9s"), 0)
    assert kw.pending_timer(state) == Timer(kind="turn", seats=(0,), seconds=0, opened_at=0)
    assert kw.legal_actions(state, 0) == [Back(), Draw()]
    state, _ = kw.apply(state, 0, Back())
    assert kw.pending_timer(state) == Timer(kind="turn", seats=(0,), seconds=30, opened_at=0)


def test_back_after_the_hand_is_over_is_refused() -> None:
    state = away(rig(WAITS_5S, front="5s"), 1)
    state, _ = kw.apply(state, 0, TimeOut())
    assert kw.away_seats(state) == (1,) and kw.legal_actions(state, 1) == []
    raises(state, 1, Back(), "hand_over")


# -- events and views -----------------------------------------------------------------


def test_time_out_and_back_events_are_public_and_travel_as_json() -> None:
    for event in (TimedOut(seat=1, away=True), Returned(seat=1)):
        for viewer in (None, 0, 1, 2):
            assert kw.event_for(event, viewer) == event
        assert kw.EVENT_JSON_DECODER.decode(msgspec.json.encode(event)) == event
    assert msgspec.json.encode(Returned(seat=2)) == b'{"type":"returned","seat":2}'
    assert kw.decode_action(b'{"type": "back"}') == Back()
    assert kw.ACTION_MSGPACK_DECODER.decode(msgspec.msgpack.encode(Back())) == Back()


def test_views_show_who_is_away_and_the_clock_but_not_who_may_claim() -> None:
    state = away(rig([None, None, None], front="9s"), 2)
    for viewer in (None, 0, 1, 2):
        seen = kw.view(state, viewer)
        assert seen.away == (False, False, True)
        assert seen.clock == Clock(kind="turn", seats=(0,), seconds=30)
        assert all(p.hand is None for p in seen.players if p.seat != viewer)
    assert kw.view(state, 2).legal == (Back(),)
    window = discarded_5s()
    assert kw.view(window, 1).clock == Clock(kind="call", seats=(1,), seconds=10)
    for viewer in (None, 0):
        assert kw.view(window, viewer).clock == Clock(kind="call", seats=(), seconds=10)
    decoded = msgspec.json.decode(msgspec.json.encode(kw.view(window, 2)), type=kw.View)
    assert decoded == kw.view(window, 2)


# -- whole hands ----------------------------------------------------------------------


def _sleepy_hand(
    seed: bytes, rng: random.Random
) -> tuple[State, list[tuple[int, kw.AnyAction]], int]:
    """Bots that time out often (a third of their moves) and sometimes come back."""
    state = kw.new_hand(DEFAULT, seed)
    moves: list[tuple[int, kw.AnyAction]] = []
    marked = 0
    while not kw.is_over(state):
        comeback = [s for s in kw.away_seats(state) if rng.random() < 0.2]
        action: kw.AnyAction
        if comeback:
            seat, action = comeback[0], Back()
        else:
            seat = rng.choice(kw.to_act(state))
            sleepy = rng.random() < 0.35
            action = TimeOut() if sleepy else choose(state, seat, rng, greedy=True)
        before = state
        state, events = kw.apply(state, seat, action)
        if isinstance(action, TimeOut) and before.phase == "calls":  # private: no count
            assert events[0] == TimedOut(seat=seat, away=False, call=True)
            assert (state.away, state.timeouts) == (before.away, before.timeouts)
        elif isinstance(action, TimeOut):
            now_away = seat in kw.away_seats(state)
            assert events[0] == TimedOut(seat=seat, away=now_away)
            marked += now_away and seat not in kw.away_seats(before)
        elif before.phase == "calls" and not isinstance(action, Back):
            assert (state.away, state.timeouts) == (before.away, before.timeouts)
        else:
            assert seat not in kw.away_seats(state)
        assert accounted(state) and kw.hand_size_ok(state)
        moves.append((seat, action))
    return state, moves, marked


def test_hands_with_time_outs_and_comebacks_replay_exactly() -> None:
    marked = back = 0
    for n in range(12):
        seed = f"clock-{n}".encode()
        final, moves, away_now = _sleepy_hand(seed, random.Random(n))
        marked += away_now
        back += sum(isinstance(a, Back) for _, a in moves)
        state = kw.new_hand(DEFAULT, seed)
        for seat, action in moves:
            state, _ = kw.apply(state, seat, kw.decode_action(msgspec.json.encode(action)))
        assert msgspec.msgpack.encode(state) == msgspec.msgpack.encode(final)
        assert kw.result(state) == kw.result(final)
    assert marked > 0 and back > 0
