"""History's SQL: store records (batched, idempotent by hand id) and read them back.

Voided hands (cancelled before their end: ``result`` null, nothing paid) are stored,
listed and read like finished ones, flagged ``voided`` in both tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import msgspec
from sqlalchemy import and_, or_, select
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from kalaro.proto.engine import HandRecord, HandSummary
from kalaro.proto.history import StoredHand
from kalaro.records import summary
from services.history.outcome import outcome
from services.history.schema import hands, player_hands

MAX_PAGE = 100

_encode = msgspec.json.Encoder().encode
_decode_record = msgspec.json.Decoder(HandRecord).decode


def _insert_ignoring(conn: AsyncConnection, table: Any) -> Any:
    """``INSERT ... ON CONFLICT DO NOTHING`` in the connection's dialect."""
    if conn.dialect.name == "postgresql":
        return pg_dialect.insert(table).on_conflict_do_nothing()
    return sqlite_dialect.insert(table).on_conflict_do_nothing()


def rows_of(stored: Sequence[StoredHand]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows of both tables for ``stored`` (pure): each hand once, even if repeated
    within the batch, and one index row per human player."""
    seen: dict[str, StoredHand] = {}
    for item in stored:
        seen.setdefault(item.record.hand_id, item)
    hand_rows: list[dict[str, Any]] = []
    player_rows: list[dict[str, Any]] = []
    for item in seen.values():
        record = item.record
        hand_rows.append(
            {
                "hand_id": record.hand_id,
                "game": record.game,
                "table_id": record.table_id,
                "practice": item.practice,
                "finished_ms": item.finished_ms,
                "record": _encode(record).decode(),
                "voided": record.voided,
            }
        )
        for user_id in {p.user_id: p for p in record.players if not p.is_bot}:
            won, net = outcome(record, user_id)
            player_rows.append(
                {
                    "user_id": user_id,
                    "hand_id": record.hand_id,
                    "game": record.game,
                    "finished_ms": item.finished_ms,
                    "won": won,
                    "net": net,
                    "practice": item.practice,
                    "derived": True,
                    "voided": record.voided,
                }
            )
    return hand_rows, player_rows


async def store_hands(engine: AsyncEngine, stored: Sequence[StoredHand]) -> None:
    """Every record of ``stored`` in one transaction (multi-row inserts); a hand already
    there is left as it is, so a redelivery or duplicate changes nothing."""
    hand_rows, player_rows = rows_of(stored)
    if not hand_rows:
        return
    async with engine.begin() as conn:
        await conn.execute(_insert_ignoring(conn, hands), hand_rows)
        if player_rows:
            await conn.execute(_insert_ignoring(conn, player_hands), player_rows)


async def load_hand(engine: AsyncEngine, hand_id: str) -> HandRecord | None:
    async with engine.connect() as conn:
        data = await conn.scalar(select(hands.c.record).where(hands.c.hand_id == hand_id))
    return None if data is None else _decode_record(data)


async def player_page(
    engine: AsyncEngine,
    user_id: str,
    *,
    game: str | None,
    before_ms: int | None,
    before_id: str | None,
    limit: int,
    since_ms: int | None = None,
) -> list[HandSummary]:
    """A page of the player's hands, newest first, strictly after the cursor
    (``before_ms``, ``before_id``) in that order; no id: everything before the time;
    ``since_ms``: none finished before it."""
    ph = player_hands
    query = (
        select(ph.c.finished_ms, hands.c.record)
        .join(hands, hands.c.hand_id == ph.c.hand_id)
        .where(ph.c.user_id == user_id)
    )
    if game is not None:
        query = query.where(ph.c.game == game)
    if since_ms is not None:
        query = query.where(ph.c.finished_ms >= since_ms)
    if before_ms is not None:
        if before_id is None:
            query = query.where(ph.c.finished_ms < before_ms)
        else:
            query = query.where(
                or_(
                    ph.c.finished_ms < before_ms,
                    and_(ph.c.finished_ms == before_ms, ph.c.hand_id < before_id),
                )
            )
    query = query.order_by(ph.c.finished_ms.desc(), ph.c.hand_id.desc()).limit(limit)
    async with engine.connect() as conn:
        rows = (await conn.execute(query)).all()
    return [summary(_decode_record(data), user_id, int(ms)) for ms, data in rows]


async def stored_ids(engine: AsyncEngine, hand_ids: Sequence[str]) -> set[str]:
    """Which of ``hand_ids`` history has."""
    if not hand_ids:
        return set()
    async with engine.connect() as conn:
        found = await conn.scalars(select(hands.c.hand_id).where(hands.c.hand_id.in_(hand_ids)))
        return set(found)


class HandHistory(Protocol):
    """The hand-history store as the handlers and the ingest see it; implemented in SQL
    (:class:`SqlHandHistory`) and in memory (:class:`services.history.memory.MemoryHandHistory`,
    the unit tier's twin). Both pass the same tests (``tests/shared/history_store.py``)."""

    async def store_hands(self, stored: Sequence[StoredHand]) -> None: ...

    async def load_hand(self, hand_id: str) -> HandRecord | None: ...

    async def player_page(
        self,
        user_id: str,
        *,
        game: str | None,
        before_ms: int | None,
        before_id: str | None,
        limit: int,
        since_ms: int | None = None,
    ) -> list[HandSummary]: ...

    async def stored_ids(self, hand_ids: Sequence[str]) -> set[str]: ...


class SqlHandHistory:
    """:class:`HandHistory` over this module's functions and an SQL engine."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def store_hands(self, stored: Sequence[StoredHand]) -> None:
        await store_hands(self.engine, stored)

    async def load_hand(self, hand_id: str) -> HandRecord | None:
        return await load_hand(self.engine, hand_id)

    async def player_page(
        self,
        user_id: str,
        *,
        game: str | None,
        before_ms: int | None,
        before_id: str | None,
        limit: int,
        since_ms: int | None = None,
    ) -> list[HandSummary]:
        return await player_page(
            self.engine,
            user_id,
            game=game,
            before_ms=before_ms,
            before_id=before_id,
            limit=limit,
            since_ms=since_ms,
        )

    async def stored_ids(self, hand_ids: Sequence[str]) -> set[str]:
        return await stored_ids(self.engine, hand_ids)
