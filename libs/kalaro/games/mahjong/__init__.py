"""Filipino 16-tile Mahjong as a pure rules library (ruleset ``kalaro``).

The contract every engine shares: ``new_hand(options, seed, dealer)``,
``legal_actions(state, seat)``, ``apply(state, seat, action) -> (state, events)``,
``view(state, seat | None)``, ``result(state)``, plus ``to_act`` and ``pending_timer``
for the worker. No I/O, no clock, no global random: a hand replays from
(options, seed, dealer, actions). The rules for players are in ``docs/rules/mahjong.md``.

Modules: ``options`` (rulesets and house rules), ``state`` (one hand), ``actions`` and
``events`` (the message unions), ``engine`` (the table flow), ``scoring`` (payments and
dealer rotation), ``views`` (what each seat may see).
"""

from kalaro.games.base import IllegalAction
from kalaro.games.mahjong.actions import (
    ACTION_JSON_DECODER,
    ACTION_MSGPACK_DECODER,
    CLAIM_PRIORITY,
    Action,
    AnyAction,
    Claim,
    ClaimKind,
    DeclareKang,
    DeclareWin,
    Discard,
    Draw,
    Pass,
    TimeOut,
    decode_action,
)
from kalaro.games.mahjong.engine import (
    HAND_SIZE,
    WINNING_SETS,
    apply,
    is_over,
    legal_actions,
    new_hand,
    pending_timer,
    tiles_in_play,
    to_act,
)
from kalaro.games.mahjong.events import (
    EVENT_JSON_DECODER,
    AnyEvent,
    CallAnswered,
    CallsPassed,
    CallWindowOpened,
    ClaimsOffered,
    Event,
    FlowerReplaced,
    HandWon,
    KangDeclared,
    TileClaimed,
    TileDiscarded,
    TileDrawn,
    WallExhausted,
    event_for,
)
from kalaro.games.mahjong.options import RULESETS, Options, max_loss_units, options_for
from kalaro.games.mahjong.scoring import Charge, Item, Result, RevealedHand, next_dealer, result
from kalaro.games.mahjong.state import SEATS, CallWindow, Meld, Outcome, Player, State, Timer
from kalaro.games.mahjong.views import CallView, PlayerView, View, view

__all__ = [
    "ACTION_JSON_DECODER",
    "ACTION_MSGPACK_DECODER",
    "CLAIM_PRIORITY",
    "EVENT_JSON_DECODER",
    "HAND_SIZE",
    "RULESETS",
    "SEATS",
    "WINNING_SETS",
    "Action",
    "AnyAction",
    "AnyEvent",
    "CallAnswered",
    "CallView",
    "CallWindow",
    "CallWindowOpened",
    "CallsPassed",
    "Charge",
    "Claim",
    "ClaimKind",
    "ClaimsOffered",
    "DeclareKang",
    "DeclareWin",
    "Discard",
    "Draw",
    "Event",
    "FlowerReplaced",
    "HandWon",
    "IllegalAction",
    "Item",
    "KangDeclared",
    "Meld",
    "Options",
    "Outcome",
    "Pass",
    "Player",
    "PlayerView",
    "Result",
    "RevealedHand",
    "State",
    "TileClaimed",
    "TileDiscarded",
    "TileDrawn",
    "TimeOut",
    "Timer",
    "View",
    "WallExhausted",
    "apply",
    "decode_action",
    "event_for",
    "is_over",
    "legal_actions",
    "max_loss_units",
    "new_hand",
    "next_dealer",
    "options_for",
    "pending_timer",
    "result",
    "tiles_in_play",
    "to_act",
    "view",
]
