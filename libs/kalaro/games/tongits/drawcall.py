"""Calling Draw: who may call it, the opponents' Fight or Fold, and the showdown.

At the start of a turn, before drawing, an opened player may call Draw; each opened
opponent answers Fight or Fold (a burned one is not asked; a time-out folds). When
every answer is in, the lowest deadwood among the caller and the fighters wins.
"""

from __future__ import annotations

from msgspec.structs import replace

from kalaro.games.base import IllegalAction
from kalaro.games.tongits.actions import Fight, Fold, TimeOut
from kalaro.games.tongits.events import DrawCalled, Event, Folded, Fought
from kalaro.games.tongits.scoring import SEATS, after, all_deadwood, draw_winner
from kalaro.games.tongits.state import Answer, DrawCall, State
from kalaro.games.tongits.steps import Step, end_hand, set_answer


def call_draw_refusal(state: State, seat: int) -> IllegalAction | None:
    """Why ``seat`` may not call Draw now, or ``None`` if it may."""
    if state.phase == "over":
        return IllegalAction("hand_over", "the hand is over")
    if state.phase == "answers":
        return IllegalAction("awaiting_answers", "a Draw call is waiting for answers")
    if seat != state.turn:
        return IllegalAction("not_your_turn", f"it is seat {state.turn}'s turn")
    if state.phase != "start":
        return IllegalAction(
            "cannot_call_draw", "Draw may only be called at the start of your turn, before drawing"
        )
    if not state.opened(seat):
        return IllegalAction("cannot_call_draw", "you need an exposed meld to call Draw")
    if state.options.sapaw_blocks_call and state.sapawed[seat]:
        return IllegalAction(
            "sapaw_blocks_call",
            "Draw is blocked: someone laid off on your melds since your previous turn, "
            "or you laid off on your own meld in your previous turn",
        )
    return None


def call_draw(state: State, seat: int) -> Step:
    refusal = call_draw_refusal(state, seat)
    if refusal is not None:
        raise refusal
    answers: list[Answer] = ["burned", "burned", "burned"]
    for s in SEATS:
        if s == seat:
            answers[s] = "caller"
        elif state.opened(s):
            answers[s] = "pending"
    asked = tuple(s for s in after(seat) if answers[s] == "pending")
    new = replace(state, phase="answers", draw_call=DrawCall(caller=seat, answers=tuple(answers)))
    events: list[Event] = [DrawCalled(seat=seat, asked=asked)]
    if not asked:
        return settle_draw(new, events)
    return new, events


def answer_call(state: State, seat: int, action: Fight | Fold | TimeOut) -> Step:
    call = state.draw_call
    if state.phase != "answers" or call is None:
        raise IllegalAction("no_draw_call", "no Draw call is waiting for answers")
    answer = call.answers[seat]
    if answer == "caller":
        raise IllegalAction("not_asked", "the caller does not answer their own Draw call")
    if answer == "burned":
        if isinstance(action, Fight):
            raise IllegalAction("burned_cannot_fight", "a burned player cannot fight")
        raise IllegalAction("not_asked", "a burned player is not asked to answer")
    if answer != "pending":
        raise IllegalAction("already_answered", "you have already answered this Draw call")
    event: Event
    if isinstance(action, Fight):
        answers = set_answer(call.answers, seat, "fight")
        timed_out = call.timed_out
        event = Fought(seat=seat)
    else:
        answers = set_answer(call.answers, seat, "fold")
        late = isinstance(action, TimeOut)
        timed_out = tuple(late if s == seat else t for s, t in enumerate(call.timed_out))
        event = Folded(seat=seat, timed_out=late)
    new = replace(state, draw_call=replace(call, answers=answers, timed_out=timed_out))
    if "pending" in answers:
        return new, [event]
    return settle_draw(new, [event])


def settle_draw(state: State, events: list[Event]) -> Step:
    assert state.draw_call is not None
    points = all_deadwood(state)
    winner = draw_winner(state, state.draw_call, points)
    return end_hand(state, "draw", (winner,), events, points=points)
