"""Filipino 16-tile Mahjong as a pure rules library (rulesets ``kalaro``, ``joker``, ``pinoy``).

The contract every engine shares (:class:`kalaro.games.contract.GameModule`):
``new_hand(options, seed, dealer)``,
``legal_actions(state, seat)``, ``apply(state, seat, action) -> (state, events)``,
``view(state, seat | None)``, ``result(state)``, plus ``to_act`` and ``pending_timer``
for the worker. No I/O, no clock, no global random: a hand replays from
(options, seed, dealer, actions). The rules for players are in ``docs/rules/mahjong.md``.

Modules: ``options`` (rulesets, house rules, the points table), ``state`` (one hand),
``actions`` and ``events`` (the message unions), ``engine`` (the moves), ``draws`` (the
deal, the wall, flowers), ``wins`` (who may win, claim offers, the win), ``table`` (its
facts for the shared tile flow), ``hands`` (winning patterns with jokers, win
categories, special hands), ``scoring`` (payments and dealer rotation), ``views`` (what
each seat may see).
"""

from kalaro.games.base import IllegalAction
from kalaro.games.clock import Clock
from kalaro.games.contract import Secrets
from kalaro.games.mahjong.actions import (
    ACTION_JSON_DECODER,
    ACTION_MSGPACK_DECODER,
    CLAIM_PRIORITY,
    Action,
    AnyAction,
    Back,
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
from kalaro.games.mahjong.draws import HAND_SIZE, new_hand, tiles_in_play
from kalaro.games.mahjong.engine import apply, legal_actions
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
    Returned,
    TileClaimed,
    TileDiscarded,
    TileDrawn,
    TimedOut,
    WallExhausted,
    event_for,
)
from kalaro.games.mahjong.hands import WINNING_SETS, Pattern
from kalaro.games.mahjong.options import (
    CATEGORIES,
    DEFAULT_POINTS,
    POINT_NAMES,
    RULESETS,
    SPECIAL_HANDS,
    Options,
    Points,
    max_loss_units,
    options_for,
)
from kalaro.games.mahjong.scoring import Charge, Item, Result, RevealedHand, next_dealer, result
from kalaro.games.mahjong.state import SEATS, CallWindow, Meld, Outcome, Player, State, Timer
from kalaro.games.mahjong.views import WIN_BLOCKED_REASONS, CallView, PlayerView, View, view
from kalaro.games.tilegame.flow import away_seats, is_over, pending_timer, to_act
from kalaro.games.tilegame.views import board

# The game's facts, for the registry (kalaro.games.contract.GameModule).
NAME = "mahjong"


def dealt(state: State) -> tuple[tuple[str, ...], ...]:
    """Each seat's deal after its flower replacements: concealed tiles plus flowers."""
    return tuple(tuple(p.hand) + tuple(p.flowers) for p in state.players)


def secrets(state: State) -> Secrets:
    """Concealed tiles per seat, the wall, and the tiles in sight (kinds, not copies)."""
    up = {t for p in state.players for t in (*p.discards, *p.flowers)}
    up |= {t for p in state.players for m in p.melds for t in m.tiles}
    if state.call is not None:
        up.add(state.call.tile)
    if state.indicator is not None:  # the revealed joker indicator
        up.add(state.indicator)
    seats = tuple(frozenset(p.hand) for p in state.players)
    return Secrets(seats, frozenset(state.wall), frozenset(up))


def winners(result: Result) -> tuple[int, ...]:
    """The seats that won a finished hand (Mahjong has at most one)."""
    return () if result.winner is None else (result.winner,)


__all__ = [
    "ACTION_JSON_DECODER",
    "ACTION_MSGPACK_DECODER",
    "CATEGORIES",
    "CLAIM_PRIORITY",
    "DEFAULT_POINTS",
    "EVENT_JSON_DECODER",
    "HAND_SIZE",
    "NAME",
    "POINT_NAMES",
    "RULESETS",
    "SEATS",
    "SPECIAL_HANDS",
    "WINNING_SETS",
    "WIN_BLOCKED_REASONS",
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
    "Pattern",
    "Player",
    "PlayerView",
    "Points",
    "Result",
    "Returned",
    "RevealedHand",
    "State",
    "TileClaimed",
    "TileDiscarded",
    "TileDrawn",
    "TimeOut",
    "TimedOut",
    "Timer",
    "View",
    "WallExhausted",
    "apply",
    "away_seats",
    "board",
    "dealt",
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
    "secrets",
    "tiles_in_play",
    "to_act",
    "view",
    "winners",
]
