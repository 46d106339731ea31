"""History's read handlers, one shape: ``async def handle(cmd, deps) -> reply``; bound
to their endpoints in :mod:`services.history.bootstrap`. The hands come from
:class:`HistoryDeps.hands` (SQL in the service, the in-memory twin in unit tests)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.engine import HandRecord
from kalaro.proto.history import (
    ExportHands,
    GetPlayerStats,
    GetStoredHand,
    HandsList,
    ListHands,
    PlayerStats,
    RecordsPage,
)
from services.history import export, stats
from services.history.store import MAX_PAGE, HandHistory, SqlHandHistory


@dataclass(frozen=True)
class HistoryDeps:
    """What history's handlers are given, built once per process (bootstrap).
    ``engine`` serves the export and stats queries, which stay SQL."""

    hands: HandHistory
    engine: AsyncEngine


def history_deps(engine: AsyncEngine) -> HistoryDeps:
    return HistoryDeps(hands=SqlHandHistory(engine), engine=engine)


async def list_hands(cmd: ListHands, deps: HistoryDeps) -> HandsList:
    if not 1 <= cmd.limit <= MAX_PAGE:
        raise ServiceError(codes.BAD_REQUEST, f"limit must be 1 to {MAX_PAGE}")
    page = await deps.hands.player_page(
        cmd.user_id,
        game=cmd.game,
        before_ms=cmd.before_ms,
        before_id=cmd.before_id,
        limit=cmd.limit,
        since_ms=cmd.since_ms,
    )
    return HandsList(hands=tuple(page))


async def get_hand(cmd: GetStoredHand, deps: HistoryDeps) -> HandRecord:
    record = await deps.hands.load_hand(cmd.hand_id)
    if record is None:
        raise ServiceError(codes.NOT_FOUND, f"no finished hand {cmd.hand_id} in history")
    return record


async def export_hands(cmd: ExportHands, deps: HistoryDeps) -> RecordsPage:
    if not 1 <= cmd.limit <= export.MAX_EXPORT_PAGE:
        raise ServiceError(codes.BAD_REQUEST, f"limit must be 1 to {export.MAX_EXPORT_PAGE}")
    return await export.records_page(deps.engine, cmd)


async def player_stats(cmd: GetPlayerStats, deps: HistoryDeps) -> PlayerStats:
    return await stats.player_stats(deps.engine, cmd.user_id)
