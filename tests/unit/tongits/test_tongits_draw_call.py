"""Draw calls: who may call, Fight/Fold answers and their time-out, ties, the sapaw lock."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from kalaro.games.base import IllegalAction
from kalaro.games.tongits import (
    Action,
    CallDraw,
    Discard,
    Draw,
    DrawCalled,
    Fight,
    Fold,
    Folded,
    Fought,
    HandEnded,
    LayOff,
    Options,
    Result,
    State,
    TimedOut,
    TimeOut,
    Timer,
    apply,
    call_draw_refusal,
    legal_actions,
    pending_timer,
    to_act,
    view,
)
from tests.unit.tongits.tongits_helpers import CLASSIC, KALARO, meld, table


def _code(state: State, seat: int, action: Action) -> str:
    with pytest.raises(IllegalAction) as err:
        apply(state, seat, action)
    return err.value.code


def _called(
    options: Options = KALARO,
    hands: tuple[str, str, str] = ("2S 3D", "AC 4C", "AD 2D"),
    opened: tuple[bool, bool, bool] = (True, True, True),
) -> State:
    """Seat 0 at the start of its turn; the opened seats each have a meld."""
    texts = [text for text, is_open in zip(_MELDS, opened, strict=True) if is_open]
    owners = [seat for seat, is_open in enumerate(opened) if is_open]
    melds = [
        meld(i, owner, text) for i, (owner, text) in enumerate(zip(owners, texts, strict=True))
    ]
    return table(options, hands=list(hands), melds=melds, turn=0)


_MELDS = ("7S 8S 9S", "JH QH KH", "5D 5C 5H")


def _settle(state: State, answers: dict[int, Action]) -> Result:
    state, _ = apply(state, 0, CallDraw())
    events: list[object] = []
    for seat, answer in answers.items():
        state, events = apply(state, seat, answer)
    assert state.phase == "over"
    assert isinstance(events[-1], HandEnded)
    assert state.result is not None
    return state.result


# -- who may call ------------------------------------------------------------------------


def test_an_opened_player_may_call_at_the_start_of_the_turn() -> None:
    state = _called()
    assert CallDraw() in legal_actions(state, 0)
    assert call_draw_refusal(state, 0) is None


def test_a_player_without_an_exposed_meld_cannot_call() -> None:
    state = _called(opened=(False, True, True))
    assert CallDraw() not in legal_actions(state, 0)
    assert _code(state, 0, CallDraw()) == "cannot_call_draw"


def test_no_call_after_drawing_or_out_of_turn() -> None:
    state = _called()
    drawn, _ = apply(state, 0, Draw())
    assert CallDraw() not in legal_actions(drawn, 0)
    assert _code(drawn, 0, CallDraw()) == "cannot_call_draw"
    assert _code(state, 1, CallDraw()) == "not_your_turn"


# -- answers -----------------------------------------------------------------------------


def test_a_call_asks_the_opened_opponents_within_the_fight_window() -> None:
    state, events = apply(_called(options=KALARO), 0, CallDraw())
    assert events == [DrawCalled(seat=0, asked=(1, 2))]
    assert state.phase == "answers"
    assert to_act(state) == [1, 2]
    assert pending_timer(state) == Timer(kind="fight_or_fold", seats=(1, 2), seconds=20)
    assert legal_actions(state, 1) == [Fight(), Fold()]
    assert legal_actions(state, 0) == []
    public = view(state, None).draw_call
    assert public is not None
    assert (public.caller, public.waiting, public.seconds) == (0, (1, 2), 20)
    # the window is an option
    slow, _ = apply(_called(options=replace(KALARO, fight_seconds=45)), 0, CallDraw())
    assert pending_timer(slow) == Timer(kind="fight_or_fold", seats=(1, 2), seconds=45)


def test_answer_refusals() -> None:
    state, _ = apply(_called(opened=(True, True, False)), 0, CallDraw())
    assert to_act(state) == [1]
    assert _code(state, 0, Fight()) == "not_asked"
    assert _code(state, 2, Fight()) == "burned_cannot_fight"
    assert _code(state, 2, Fold()) == "not_asked"
    assert _code(state, 2, TimeOut()) == "not_asked"
    assert legal_actions(state, 2) == []
    assert _code(state, 1, Draw()) == "awaiting_answers"
    assert _code(state, 0, Discard("2S")) == "awaiting_answers"
    assert _code(_called(), 1, Fight()) == "no_draw_call"
    # outside a Draw call a time-out is the turn clock's: only for the player to act
    assert _code(_called(), 1, TimeOut()) == "not_your_turn"


def test_one_answer_at_a_time_and_no_second_answer() -> None:
    state, _ = apply(_called(), 0, CallDraw())
    state, events = apply(state, 2, Fight())
    assert events == [Fought(seat=2)]
    assert to_act(state) == [1]
    assert pending_timer(state) == Timer(kind="fight_or_fold", seats=(1,), seconds=20)
    assert _code(state, 2, Fold()) == "already_answered"


def test_time_out_counts_as_fold() -> None:
    state, _ = apply(_called(), 0, CallDraw())
    state, _ = apply(state, 1, Fold())
    state, events = apply(state, 2, TimeOut())
    assert events[:2] == [TimedOut(seat=2, away=False), Folded(seat=2, timed_out=True)]
    assert state.result is not None
    assert state.result.winners == (0,)
    assert state.result.draw_call is not None
    assert state.result.draw_call.answers == ("caller", "fold", "fold")
    assert state.result.draw_call.timed_out == (False, False, True)


def test_nobody_to_ask_means_the_caller_wins_at_once() -> None:
    state, events = apply(_called(opened=(True, False, False)), 0, CallDraw())
    assert events[0] == DrawCalled(seat=0, asked=())
    assert isinstance(events[-1], HandEnded)
    assert state.result is not None
    assert state.result.winners == (0,)
    assert pending_timer(state) is None


# -- who wins -----------------------------------------------------------------------------


def test_everyone_folds_the_caller_wins_even_with_more_deadwood() -> None:
    result = _settle(_called(hands=("KS QD", "AC", "AD")), {1: Fold(), 2: Fold()})
    assert result.winners == (0,)
    assert result.ending == "draw"


def test_lowest_deadwood_among_caller_and_fighters_wins() -> None:
    # caller 5, seat 1 fights with 5... seat 2 fights with 3: seat 2 wins
    result = _settle(_called(), {1: Fight(), 2: Fight()})
    assert result.deadwood == (5, 5, 3)
    assert result.winners == (2,)
    # a folder's lower deadwood does not count
    result = _settle(_called(hands=("2S 3D", "AC 4C", "AD")), {1: Fight(), 2: Fold()})
    assert result.winners == (0,)


@pytest.mark.parametrize(("options", "winner"), [(KALARO, 0), (CLASSIC, 1)])
def test_caller_fighter_tie(options: Options, winner: int) -> None:
    result = _settle(_called(options), {1: Fight(), 2: Fold()})
    assert result.deadwood[:2] == (5, 5)
    assert result.winners == (winner,)


@pytest.mark.parametrize("options", [KALARO, CLASSIC])
def test_two_tied_fighters_the_one_next_after_the_caller_wins(options: Options) -> None:
    # seat 1 calls; seats 2 and 0 fight; seat 2 is next after the caller
    state = table(
        options,
        hands=["AC 4C", "KS QD", "2D 3D"],  # the caller has 20, the fighters 5 and 5
        melds=[meld(0, 0, "7S 8S 9S"), meld(1, 1, "JH QH KH"), meld(2, 2, "5D 5C 5H")],
        turn=1,
    )
    state, _ = apply(state, 1, CallDraw())
    assert to_act(state) == [2, 0]
    state, _ = apply(state, 0, Fight())
    state, _ = apply(state, 2, Fight())
    assert state.result is not None
    assert state.result.deadwood == (5, 20, 5)
    assert state.result.winners == (2,)


def test_classic_counts_deadwood_outside_concealed_melds() -> None:
    # seat 1 conceals a run 2C 3C 4C: under classic its deadwood is 1, under kalaro 10
    hands = ("2S 3D", "AH 2C 3C 4C", "AD 2D")
    kalaro = _settle(_called(KALARO, hands=hands), {1: Fight(), 2: Fold()})
    classic = _settle(_called(CLASSIC, hands=hands), {1: Fight(), 2: Fold()})
    assert (kalaro.deadwood[1], kalaro.winners) == (10, (0,))
    assert (classic.deadwood[1], classic.winners) == (1, (1,))


# -- the sapaw lock (classic) --------------------------------------------------------------


def test_sapaw_on_your_melds_blocks_your_next_call_on_classic_tables() -> None:
    state = table(
        CLASSIC,
        hands=["2S 3D 9C", "AC 4C 10S", "AD 2D 10H 6S"],
        melds=[meld(0, 0, "7S 8S 9S"), meld(1, 1, "JH QH KH")],
        turn=2,
        phase="play",
    )
    state, _ = apply(state, 2, LayOff(cards=("6S",), meld_id=0))
    assert state.sapawed == (True, False, False)
    state, _ = apply(state, 2, Discard("10H"))
    assert state.turn == 0
    assert CallDraw() not in legal_actions(state, 0)
    assert _code(state, 0, CallDraw()) == "sapaw_blocks_call"
    assert view(state, 1).call_blocked == (True, False, False)
    # the lock lasts that one turn
    state, _ = apply(state, 0, Draw())
    state, _ = apply(state, 0, Discard("9C"))
    assert state.sapawed == (False, False, False)
    state, _ = apply(state, 1, Draw())
    state, _ = apply(state, 1, Discard("10S"))
    state, _ = apply(state, 2, Draw())
    state, _ = apply(state, 2, Discard(state.hands[2][0]))
    assert CallDraw() in legal_actions(state, 0)


def test_sapaw_on_your_own_meld_blocks_your_next_call_on_classic_tables() -> None:
    state = table(
        CLASSIC,
        hands=["2S 3D 6S KC", "AC 4C 10S", "AD 2D 10H"],
        melds=[meld(0, 0, "7S 8S 9S"), meld(1, 1, "JH QH KH")],
        turn=0,
        phase="play",
    )
    state, _ = apply(state, 0, LayOff(cards=("6S",), meld_id=0))
    assert state.own_sapaw
    state, _ = apply(state, 0, Discard("KC"))
    assert state.sapawed == (True, False, False)
    for seat in (1, 2):
        state, _ = apply(state, seat, Draw())
        state, _ = apply(state, seat, Discard(state.hands[seat][0]))
    assert _code(state, 0, CallDraw()) == "sapaw_blocks_call"


def test_no_sapaw_lock_on_kalaro_tables() -> None:
    state = _called(KALARO)
    locked = replace(state, sapawed=(True, False, False))
    assert CallDraw() in legal_actions(locked, 0)
    assert view(locked, 0).call_blocked == (False, False, False)
