"""The reconciler: nothing stays held.

A hand's holds are released by its outcome, which the engine sends on the RESULTS
stream. Should that outcome never arrive (a stream that lost it with a node's disk, an
engine that was down when a table was cancelled), the holds would stay for ever and the
audit would still balance. So every wallet replica, now and then, looks at each hand
that has been open for a while and asks its engine what became of it:

- ``finished``: settle it with the payments from the engine's hand record;
- ``cancelled``: void it;
- ``playing``: leave it (a long hand is not a lost one);
- ``unknown`` (the engine has no trace of it: never started, or long expired), once the
  hold is older than ``release_after``: release it with a void that says why;
- no engine answered: leave it for the next pass (it cannot be known now).

Settling and voiding are the ledger's keyed operations, so a reconciler racing the
stream's own delivery, or another replica's reconciler, changes nothing twice. Which of
these to do is :func:`decide`, a pure function; the rest is SQL and one NATS request.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal, assert_never

from nats.aio.client import Client as NATS
from prometheus_client import Gauge
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import RemoteError, ServiceError, request
from kalaro.games.registry import game_names
from kalaro.proto import endpoints
from kalaro.proto.engine import GetHandOutcome, HandOutcomeReport
from kalaro.proto.wallet import Payment
from services.wallet import ledger
from services.wallet.schema import holds, settlements

log = logging.getLogger("kalaro.wallet.reconciler")

OLDEST_HOLD = Gauge(
    "kalaro_wallet_oldest_hold_seconds",
    "Age of the oldest credits still held for a hand (0 when none): a hand nobody settles",
)

#: A hand open this long is looked at (its outcome normally lands within a second).
SETTLE_AFTER_SECONDS = 60.0
#: A hold whose hand the engine has no trace of is released after this long.
RELEASE_AFTER_SECONDS = 600.0
#: How many open hands one pass looks at (oldest first).
BATCH = 100

Step = Literal["settle", "void", "release", "wait"]


@dataclass(frozen=True)
class OpenHand:
    hand_id: str
    table_id: str
    game: str  # '' for holds placed before the wallet recorded games
    placed_at: datetime


@dataclass(frozen=True)
class Pass:
    """What one reconciler pass did."""

    looked_at: int = 0
    settled: int = 0
    voided: int = 0
    released: int = 0
    waiting: int = 0


def decide(
    hand: OpenHand, report: HandOutcomeReport | None, now: datetime, release_after: float
) -> Step:
    """What to do with an open hand, given what its engine said (None: nobody answered)."""
    if report is None:
        return "wait"
    match report.status:
        case "finished":
            return "settle"
        case "cancelled":
            return "void"
        case "playing":
            return "wait"
        case "unknown":
            old = (now - hand.placed_at).total_seconds() >= release_after
            return "release" if old else "wait"
        case _:
            assert_never(report.status)


def payments_of(report: HandOutcomeReport) -> tuple[Payment, ...]:
    return tuple(
        Payment(user_id=user_id, amount=credits)
        for user_id, credits in zip(report.players, report.payments, strict=True)
    )


async def open_hands(engine: AsyncEngine, placed_before: datetime, limit: int) -> list[OpenHand]:
    """Hands with holds and no outcome, placed before ``placed_before``, oldest first."""
    query = (
        select(
            settlements.c.hand_id,
            settlements.c.table_id,
            settlements.c.game,
            settlements.c.created_at,
        )
        .where(
            settlements.c.status == "open",
            settlements.c.created_at < placed_before.isoformat(timespec="microseconds"),
        )
        .order_by(settlements.c.created_at)
        .limit(limit)
    )
    async with engine.connect() as conn:
        rows = (await conn.execute(query)).all()
    return [
        OpenHand(r.hand_id, r.table_id, r.game, datetime.fromisoformat(r.created_at)) for r in rows
    ]


async def oldest_hold_age(engine: AsyncEngine, now: datetime) -> float:
    """Seconds since the oldest hold still held was placed (0 when none is)."""
    async with engine.connect() as conn:
        oldest = await conn.scalar(
            select(func.min(holds.c.created_at)).where(holds.c.status == "held")
        )
    return (
        0.0 if oldest is None else max(0.0, (now - datetime.fromisoformat(oldest)).total_seconds())
    )


class Reconciler:
    """One wallet replica's reconciler; :meth:`run_once` is a pass (tests call it)."""

    def __init__(
        self,
        engine: AsyncEngine,
        nc: NATS,
        *,
        settle_after: float = SETTLE_AFTER_SECONDS,
        release_after: float = RELEASE_AFTER_SECONDS,
        clock: Callable[[], float] = time.time,
        games: Sequence[str] | None = None,
        timeout: float = 5.0,
    ) -> None:
        self._engine = engine
        self._nc = nc
        self.settle_after = settle_after
        self.release_after = release_after
        self._clock = clock
        self._games = tuple(games) if games is not None else game_names()
        self._timeout = timeout

    async def run_once(self, limit: int = BATCH) -> Pass:
        now = datetime.fromtimestamp(self._clock(), UTC)
        hands = await open_hands(self._engine, now - timedelta(seconds=self.settle_after), limit)
        counts = {"settle": 0, "void": 0, "release": 0, "wait": 0}
        for hand in hands:
            report = await self.ask(hand)
            step = decide(hand, report, now, self.release_after)
            try:
                await self._apply(hand, step, report, now)
            except ServiceError as exc:
                log.error("hand %s: reconciler could not %s it: %s", hand.hand_id, step, exc)
                continue
            counts[step] += 1
        OLDEST_HOLD.set(await oldest_hold_age(self._engine, now))
        return Pass(
            looked_at=len(hands),
            settled=counts["settle"],
            voided=counts["void"],
            released=counts["release"],
            waiting=counts["wait"],
        )

    async def ask(self, hand: OpenHand) -> HandOutcomeReport | None:
        """What the hand's engine says (every game's, for a hand with no game recorded);
        None when the engine that would know did not answer."""
        games = (hand.game,) if hand.game else self._games
        unknown: HandOutcomeReport | None = None
        for game in games:
            try:
                report = await request(
                    self._nc,
                    endpoints.to_owner(endpoints.engine_outcome(game), hand.table_id),
                    GetHandOutcome(table_id=hand.table_id, hand_id=hand.hand_id),
                    timeout=self._timeout,
                )
            except RemoteError as exc:
                log.info("hand %s: engine %s did not answer (%s)", hand.hand_id, game, exc)
                return None  # it may be the one that knows
            if report.status != "unknown":
                return report
            unknown = report
        return unknown

    async def _apply(
        self, hand: OpenHand, step: Step, report: HandOutcomeReport | None, now: datetime
    ) -> None:
        hand_id = hand.hand_id
        match step:
            case "wait":
                return
            case "settle":
                assert report is not None
                log.warning("hand %s: its settlement never arrived; settling it now", hand_id)
                await ledger.settle(self._engine, hand_id, payments_of(report), hand.table_id)
            case "void":
                log.warning("hand %s: its void never arrived; voiding it now", hand_id)
                await ledger.void(self._engine, hand_id, hand.table_id)
            case "release":
                minutes = (now - hand.placed_at).total_seconds() / 60
                why = (
                    f"released by the reconciler: no live hand and no outcome "
                    f"after {minutes:.0f} min"
                )
                log.warning("hand %s: %s", hand_id, why)
                await ledger.void(self._engine, hand_id, hand.table_id, why=why, actor="reconciler")
            case _:
                assert_never(step)
