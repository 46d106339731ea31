"""Hand history: my finished (or voided) hands, one hand's record, and its replay from
my seat.

The history service keeps every finished or voided hand's record in SQL; the engines'
Redis copies cover a finished hand history has not stored yet (see ``hand_source``; a
voided hand is only in history), and the list merges both. Only the players of a hand
may read it here. The replay re-applies the record's actions through the game's pure rules
and shows each step as the asking seat saw it during play (``view`` and ``event_for``
hide the other seats' concealed cards); every hand is revealed only by the result.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, get
from litestar.di import Provide
from litestar.params import FromPath, FromQuery, Parameter

from kalaro.bus import RemoteError
from kalaro.games.registry import GameRules, SeatBoard
from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from kalaro.proto.engine import HandRecord, HandSummary
from kalaro.replay import replay as replay_hand
from kalaro.replay import rules_of
from kalaro.tokens import AccessClaims
from services.gateway import access
from services.gateway.hand_source import find_record, player_hands
from services.gateway.routes import Claims, _nc, provide_claims

NO_HAND_OF_YOURS = "no such finished hand of yours"
#: A page of "My hands" holds at most this many (the engines' own bound is higher).
MAX_PAGE = 50

#: An enum, not a pattern: a pattern's ``$`` let "tongits\\n" through (into a subject).
Game = FromPath[lb.Game]
HandId = Annotated[str, Parameter(min_length=1, max_length=64)]
PageLimit = Annotated[int, Parameter(ge=1, le=MAX_PAGE)]
BeforeMs = Annotated[int | None, Parameter(ge=0, le=2**53)]
SinceMs = Annotated[
    int | None,
    Parameter(ge=0, le=2**53, description="Only hands finished at or after this (epoch ms)."),
]
UntilMs = Annotated[
    int | None,
    Parameter(ge=0, le=2**53, description="Only hands finished before this (epoch ms)."),
]


class HandsPage(msgspec.Struct, frozen=True, kw_only=True):
    """My finished hands, newest first; ``next_before`` pages on (null: no more)."""

    hands: tuple[HandSummary, ...]
    next_before: int | None = None


class ReplayPlayer(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str
    display_name: str
    is_bot: bool


class ReplayStep(msgspec.Struct, frozen=True, kw_only=True):
    """The table after one action, as the replay's seat saw it.

    ``actor`` is the seat that acted (null for the deal); ``events`` what the seat was
    told; ``hand`` its own concealed cards or tiles; ``seats`` every seat's public
    part (hand size, melds, discards, flowers); ``pile`` Tongits' shared discards."""

    actor: int | None
    events: tuple[Any, ...]
    turn: int
    stock: int
    hand: tuple[str, ...]
    seats: tuple[SeatBoard, ...]
    pile: tuple[str, ...] = ()


class Replay(msgspec.Struct, frozen=True, kw_only=True):
    """A finished hand step by step from ``seat``, then its result with every hand. A
    voided hand (cancelled mid-play) has its steps up to the cancel, ``result`` null and
    nobody paid."""

    hand_id: str
    table_id: str
    game: str
    seat: int
    bet: int
    dealer: int
    players: tuple[ReplayPlayer, ...]
    steps: tuple[ReplayStep, ...]
    result: Any
    payments: tuple[int, ...]
    seed_commitment: str
    server_seed: str
    entropy: tuple[str, ...]
    voided: bool = False


async def _my_record(
    request: Request,  # type: ignore[type-arg]
    claims: AccessClaims,
    game: str,
    hand_id: str,
) -> tuple[HandRecord, int]:
    """The record and my seat in it; anyone who did not play the hand gets a 404."""
    record = await find_record(_nc(request), game, hand_id)
    # Every engine reads the one store of records: another game's hand is not this one's.
    if record is not None and record.game != game:
        record = None
    seats = (
        [i for i, p in enumerate(record.players) if p.user_id == claims.user_id] if record else []
    )
    if record is None or not seats:
        # One answer, word for word, whether the hand is missing or just not theirs.
        raise RemoteError(codes.NOT_FOUND, NO_HAND_OF_YOURS)
    return record, seats[0]


def _step(rules: GameRules, view: Any, actor: int | None, events: list[Any]) -> ReplayStep:
    board = rules.board(view)  # the same shape for every game
    return ReplayStep(
        actor=actor, events=tuple(events), turn=board.turn, stock=board.stock,
        hand=board.hand, seats=board.seats, pile=board.pile,
    )  # fmt: skip


def replay(record: HandRecord, seat: int) -> Replay:
    """Re-apply the record's actions and keep what ``seat`` saw after each one."""
    rules, _ = rules_of(record)
    steps: list[ReplayStep] = []
    dealer = 0
    for step in replay_hand(record):
        if step.actor is None:
            dealer = step.state.dealer  # the record's is None when the seed chose it
        seen = [e for e in (rules.event_for(e, seat) for e in step.events) if e is not None]
        # The end's event carries the whole result (every hand): that is ``result``, shown
        # after the last step, so the step only says that the hand ended.
        shown = [
            {"type": "hand_ended"} if b.get("type") == "hand_ended" else b
            for b in (msgspec.to_builtins(e) for e in seen)
        ]
        steps.append(_step(rules, rules.view(step.state, seat), step.actor, shown))
    return Replay(
        hand_id=record.hand_id,
        table_id=record.table_id,
        game=record.game,
        seat=seat,
        bet=record.bet,
        dealer=dealer,
        players=tuple(
            ReplayPlayer(user_id=p.user_id, display_name=p.display_name, is_bot=p.is_bot)
            for p in record.players
        ),
        steps=tuple(steps),
        result=record.result,
        payments=record.payments,
        seed_commitment=record.seed_commitment,
        server_seed=record.server_seed,
        entropy=record.entropy,
        voided=record.voided,
    )


class HandsController(Controller):
    """The caller's own finished hands: list, record, replay."""

    path = "/api/hands"
    tags = ["hands"]
    guards = [access.SIGNED_IN]
    dependencies = {"claims": Provide(provide_claims)}

    @get("/", summary="My finished hands, newest first")
    async def my_hands(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        limit: PageLimit = 20,
        before: BeforeMs = None,
        game: FromQuery[lb.Game | None] = None,
        since: SinceMs = None,
        until: UntilMs = None,
    ) -> HandsPage:
        """Every game's hands (or ``game``'s) merged by when they finished; ``before`` is
        the previous page's ``next_before`` (a time in ms); ``since`` (inclusive) and
        ``until`` (exclusive), epoch ms, bound when they finished."""
        if until is not None:
            before = until if before is None else min(before, until)
        hands = await player_hands(
            _nc(request), claims.user_id, game=game, before_ms=before, limit=limit, since_ms=since
        )
        more = len(hands) == limit
        return HandsPage(hands=tuple(hands), next_before=hands[-1].finished_ms if more else None)

    @get("/{game:str}/{hand_id:str}", summary="One of my hands' record (for kalaro verify)")
    async def my_record(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        game: Game,
        hand_id: HandId,
    ) -> HandRecord:
        record, _ = await _my_record(request, claims, game, hand_id)
        return record

    @get("/{game:str}/{hand_id:str}/replay", summary="One of my hands, step by step")
    async def my_replay(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        game: Game,
        hand_id: HandId,
    ) -> Replay:
        """From my seat: my own cards and what everyone saw; all hands in ``result``."""
        record, seat = await _my_record(request, claims, game, hand_id)
        try:
            return await asyncio.to_thread(replay, record, seat)
        except Exception as exc:  # a record the rules refuse is not the caller's fault
            raise RemoteError(codes.INTERNAL, f"hand {hand_id} cannot be replayed: {exc}") from None
