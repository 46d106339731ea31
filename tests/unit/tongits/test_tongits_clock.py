"""The turn clock: timers per phase, auto-play on time-out, away marking and ``Back``."""

from __future__ import annotations

import msgspec
import pytest
from msgspec.structs import replace

from kalaro.games.base import IllegalAction
from kalaro.games.cards import card_value
from kalaro.games.tongits import (
    ACTION_JSON_DECODER,
    EVENT_JSON_DECODER,
    Action,
    Back,
    CallDraw,
    CardDiscarded,
    CardDrawn,
    Clock,
    Discard,
    Draw,
    Fold,
    Folded,
    HandEnded,
    Meld,
    Options,
    Returned,
    State,
    TimedOut,
    TimeOut,
    Timer,
    apply,
    away_seats,
    decode_action,
    event_for,
    legal_actions,
    new_hand,
    options_for,
    pending_timer,
    view,
)
from tests.unit.tongits.tongits_helpers import CLASSIC, KALARO, meld, table


def _code(state: State, seat: int, action: Action) -> str:
    with pytest.raises(IllegalAction) as err:
        apply(state, seat, action)
    return err.value.code


def _time_out(state: State, seat: int) -> State:
    state, events = apply(state, seat, TimeOut())
    assert isinstance(events[0], TimedOut)
    return state


# -- options -----------------------------------------------------------------------------


@pytest.mark.parametrize("ruleset", ["kalaro", "classic"])
def test_the_clock_is_on_by_default_in_both_rulesets(ruleset: str) -> None:
    options = options_for(ruleset)
    assert options.turn_seconds == 30
    assert options.away_after_timeouts == 2
    assert options_for(ruleset, turn_seconds=None).turn_seconds is None
    assert options_for(ruleset, turn_seconds=600, away_after_timeouts=10).turn_seconds == 600


@pytest.mark.parametrize(
    "overrides",
    [
        {"turn_seconds": 0},
        {"turn_seconds": 601},
        {"turn_seconds": "30"},
        {"away_after_timeouts": 0},
        {"away_after_timeouts": 11},
        {"away_after_timeouts": None},
    ],
)
def test_clock_options_out_of_bounds_are_refused(overrides: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="bad Tongits option value"):
        options_for("kalaro", **overrides)


def test_stored_options_and_states_without_the_clock_still_decode() -> None:
    clock_fields = ("turn_seconds", "away_after_timeouts")
    old_options = {k: v for k, v in msgspec.to_builtins(CLASSIC).items() if k not in clock_fields}
    assert msgspec.convert(old_options, Options) == CLASSIC
    state = new_hand(KALARO, b"old", dealer=0)
    stored = msgspec.to_builtins(state)
    for field in ("turn_no", "away", "timeouts"):
        del stored[field]
    old = msgspec.convert(stored, State)
    assert (old.turn_no, old.away, old.timeouts) == (0, (), ())
    assert away_seats(old) == ()
    assert not any(old.is_away(s) for s in range(3))
    assert [old.timeouts_of(s) for s in range(3)] == [0, 0, 0]
    new = _time_out(old, 0)
    assert (new.timeouts, new.away) == ((1, 0, 0), (False, False, False))


# -- timers --------------------------------------------------------------------------------


def test_the_turn_timer_is_one_window_per_turn() -> None:
    state = table(KALARO, hands=["AS 2S 3S 9H KD", "AC 4C", "AD 2D"], turn=0, phase="start")
    state = replace(state, turn_no=7)
    turn = Timer(kind="turn", seats=(0,), seconds=30, opened_at=7)
    assert pending_timer(state) == turn
    # moves inside the turn keep the same window
    state, _ = apply(state, 0, Draw())
    assert pending_timer(state) == turn
    state, _ = apply(state, 0, Meld(("AS", "2S", "3S")))
    assert pending_timer(state) == turn
    # the discard starts the next turn: a new window
    state, _ = apply(state, 0, Discard("KD"))
    assert state.turn_no == 8
    assert pending_timer(state) == Timer(kind="turn", seats=(1,), seconds=30, opened_at=8)
    state, _ = apply(state, 1, Draw())
    state, _ = apply(state, 1, Discard(state.hands[1][0]))
    assert pending_timer(state) == Timer(kind="turn", seats=(2,), seconds=30, opened_at=9)


def test_the_turn_seconds_are_an_option_and_off_means_no_timer() -> None:
    state = new_hand(options_for("classic", turn_seconds=90), b"slow", dealer=1)
    assert pending_timer(state) == Timer(kind="turn", seats=(1,), seconds=90, opened_at=0)
    off = new_hand(options_for("kalaro", turn_seconds=None), b"off", dealer=1)
    assert pending_timer(off) is None
    assert view(off, 1).clock is None
    assert _code(off, 1, TimeOut()) == "no_timer"


def _call(options: Options = KALARO, **fields: object) -> State:
    """Seat 0 calls Draw; seats 1 and 2 are opened and must answer."""
    state = table(
        options,
        hands=["2S 3D", "AC 4C", "AD 2D"],
        melds=[meld(0, 0, "7S 8S 9S"), meld(1, 1, "JH QH KH"), meld(2, 2, "5D 5C 5H")],
        turn=0,
    )
    state = replace(state, turn_no=4, **fields)
    state, _ = apply(state, 0, CallDraw())
    return state


def test_the_fight_or_fold_window_keeps_its_own_clock_even_with_the_turn_clock_off() -> None:
    fight = Timer(kind="fight_or_fold", seats=(1, 2), seconds=20, opened_at=4)
    assert pending_timer(_call()) == fight
    assert pending_timer(_call(options_for("kalaro", turn_seconds=None))) == fight
    state, events = apply(_call(), 1, TimeOut())
    assert events == [TimedOut(seat=1, away=False), Folded(seat=1, timed_out=True)]
    assert state.draw_call is not None and state.draw_call.answers[1] == "fold"
    assert state.timeouts == (0, 1, 0)
    assert pending_timer(state) == replace(fight, seats=(2,))
    state, events = apply(state, 2, TimeOut())
    assert events[:2] == [TimedOut(seat=2, away=False), Folded(seat=2, timed_out=True)]
    assert isinstance(events[-1], HandEnded)
    assert pending_timer(state) is None
    assert view(state, None).clock is None


def test_the_fight_window_runs_out_at_once_only_when_everyone_it_waits_on_is_away() -> None:
    one = _call(away=(False, True, False), timeouts=(0, 2, 0))
    assert pending_timer(one) == Timer(kind="fight_or_fold", seats=(1, 2), seconds=20, opened_at=4)
    both = _call(away=(False, True, True), timeouts=(0, 2, 2))
    assert pending_timer(both) == Timer(kind="fight_or_fold", seats=(1, 2), seconds=0, opened_at=4)
    # seat 2 answers (and is back): the window now waits on away seat 1 only
    state, _ = apply(one, 2, Fold())
    assert state.away == (False, True, False)
    assert pending_timer(state) == Timer(kind="fight_or_fold", seats=(1,), seconds=0, opened_at=4)


# -- auto-play -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "discarded"),
    [
        # every card in hand counts: the highest value (J, Q, K tie: first in hand order)
        (KALARO, "JS"),
        # only cards outside melds count: the run J-Q-K stays, 9H is the worst card left
        (CLASSIC, "9H"),
    ],
)
def test_a_turn_that_times_out_draws_then_discards_the_least_deadwood(
    options: Options, discarded: str
) -> None:
    state = table(
        options,
        hands=["AC", "JS QS KS 9H 4D", "AD 2H"],
        discards="3D",
        stock="2D 6C 7C",
        turn=1,
        phase="start",
    )
    state, events = apply(state, 1, TimeOut())
    assert events == [
        TimedOut(seat=1, away=False),
        CardDrawn(seat=1, card="2D", stock_left=2),
        CardDiscarded(seat=1, card=discarded),
    ]
    assert set(state.hands[1]) == {"JS", "QS", "KS", "9H", "4D", "2D"} - {discarded}
    assert (state.turn, state.phase, state.turn_no) == (2, "start", 1)
    assert state.discards == ("3D", discarded)
    assert state.melds == ()
    assert state.timeouts == (0, 1, 0)
    assert away_seats(state) == ()


def test_a_time_out_never_takes_the_discard_nor_calls_draw() -> None:
    # seat 0 is opened and the top discard melds with its hand: it still just draws
    state = table(
        KALARO,
        hands=["5S 5H 2C", "AC 4C", "AD 2D"],
        melds=[meld(0, 0, "7S 8S 9S")],
        discards="5D",
        stock="KC QC",
        turn=0,
    )
    assert CallDraw() in legal_actions(state, 0)
    state, events = apply(state, 0, TimeOut())
    assert [type(e) for e in events] == [TimedOut, CardDrawn, CardDiscarded]
    assert events[2] == CardDiscarded(seat=0, card="KC")
    assert state.discards == ("5D", "KC")
    assert len(state.melds) == 1


def test_classic_ties_go_to_the_first_card_in_hand_order() -> None:
    state = table(CLASSIC, hands=["JS QS KS 5H 5D", "AC", "AD"], turn=0, phase="play")
    _, events = apply(state, 0, TimeOut())
    assert events == [TimedOut(seat=0, away=False), CardDiscarded(seat=0, card="5H")]


def test_after_drawing_a_time_out_only_discards() -> None:
    state = table(CLASSIC, hands=["4C", "AS 2S 3S 8D KH", "AD"], turn=1, phase="start")
    state, _ = apply(state, 1, Draw())
    stock = state.stock
    state, events = apply(state, 1, TimeOut())
    assert events == [TimedOut(seat=1, away=False), CardDiscarded(seat=1, card="KH")]
    assert state.stock == stock  # no second draw
    # the run A-2-3 was not exposed: a time-out never melds
    assert state.melds == ()


def test_a_dealers_first_turn_times_out_into_a_discard() -> None:
    state = new_hand(KALARO, b"dealer", dealer=2)
    hand = state.hands[2]
    state, events = apply(state, 2, TimeOut())
    assert len(events) == 2
    assert isinstance(events[1], CardDiscarded)
    # kalaro counts every card: the first card of the highest value in hand order
    assert events[1].card == next(c for c in hand if card_value(c) == max(map(card_value, hand)))
    assert len(state.stock) == 15


def test_a_time_out_discard_that_empties_the_hand_is_tongits() -> None:
    state = table(KALARO, hands=["9H", "AC 4C", "AD 2D"], turn=0, phase="play")
    state, events = apply(state, 0, TimeOut())
    assert events[:2] == [TimedOut(seat=0, away=False), CardDiscarded(seat=0, card="9H")]
    assert isinstance(events[2], HandEnded)
    assert state.result is not None
    assert (state.result.ending, state.result.winners) == ("tongits", (0,))


def test_a_time_out_drawing_the_last_card_ends_the_hand_at_stock_out() -> None:
    state = table(
        KALARO,
        hands=["9H 2C", "AC 4C", "AD 2D"],
        melds=[meld(0, 0, "7S 8S 9S")],
        stock="3C",
        turn=0,
    )
    state, events = apply(state, 0, TimeOut())
    assert events[1:3] == [
        CardDrawn(seat=0, card="3C", stock_left=0),
        CardDiscarded(seat=0, card="9H"),
    ]
    assert state.result is not None and state.result.ending == "stock_out"
    assert state.timeouts == (1, 0, 0)


def test_time_outs_are_only_for_the_seat_on_the_clock() -> None:
    state = new_hand(KALARO, b"who", dealer=0)
    assert _code(state, 1, TimeOut()) == "not_your_turn"
    fight = _call()
    assert _code(fight, 0, TimeOut()) == "not_asked"


# -- away ------------------------------------------------------------------------------------


def _round_of_time_outs(state: State) -> State:
    for _ in range(3):
        state = _time_out(state, state.turn)
    return state


def test_two_time_outs_in_a_row_mark_a_seat_away_and_its_clock_runs_out_at_once() -> None:
    state = _round_of_time_outs(new_hand(KALARO, b"away", dealer=0))
    assert state.timeouts == (1, 1, 1)
    assert away_seats(state) == ()
    # seat 0's second time-out in a row marks it away
    state, events = apply(state, 0, TimeOut())
    assert events[0] == TimedOut(seat=0, away=True)
    assert away_seats(state) == (0,)
    assert state.away == (True, False, False)
    assert pending_timer(state) == Timer(kind="turn", seats=(1,), seconds=30, opened_at=4)
    state = _time_out(_time_out(state, 1), 2)
    assert away_seats(state) == (0, 1, 2)
    assert pending_timer(state) == Timer(kind="turn", seats=(0,), seconds=0, opened_at=6)
    assert view(state, 1).clock == Clock(kind="turn", seats=(0,), seconds=0)
    # an away seat may come back at any moment: Back is listed first
    assert legal_actions(state, 1) == [Back()]
    assert legal_actions(state, 0)[0] == Back()
    assert legal_actions(state, 0)[1] == Draw()
    # more time-outs keep it away
    state, events = apply(state, 0, TimeOut())
    assert events[0] == TimedOut(seat=0, away=True)
    assert state.timeouts == (3, 2, 2)


def test_away_after_timeouts_is_an_option() -> None:
    patient = options_for("kalaro", away_after_timeouts=3)
    state = _round_of_time_outs(_round_of_time_outs(new_hand(patient, b"away", dealer=0)))
    assert state.timeouts == (2, 2, 2) and away_seats(state) == ()
    state, events = apply(state, 0, TimeOut())
    assert events[0] == TimedOut(seat=0, away=True)
    strict = new_hand(options_for("classic", away_after_timeouts=1), b"away", dealer=0)
    _, events = apply(strict, 0, TimeOut())
    assert events[0] == TimedOut(seat=0, away=True)


def test_any_own_action_clears_time_outs_and_away() -> None:
    state = _round_of_time_outs(_round_of_time_outs(new_hand(KALARO, b"back", dealer=0)))
    assert away_seats(state) == (0, 1, 2)
    assert pending_timer(state) == Timer(kind="turn", seats=(0,), seconds=0, opened_at=6)
    state, events = apply(state, 0, Draw())
    assert [type(e) for e in events] == [CardDrawn]  # no Returned for a plain move
    assert state.away == (False, True, True)
    assert state.timeouts == (0, 2, 2)
    # same turn, fresh deadline: the worker sees the seconds change
    assert pending_timer(state) == Timer(kind="turn", seats=(0,), seconds=30, opened_at=6)
    assert Back() not in legal_actions(state, 0)


def test_a_fight_or_fold_answer_clears_away() -> None:
    state = _call(away=(False, True, False), timeouts=(0, 5, 1))
    state, _ = apply(state, 1, Fold())
    state_2, _ = apply(state, 2, TimeOut())
    assert state.away == (False, False, False)
    assert state.timeouts == (0, 0, 1)
    assert state_2.timeouts == (0, 0, 2) and state_2.away == (False, False, True)


def test_back_clears_away_and_changes_nothing_else() -> None:
    state = _round_of_time_outs(_round_of_time_outs(new_hand(CLASSIC, b"back", dealer=1)))
    assert away_seats(state) == (0, 1, 2)
    # out of turn, it does not use anyone's turn
    back, events = apply(state, 2, Back())
    assert events == [Returned(seat=2)]
    assert back == replace(state, away=(True, True, False), timeouts=(2, 2, 0))
    assert pending_timer(back) == pending_timer(state)
    # on its own turn, the turn is still to play (and now on a full clock)
    assert state.turn == 1
    back, _ = apply(back, 1, Back())
    assert (back.turn, back.phase, back.hands) == (state.turn, state.phase, state.hands)
    assert pending_timer(back) == Timer(kind="turn", seats=(1,), seconds=30, opened_at=6)
    # and during a Draw call, without answering it
    calling = _call(away=(False, True, True), timeouts=(0, 2, 2))
    answered, events = apply(calling, 2, Back())
    assert events == [Returned(seat=2)]
    assert answered.away == (False, True, False)
    assert answered.draw_call == calling.draw_call
    assert pending_timer(answered) == Timer(
        kind="fight_or_fold", seats=(1, 2), seconds=20, opened_at=4
    )


def test_back_is_refused_when_not_away_or_after_the_hand() -> None:
    state = new_hand(KALARO, b"here", dealer=0)
    assert _code(state, 0, Back()) == "not_away"
    assert _code(state, 1, Back()) == "not_away"
    # one time-out is not away yet
    state = _time_out(state, 0)
    assert _code(state, 0, Back()) == "not_away"
    assert Back() not in legal_actions(state, 0)
    over = table(KALARO, hands=["9H", "AC 4C", "AD 2D"], turn=0, phase="play")
    over = replace(over, away=(False, True, False), timeouts=(0, 2, 0))
    over, _ = apply(over, 0, Discard("9H"))
    assert over.result is not None
    assert away_seats(over) == (1,)  # sent with the hand's end: seated out next deal
    assert _code(over, 1, Back()) == "hand_over"
    assert legal_actions(over, 1) == []


# -- messages and views ----------------------------------------------------------------------


def test_new_actions_and_events_serialise_and_every_seat_sees_them() -> None:
    assert decode_action(b'{"type":"back"}') == Back()
    assert ACTION_JSON_DECODER.decode(msgspec.json.encode(Back())) == Back()
    for event in (TimedOut(seat=1, away=True), Returned(seat=2)):
        assert EVENT_JSON_DECODER.decode(msgspec.json.encode(event)) == event
        assert all(event_for(event, s) == event for s in (0, 1, 2, None))
    assert msgspec.json.encode(TimedOut(seat=1, away=True)) == (
        b'{"type":"timed_out","seat":1,"away":true}'
    )
    assert msgspec.json.encode(Returned(seat=2)) == b'{"type":"returned","seat":2}'


def test_an_auto_drawn_card_stays_with_its_drawer() -> None:
    state = table(KALARO, hands=["AC 2C", "5S 6S", "AD"], stock="QH KD", turn=1)
    _, events = apply(state, 1, TimeOut())
    drawn = events[1]
    assert drawn == CardDrawn(seat=1, card="QH", stock_left=1)
    assert event_for(drawn, 1) == drawn
    for other in (0, 2, None):
        assert event_for(drawn, other) == CardDrawn(seat=1, card=None, stock_left=1)


def test_every_view_shows_who_is_away_and_the_clock() -> None:
    state = new_hand(KALARO, b"view", dealer=0)
    state = _time_out(_time_out(state, 0), 1)
    state = _time_out(_time_out(_time_out(state, 2), 0), 1)
    assert state.away == (True, True, False)
    for seat in (0, 1, 2, None):
        v = view(state, seat)
        assert v.away == (True, True, False)
        assert v.clock == Clock(kind="turn", seats=(2,), seconds=30)
        # the new fields add no concealed card
        encoded = msgspec.json.encode(v).decode()
        hidden = [c for s in range(3) if s != seat for c in state.hands[s]] + list(state.stock)
        assert not any(f'"{c}"' in encoded for c in hidden)
    fight = view(_call(away=(False, True, True), timeouts=(0, 2, 2)), None)
    assert fight.clock == Clock(kind="fight_or_fold", seats=(1, 2), seconds=0)
    assert fight.away == (False, True, True)
