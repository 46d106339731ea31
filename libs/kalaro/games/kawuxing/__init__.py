"""Ka Wu Xing, the fast three-player Mahjong, as a pure rules library (ruleset ``kawuxing``).

The contract every engine shares (:class:`kalaro.games.contract.GameModule`):
``new_hand(options, seed, dealer)``,
``legal_actions(state, seat)``, ``apply(state, seat, action) -> (state, events)``,
``view(state, seat | None)``, ``result(state)``, plus ``to_act`` and ``pending_timer``
for the worker. No I/O, no clock, no global random: a hand replays from
(options, seed, dealer, actions). The rules for players are in ``docs/rules/kawuxing.md``.

Modules: ``options`` (the ruleset and house rules), ``state`` (one hand), ``actions``
and ``events`` (the message unions), ``hands`` (the 84 tiles, winning patterns, waits),
``items`` (the score items of a win), ``deal`` (the deal, tile and hand-size checks),
``offers`` (who may win on a tile, claim it, declare a kong, show), ``engine`` (the
moves), ``table`` (its facts for the shared tile flow), ``scoring`` (payments, kong
scores, host rotation, the most one player can lose), ``views`` (what each seat may
see).
"""

from kalaro.games.base import IllegalAction
from kalaro.games.clock import Clock
from kalaro.games.contract import Secrets
from kalaro.games.kawuxing.actions import (
    ACTION_JSON_DECODER,
    ACTION_MSGPACK_DECODER,
    CLAIM_PRIORITY,
    Action,
    AnyAction,
    Back,
    Claim,
    ClaimKind,
    DeclareKong,
    DeclareWin,
    Discard,
    Draw,
    Pass,
    ShowHand,
    TimeOut,
    decode_action,
)
from kalaro.games.kawuxing.deal import hand_size_ok, new_hand, tiles_in_play
from kalaro.games.kawuxing.engine import apply, legal_actions
from kalaro.games.kawuxing.events import (
    EVENT_JSON_DECODER,
    AnyEvent,
    CallAnswered,
    CallsPassed,
    CallWindowOpened,
    ClaimsOffered,
    Event,
    HandShown,
    HandWon,
    KongDeclared,
    KongOffered,
    Returned,
    TileClaimed,
    TileDiscarded,
    TileDrawn,
    TimedOut,
    WallExhausted,
    event_for,
)
from kalaro.games.kawuxing.hands import (
    HAND_SIZE,
    KINDS,
    TILES_84,
    WINNING_SETS,
    is_seven_pairs,
    is_winning,
    waits,
)
from kalaro.games.kawuxing.items import ITEM_MULTIPLIERS, ItemName, Score, ScoreItem, score_win
from kalaro.games.kawuxing.offers import can_win_on
from kalaro.games.kawuxing.options import RULESETS, Options, options_for
from kalaro.games.kawuxing.scoring import (
    KONG_UNITS,
    Charge,
    Result,
    RevealedHand,
    Win,
    max_loss_units,
    max_multiplier,
    next_dealer,
    result,
    rules_max_loss_units,
)
from kalaro.games.kawuxing.state import SEATS, CallWindow, Meld, Outcome, Player, State, Timer
from kalaro.games.kawuxing.views import CallView, MeldView, PlayerView, View, Wait, view
from kalaro.games.tilegame.flow import away_seats, is_over, pending_timer, to_act
from kalaro.games.tilegame.views import board

# The game's facts, for the registry (kalaro.games.contract.GameModule).
NAME = "kawuxing"


def dealt(state: State) -> tuple[tuple[str, ...], ...]:
    """Each seat's dealt tiles, read from a fresh hand's state (for the verifier)."""
    return tuple(tuple(p.hand) for p in state.players)


def secrets(state: State) -> Secrets:
    """Concealed tiles per seat, the wall, and the tiles in sight (kinds, not copies)."""
    up = {t for p in state.players for t in p.discards}
    up |= {t for p in state.players for m in p.melds for t in m.tiles}
    for p in state.players:
        if p.shown:  # Show Hand: the hand and its waits are public
            up |= {*p.hand, *waits(p.hand, p.melds)}
    if state.call is not None:
        up.add(state.call.tile)
    seats = tuple(frozenset(p.hand) for p in state.players)
    known = tuple(frozenset(waits(p.hand, p.melds)) for p in state.players)
    return Secrets(seats, frozenset(state.wall), frozenset(up), known)


def winners(result: Result) -> tuple[int, ...]:
    """The seats that won a finished hand (all of them: one discard may pay several)."""
    return tuple(result.winners)


__all__ = [
    "ACTION_JSON_DECODER",
    "ACTION_MSGPACK_DECODER",
    "CLAIM_PRIORITY",
    "EVENT_JSON_DECODER",
    "HAND_SIZE",
    "ITEM_MULTIPLIERS",
    "KINDS",
    "KONG_UNITS",
    "NAME",
    "RULESETS",
    "SEATS",
    "TILES_84",
    "WINNING_SETS",
    "Action",
    "AnyAction",
    "AnyEvent",
    "Back",
    "CallAnswered",
    "CallView",
    "CallWindow",
    "CallWindowOpened",
    "CallsPassed",
    "Charge",
    "Claim",
    "ClaimKind",
    "ClaimsOffered",
    "Clock",
    "DeclareKong",
    "DeclareWin",
    "Discard",
    "Draw",
    "Event",
    "HandShown",
    "HandWon",
    "IllegalAction",
    "ItemName",
    "KongDeclared",
    "KongOffered",
    "Meld",
    "MeldView",
    "Options",
    "Outcome",
    "Pass",
    "Player",
    "PlayerView",
    "Result",
    "Returned",
    "RevealedHand",
    "Score",
    "ScoreItem",
    "ShowHand",
    "State",
    "TileClaimed",
    "TileDiscarded",
    "TileDrawn",
    "TimeOut",
    "TimedOut",
    "Timer",
    "View",
    "Wait",
    "WallExhausted",
    "Win",
    "apply",
    "away_seats",
    "board",
    "can_win_on",
    "dealt",
    "decode_action",
    "event_for",
    "hand_size_ok",
    "is_over",
    "is_seven_pairs",
    "is_winning",
    "legal_actions",
    "max_loss_units",
    "max_multiplier",
    "new_hand",
    "next_dealer",
    "options_for",
    "pending_timer",
    "result",
    "rules_max_loss_units",
    "score_win",
    "secrets",
    "tiles_in_play",
    "to_act",
    "view",
    "waits",
    "winners",
]
