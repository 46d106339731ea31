"""Tongits (3 players), the pure rules engine for the ``kalaro`` and ``classic`` rulesets.

The engine worker runs it, bots think with it, and a replay re-derives a hand with it::

    options = options_for("kalaro")
    state = new_hand(options, seed)
    state, events = apply(state, seat, Discard("KH"))
    view(state, seat)           # what that seat may see, with its legal actions
    result(state)               # None until the hand is over

Everything here is pure: no I/O, no clock, no global random. Chance is the seed and a
time-out is an action (``TimeOut``, applied by the worker when ``pending_timer`` runs
out: it folds a Fight/Fold answer, and auto-plays a turn: draw, then the discard that
leaves the least deadwood; see :mod:`~kalaro.games.tongits.engine`). Seats that time out
too often in a row are marked away (``away_seats``) until they act again or send
``Back``. States, actions, events, views and
results are frozen msgspec Structs (JSON and msgpack). The rules, for players, are in
``docs/rules/tongits.md``.
"""

from kalaro.games.base import IllegalAction
from kalaro.games.clock import Clock
from kalaro.games.contract import Board, SeatBoard, Secrets
from kalaro.games.tongits.actions import (
    ACTION_JSON_DECODER,
    ACTION_MSGPACK_DECODER,
    Action,
    AnyAction,
    Back,
    CallDraw,
    Discard,
    Draw,
    ExposeSecretSet,
    Fight,
    Fold,
    LayOff,
    Meld,
    TakeDiscard,
    TimeOut,
    decode_action,
)
from kalaro.games.tongits.deal import away_seats, is_over, new_hand, pending_timer, result, to_act
from kalaro.games.tongits.drawcall import call_draw_refusal
from kalaro.games.tongits.engine import apply, legal_actions
from kalaro.games.tongits.events import (
    EVENT_JSON_DECODER,
    AnyEvent,
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
    DiscardTaken,
    DrawCalled,
    Event,
    Folded,
    Fought,
    HandEnded,
    MeldExposed,
    Returned,
    SecretSetExposed,
    TimedOut,
    event_for,
)
from kalaro.games.tongits.melds import best_deadwood, meld_kind
from kalaro.games.tongits.options import RULESETS, Options, max_loss_units, options_for
from kalaro.games.tongits.scoring import deadwood
from kalaro.games.tongits.state import DrawCall, Result, State, TableMeld, Timer
from kalaro.games.tongits.views import DrawCallView, MeldView, View, view

# The game's facts, for the registry (kalaro.games.contract.GameModule).
NAME = "tongits"
SEATS = 3


def dealt(state: State) -> tuple[tuple[str, ...], ...]:
    """Each seat's dealt cards, read from a fresh hand's state (for the verifier)."""
    return tuple(tuple(hand) for hand in state.hands)


def secrets(state: State) -> Secrets:
    """Concealed cards per seat (hand and face-down secret sets), the stock, face up."""
    seats = tuple(
        frozenset(hand) | {c for m in state.melds if m.face_down and m.owner == s for c in m.cards}
        for s, hand in enumerate(state.hands)
    )
    up = frozenset(state.discards) | {c for m in state.melds if not m.face_down for c in m.cards}
    return Secrets(seats, frozenset(state.stock), up)


def board(view: View) -> Board:
    """The table as ``view`` shows it: one shared discard pile, melds by owner."""
    seats = tuple(
        SeatBoard(hand_size=size, melds=tuple(m.cards for m in view.melds if m.owner == s))
        for s, size in enumerate(view.hand_sizes)
    )
    return Board(
        turn=view.turn, stock=view.stock_count, hand=view.hand, seats=seats, pile=view.discards
    )


def winners(result: Result) -> tuple[int, ...]:
    """The seats that won a finished hand (Tongits lists its (possibly tied) winners)."""
    return tuple(result.winners)


__all__ = [
    "ACTION_JSON_DECODER",
    "ACTION_MSGPACK_DECODER",
    "EVENT_JSON_DECODER",
    "NAME",
    "RULESETS",
    "SEATS",
    "Action",
    "AnyAction",
    "AnyEvent",
    "Back",
    "CallDraw",
    "CardDiscarded",
    "CardDrawn",
    "CardsLaidOff",
    "Clock",
    "Discard",
    "DiscardTaken",
    "Draw",
    "DrawCall",
    "DrawCallView",
    "DrawCalled",
    "Event",
    "ExposeSecretSet",
    "Fight",
    "Fold",
    "Folded",
    "Fought",
    "HandEnded",
    "IllegalAction",
    "LayOff",
    "Meld",
    "MeldExposed",
    "MeldView",
    "Options",
    "Result",
    "Returned",
    "SecretSetExposed",
    "State",
    "TableMeld",
    "TakeDiscard",
    "TimeOut",
    "TimedOut",
    "Timer",
    "View",
    "apply",
    "away_seats",
    "best_deadwood",
    "board",
    "call_draw_refusal",
    "deadwood",
    "dealt",
    "decode_action",
    "event_for",
    "is_over",
    "legal_actions",
    "max_loss_units",
    "meld_kind",
    "new_hand",
    "options_for",
    "pending_timer",
    "result",
    "secrets",
    "to_act",
    "view",
    "winners",
]
