"""The turn clock in every ruleset: one timer per turn, conservative auto-play on a
time-out (draw, win if complete, else discard the drawn tile; claim an offered win, else
pass), away marking after time-outs in a row, ``Back``, and what views and events show.
"""

from __future__ import annotations

import random

import msgspec
import pytest

from kalaro.games import mahjong as mj
from kalaro.games.base import IllegalAction
from kalaro.games.mahjong import (
    Back,
    CallAnswered,
    CallWindowOpened,
    Claim,
    ClaimsOffered,
    Clock,
    DeclareKang,
    Discard,
    Draw,
    HandWon,
    Pass,
    Returned,
    State,
    TileDiscarded,
    TileDrawn,
    TimedOut,
    TimeOut,
    Timer,
)
from tests.unit.mahjong.helpers import (
    JOKER,
    KALARO,
    PINOY,
    RULESET_OPTIONS,
    accounted,
    choose,
    play,
    rig,
)
from tests.unit.mahjong.tables import CLAIMS, KANGS, TWO_WINNERS, WIN_OVER_PONG, after_discard


def raises(state: State, seat: int, action: mj.AnyAction, code: str) -> None:
    before = msgspec.msgpack.encode(state)
    with pytest.raises(IllegalAction) as caught:
        mj.apply(state, seat, action)
    assert caught.value.code == code
    assert msgspec.msgpack.encode(state) == before


def away(state: State, *seats: int) -> State:
    """``state`` with ``seats`` marked away (as two time-outs in a row would)."""
    flags = tuple(s in seats for s in range(4))
    return msgspec.structs.replace(state, away=flags, timeouts=tuple(2 * f for f in flags))


# -- options --------------------------------------------------------------------------------


@pytest.mark.parametrize(("ruleset", "seconds"), [("kalaro", 30), ("joker", 30), ("pinoy", 20)])
def test_every_ruleset_runs_a_turn_clock_by_default(ruleset: str, seconds: int) -> None:
    options = mj.options_for(ruleset)
    assert (options.turn_seconds, options.away_after_timeouts) == (seconds, 2)
    assert (options.call_seconds, mj.Options().turn_seconds) == (10, 30)
    assert mj.options_for(ruleset, turn_seconds=None).turn_seconds is None  # off


@pytest.mark.parametrize(
    "overrides",
    [
        {"turn_seconds": 0},
        {"turn_seconds": 601},
        {"away_after_timeouts": 0},
        {"away_after_timeouts": 11},
    ],
)
def test_clock_options_have_bounds(overrides: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="bad Mahjong option value"):
        mj.options_for("kalaro", **overrides)
    edge = {k: 600 if k == "turn_seconds" else 10 for k in overrides}
    assert mj.options_for("kalaro", **edge)


def test_stored_options_and_states_from_before_the_clock_still_decode() -> None:
    state = rig(CLAIMS, front="9s")
    stored = msgspec.to_builtins(state)
    for field in ("away", "timeouts"):
        del stored[field]
    del stored["options"]["away_after_timeouts"]
    old = msgspec.convert(stored, State)
    assert (old.away, old.timeouts, old.options.away_after_timeouts) == ((), (), 2)
    assert mj.away_seats(old) == ()
    assert mj.view(old, 0).away == (False,) * 4
    after, events = mj.apply(old, 0, TimeOut())
    assert (after.away, after.timeouts) == ((False,) * 4, (1, 0, 0, 0))
    assert events[0] == TimedOut(seat=0, away=False)


# -- one timer per turn ---------------------------------------------------------------------


def test_the_turn_timer_runs_per_turn_not_restarted_by_a_draw_or_kang() -> None:
    state = rig(KANGS, front="7s", back="7s 7s", discarded=True)
    timer = Timer(kind="turn", seats=(0,), seconds=30, opened_at=0)
    assert mj.pending_timer(state) == timer
    for action in (Draw(), DeclareKang("1p")):
        state, _ = mj.apply(state, 0, action)
        assert mj.pending_timer(state) == timer
    state, _ = mj.apply(state, 0, Discard("7s"))
    assert state.turn == 1 and mj.pending_timer(state) == Timer(
        kind="turn", seats=(1,), seconds=30, opened_at=state.step
    )


def test_a_time_out_never_declares_a_kang() -> None:
    state = rig(KANGS, front="7s", back="7s 7s", discarded=True)
    state, events = mj.apply(state, 0, TimeOut())
    assert events[:3] == [
        TimedOut(seat=0, away=False),
        TileDrawn(seat=0, tile="7s"),
        TileDiscarded(seat=0, tile="7s"),
    ]
    assert state.players[0].melds == () and state.players[0].hand.count("1p") == 4


# -- the turn's time-out -------------------------------------------------------------------


@pytest.mark.parametrize("ruleset", list(RULESET_OPTIONS))
def test_a_turn_time_out_draws_and_discards_the_drawn_tile(ruleset: str) -> None:
    options = RULESET_OPTIONS[ruleset]
    indicator = None if ruleset == "kalaro" else "9p"
    state = rig(CLAIMS, front="9s", options=options, indicator=indicator, discarded=True)
    state, events = mj.apply(state, 0, TimeOut())
    assert events[:3] == [
        TimedOut(seat=0, away=False),
        TileDrawn(seat=0, tile="9s"),
        TileDiscarded(seat=0, tile="9s"),
    ]
    assert state.timeouts == (1, 0, 0, 0) and state.away == (False,) * 4
    assert accounted(state)


def test_a_turn_time_out_takes_an_offered_self_draw_win() -> None:
    # Seat 2 deals and draws the 5m that completes its hand.
    state = rig(TWO_WINNERS, dealer=2, front="5m", discarded=True)
    state, events = mj.apply(state, 2, TimeOut())
    assert events == [
        TimedOut(seat=2, away=False),
        TileDrawn(seat=2, tile="5m"),
        HandWon(seat=2, tile="5m", self_draw=True),
    ]
    result = mj.result(state)
    assert result is not None and result.winner == 2 and result.ending == "self_draw"


def test_a_time_out_after_drawing_a_winning_tile_declares_the_win() -> None:
    state = rig(TWO_WINNERS, dealer=2, front="5m", discarded=True)
    state, _ = mj.apply(state, 2, Draw())
    state, events = mj.apply(state, 2, TimeOut())
    assert events == [TimedOut(seat=2, away=False), HandWon(seat=2, tile="5m", self_draw=True)]


def test_a_dealer_timed_out_in_the_first_turn_wins_bisaklat() -> None:
    state = rig(TWO_WINNERS, dealer=2, front="5m", options=JOKER, indicator="6z", discarded=False)
    state, events = mj.apply(state, 2, TimeOut())
    assert isinstance(events[-1], HandWon) and events[-1].category == "Bisaklat Regular"


# -- the call window's time-out ------------------------------------------------------------


def test_a_call_window_time_out_claims_an_offered_win() -> None:
    state = after_discard(TWO_WINNERS, "1z", "5m")
    state, events = mj.apply(state, 2, TimeOut())
    assert events[:2] == [
        TimedOut(seat=2, away=False, call=True),
        CallAnswered(seat=2, claim=Claim(kind="mahjong")),
    ]
    assert events[-1] == HandWon(seat=2, tile="5m", self_draw=False, discarder=0)
    assert mj.is_over(state)


def test_a_call_window_time_out_passes_a_pong_but_claims_a_win() -> None:
    state = after_discard(WIN_OVER_PONG, "1z", "5m")
    state, events = mj.apply(state, 2, TimeOut())  # seat 2 may only pong: pass
    assert events == [TimedOut(seat=2, away=False, call=True), CallAnswered(seat=2, claim=None)]
    state, events = mj.apply(state, 3, TimeOut())  # seat 3 may win
    assert events[1] == CallAnswered(seat=3, claim=Claim(kind="mahjong"))
    result = mj.result(state)
    assert result is not None and result.winner == 3


def test_a_timed_out_win_is_not_a_passed_win() -> None:
    state = after_discard(WIN_OVER_PONG, "1z", "5m", options=JOKER, indicator="6z")
    state, _ = mj.apply(state, 2, Pass())
    state, _ = mj.apply(state, 3, TimeOut())
    assert mj.is_over(state) and not any(state.passed_win)


# -- away -----------------------------------------------------------------------------------


def test_two_time_outs_in_a_row_mark_a_seat_away_and_its_clock_runs_0_s() -> None:
    # Seat 1 lets its own turn pass twice: away.
    state = rig(CLAIMS, dealer=1, front="99s", discarded=True)
    state, events = mj.apply(state, 1, TimeOut())
    assert events[0] == TimedOut(seat=1, away=False) and state.timeouts == (0, 1, 0, 0)
    state = msgspec.structs.replace(state, phase="draw", call=None, turn=1, turn_started=9)
    assert mj.pending_timer(state) == Timer(kind="turn", seats=(1,), seconds=30, opened_at=9)
    state, events = mj.apply(state, 1, TimeOut())
    assert events[0] == TimedOut(seat=1, away=True)
    assert state.away == (False, True, False, False) and state.timeouts == (0, 2, 0, 0)
    assert mj.away_seats(state) == (1,)
    # Its next turn runs 0 s; a seat that is not away gets the full turn.
    assert mj.pending_timer(rig(CLAIMS, dealer=1)) == Timer(
        kind="turn", seats=(1,), seconds=30, opened_at=0
    )
    later = away(rig(CLAIMS, dealer=1), 1)
    assert mj.pending_timer(later) == Timer(kind="turn", seats=(1,), seconds=0, opened_at=0)


def test_the_away_threshold_is_an_option() -> None:
    options = mj.options_for("kalaro", away_after_timeouts=1)
    state = rig(CLAIMS, front="9s", options=options, discarded=True)
    state, events = mj.apply(state, 0, TimeOut())
    assert events[0] == TimedOut(seat=0, away=True)


def test_an_away_seat_stays_away_and_keeps_counting() -> None:
    state = away(rig(CLAIMS, front="9s", discarded=True), 0)
    state, events = mj.apply(state, 0, TimeOut())
    assert events[0] == TimedOut(seat=0, away=True) and state.timeouts[0] == 3


def test_a_call_window_runs_its_full_length_even_waiting_only_on_away_seats() -> None:
    """Who may claim is private: a window's deadline (every seat sees it) must not tell
    that only away seats can claim, so it never shortens for them."""
    state = after_discard(CLAIMS, "9s", "5m")  # waits on seats 1 and 2
    assert mj.pending_timer(away(state, 1)) == Timer(
        kind="call", seats=(1, 2), seconds=10, opened_at=2
    )
    assert mj.pending_timer(away(state, 1, 2)) == Timer(
        kind="call", seats=(1, 2), seconds=10, opened_at=2
    )
    answered, _ = mj.apply(away(state, 1), 2, Pass())  # now it waits on seat 1 alone
    assert mj.pending_timer(answered) == Timer(kind="call", seats=(1,), seconds=10, opened_at=2)
    for viewer in (0, 3, None):  # not waited on: the same clock as when others may claim
        assert mj.view(answered, viewer).clock == Clock(kind="call", seats=(), seconds=10)
        assert mj.view(answered, viewer).clock == mj.view(state, viewer).clock
    assert mj.view(answered, 1).clock == Clock(kind="call", seats=(1,), seconds=10)


def test_an_own_move_clears_away() -> None:
    state = away(rig(CLAIMS, front="9s", discarded=True), 0, 2)
    state, events = mj.apply(state, 0, Draw())
    assert not any(isinstance(e, Returned) for e in events)
    assert state.away == (False, False, True, False) and state.timeouts == (0, 0, 2, 0)
    assert mj.pending_timer(state) == Timer(kind="turn", seats=(0,), seconds=30, opened_at=0)


def test_an_own_move_resets_the_count_of_time_outs() -> None:
    state = msgspec.structs.replace(after_discard(CLAIMS, "9s", "5m"), timeouts=(0, 1, 0, 0))
    state, _ = play(state, [(1, Pass()), (2, Pass())])
    assert state.timeouts == (0, 1, 0, 0)  # an answer to a call window is private
    state, _ = mj.apply(state, 1, Draw())
    assert state.timeouts == (0, 0, 0, 0)
    state, events = mj.apply(state, 1, TimeOut())
    assert events[0] == TimedOut(seat=1, away=False)


def test_a_call_window_time_out_is_told_only_to_its_seat_and_never_marks_it_away() -> None:
    """Every seat sees the away marks: if a call window's time-out counted, the mark (or
    a later one, a time-out sooner) would tell them the seat could claim the tile."""
    state = msgspec.structs.replace(after_discard(CLAIMS, "9s", "5m"), timeouts=(0, 1, 0, 0))
    state, events = mj.apply(state, 1, TimeOut())
    assert events[0] == TimedOut(seat=1, away=False, call=True)
    assert state.away == () and state.timeouts == (0, 1, 0, 0)
    assert mj.event_for(events[0], 1) == events[0]
    for viewer in (None, 0, 2, 3):
        assert mj.event_for(events[0], viewer) is None
    assert (
        msgspec.json.encode(events[0]) == b'{"type":"timed_out","seat":1,"away":false,"call":true}'
    )


def test_a_window_only_away_seats_may_claim_is_settled_out_of_sight() -> None:
    """Seats 1 and 2 (away) may chow and pong 5m, nobody else anything: they pass at once
    and the next turn begins, with no public trace of a window (each seat is told its own
    part), so nobody learns that an away seat could claim."""
    state = away(rig(CLAIMS, front="9s", discarded=True), 1, 2)
    state, _ = mj.apply(state, 0, Draw())
    state, events = mj.apply(state, 0, Discard("5m"))
    assert state.phase == "draw" and state.turn == 1 and state.call is None
    assert mj.pending_timer(state) == Timer(
        kind="turn", seats=(1,), seconds=0, opened_at=state.step
    )
    for viewer in (None, 0, 3):
        seen = [e for e in events if mj.event_for(e, viewer) is not None]
        assert seen == [TileDiscarded(seat=0, tile="5m")]
    own = [e for e in events if mj.event_for(e, 1) is not None]
    assert [type(e) for e in own] == [TileDiscarded, ClaimsOffered, CallAnswered]
    assert own[-1] == CallAnswered(seat=1, claim=None)
    assert state.away == (False, True, True, False) and state.timeouts == (0, 2, 2, 0)


def test_an_away_seat_takes_an_offered_win_at_once_out_of_sight() -> None:
    state = away(rig(TWO_WINNERS, front="1z", discarded=True), 2, 3)
    state, _ = mj.apply(state, 0, Draw())
    state, events = mj.apply(state, 0, Discard("5m"))
    assert not any(isinstance(e, CallWindowOpened) for e in events)
    assert events[-1] == HandWon(seat=2, tile="5m", self_draw=False, discarder=0)


def test_an_away_seat_is_answered_at_once_in_a_window_others_may_claim() -> None:
    """Seat 3 (away) may win, seat 2 (nearer, not away) too: the window opens in sight
    with seat 3's win already claimed, and waits the full call_seconds on seat 2 alone."""
    state = away(rig(TWO_WINNERS, front="1z", discarded=True), 3)
    state, _ = mj.apply(state, 0, Draw())
    state, events = mj.apply(state, 0, Discard("5m"))
    assert any(isinstance(e, CallWindowOpened) for e in events)
    assert CallAnswered(seat=3, claim=Claim(kind="mahjong")) in events
    assert mj.to_act(state) == [2]
    assert mj.pending_timer(state) == Timer(
        kind="call", seats=(2,), seconds=10, opened_at=state.step
    )
    assert mj.legal_actions(state, 3) == [Back()]
    state, _ = mj.apply(state, 2, Pass())
    result = mj.result(state)
    assert result is not None and result.winner == 3


def test_back_is_offered_first_at_any_moment_and_changes_nothing_else() -> None:
    state = away(after_discard(CLAIMS, "9s", "5m"), 1, 3)
    assert state.call is not None
    assert mj.legal_actions(state, 1) == [Back(), *state.call.offers[1], Pass()]
    assert mj.legal_actions(state, 3) == [Back()]  # not waited on, still may come back
    assert mj.to_act(state) == [1, 2]
    back, events = mj.apply(state, 3, Back())
    assert events == [Returned(seat=3)]
    assert back.away == (False, True, False, False) and back.timeouts == (0, 2, 0, 0)
    unchanged = msgspec.structs.replace(back, away=state.away, timeouts=state.timeouts)
    assert unchanged == msgspec.structs.replace(state, step=state.step + 1)
    assert mj.legal_actions(back, 3) == []


def test_back_restores_the_full_clock_with_a_fresh_deadline() -> None:
    state = away(rig(CLAIMS, front="9s", discarded=True), 0)
    assert mj.pending_timer(state) == Timer(kind="turn", seats=(0,), seconds=0, opened_at=0)
    assert mj.legal_actions(state, 0) == [Back(), Draw()]
    state, _ = mj.apply(state, 0, Back())
    assert mj.pending_timer(state) == Timer(kind="turn", seats=(0,), seconds=30, opened_at=0)
    assert mj.legal_actions(state, 0) == [Draw()]


def test_back_is_illegal_unless_away() -> None:
    state = rig(CLAIMS, front="9s", discarded=True)
    raises(state, 0, Back(), "not_away")
    raises(state, 2, Back(), "not_away")
    over = away(rig(TWO_WINNERS, dealer=2, front="5m", discarded=True), 1)
    over, _ = mj.apply(over, 2, TimeOut())
    assert mj.is_over(over) and mj.away_seats(over) == (1,)
    assert mj.legal_actions(over, 1) == []
    raises(over, 1, Back(), "hand_over")


# -- events and views -----------------------------------------------------------------------


def test_time_out_and_back_events_are_public_and_travel_as_json() -> None:
    for event in (TimedOut(seat=1, away=True), Returned(seat=1)):
        for viewer in (None, 0, 1, 2, 3):
            assert mj.event_for(event, viewer) == event
        assert mj.EVENT_JSON_DECODER.decode(msgspec.json.encode(event)) == event
    assert msgspec.json.encode(TimedOut(seat=1, away=True)) == (
        b'{"type":"timed_out","seat":1,"away":true}'
    )
    assert msgspec.json.encode(Returned(seat=2)) == b'{"type":"returned","seat":2}'
    assert mj.decode_action(b'{"type": "back"}') == Back()
    assert mj.ACTION_MSGPACK_DECODER.decode(msgspec.msgpack.encode(Back())) == Back()


def test_views_show_who_is_away_and_the_turn_clock() -> None:
    state = away(rig(CLAIMS, front="9s", options=PINOY, indicator="9p", discarded=True), 2)
    for viewer in (None, 0, 1, 2, 3):
        seen = mj.view(state, viewer)
        assert seen.away == (False, False, True, False)
        assert seen.clock == Clock(kind="turn", seats=(0,), seconds=20)
        assert all(p.hand is None for p in seen.players if p.seat != viewer)
    assert mj.view(state, 2).legal == (Back(),)
    assert mj.view(away(state, 0), 1).clock == Clock(kind="turn", seats=(0,), seconds=0)
    untimed = msgspec.structs.replace(
        state, options=msgspec.structs.replace(PINOY, turn_seconds=None)
    )
    assert mj.view(untimed, 0).clock is None
    decoded = msgspec.json.decode(msgspec.json.encode(mj.view(state, 1)), type=mj.View)
    assert decoded == mj.view(state, 1)


def test_a_call_window_clock_shows_only_the_viewers_own_seat() -> None:
    state = after_discard(CLAIMS, "9s", "5m")  # waits on seats 1 and 2 (private)
    assert mj.view(state, 1).clock == Clock(kind="call", seats=(1,), seconds=10)
    assert mj.view(state, 2).clock == Clock(kind="call", seats=(2,), seconds=10)
    for viewer in (None, 0, 3):
        assert mj.view(state, viewer).clock == Clock(kind="call", seats=(), seconds=10)
    over, _ = play(state, [(1, Pass()), (2, Pass())])
    assert mj.view(over, None).clock == Clock(kind="turn", seats=(1,), seconds=30)


def test_a_finished_hand_has_no_clock() -> None:
    state = rig(TWO_WINNERS, dealer=2, front="5m", discarded=True)
    state, _ = mj.apply(state, 2, TimeOut())
    assert mj.pending_timer(state) is None and mj.view(state, None).clock is None


# -- whole hands ----------------------------------------------------------------------------


def _sleepy_hand(
    seed: bytes, rng: random.Random, options: mj.Options
) -> tuple[State, list[tuple[int, mj.AnyAction]], int]:
    """Bots that time out often (a third of their moves) and sometimes come back.

    The final state, every (seat, action), and how often a seat was marked away.
    """
    state = mj.new_hand(options, seed)
    moves: list[tuple[int, mj.AnyAction]] = []
    marked = 0
    while not mj.is_over(state):
        comeback = [s for s in mj.away_seats(state) if rng.random() < 0.2]
        action: mj.AnyAction
        if comeback:
            seat, action = comeback[0], Back()
        else:
            seat = rng.choice(mj.to_act(state))
            timer = mj.pending_timer(state)
            sleepy = timer is not None and seat in timer.seats and rng.random() < 0.35
            action = TimeOut() if sleepy else choose(state, seat, rng, greedy=True)
        before = state
        state, events = mj.apply(state, seat, action)
        if isinstance(action, TimeOut) and before.phase == "calls":  # private: no count
            assert events[0] == TimedOut(seat=seat, away=False, call=True)
            assert (state.away, state.timeouts) == (before.away, before.timeouts)
        elif isinstance(action, TimeOut):
            now_away = seat in mj.away_seats(state)
            assert events[0] == TimedOut(seat=seat, away=now_away)
            assert state.timeouts[seat] == (before.timeouts or (0,) * 4)[seat] + 1
            marked += now_away and seat not in mj.away_seats(before)
        elif before.phase == "calls" and not isinstance(action, Back):
            assert (state.away, state.timeouts) == (before.away, before.timeouts)
        else:
            assert seat not in mj.away_seats(state)
            assert state.timeouts[seat : seat + 1] in ((), (0,))
        assert accounted(state)
        moves.append((seat, action))
    return state, moves, marked


@pytest.mark.parametrize("n", range(12))
def test_a_hand_with_time_outs_and_comebacks_replays_exactly(n: int) -> None:
    options = list(RULESET_OPTIONS.values())[n % 3]
    seed = f"clock-{n}".encode()
    final, moves, _ = _sleepy_hand(seed, random.Random(n), options)
    assert any(isinstance(a, TimeOut) for _, a in moves)
    state = mj.new_hand(options, seed)
    for seat, action in moves:
        state, _ = mj.apply(state, seat, mj.decode_action(msgspec.json.encode(action)))
    assert msgspec.msgpack.encode(state) == msgspec.msgpack.encode(final)
    assert mj.result(state) == mj.result(final)
    assert mj.away_seats(state) == mj.away_seats(final)


def test_sleepy_tables_do_mark_seats_away_and_bring_them_back() -> None:
    marked = back = 0
    for n in range(12):
        _, moves, away_now = _sleepy_hand(f"clock-{n}".encode(), random.Random(n), KALARO)
        back += sum(isinstance(a, Back) for _, a in moves)
        marked += away_now
    assert marked > 0 and back > 0
