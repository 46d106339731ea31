"""Ranked's SQL: ratings applied once per hand, the leaderboards, admins' decisions.

:class:`RankedStore` is the port the handlers and the RECORDS consumer use; it is
implemented here in SQL (:class:`SqlRankedStore`) and in memory
(:class:`services.ranked.memory.MemoryRankedStore`, the unit tier's twin).

Exactly once: :meth:`SqlRankedStore.apply_hand` inserts the hand's row in
``ranked_rated_hands`` and writes its players' new ratings in one transaction; a row
already there (a redelivery, a second replica) means the hand was applied, and nothing
is written. The players' rows are read ``FOR UPDATE`` on PostgreSQL (SQLite's
``BEGIN IMMEDIATE`` serialises writers anyway) so two hands of one player applied at
once by two replicas do not lose an update.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import and_, delete, func, or_, select, tuple_
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from kalaro.proto import ranked as rk
from kalaro.proto.engine import HandRecord
from services.ranked.ratings import (
    NotRateable,
    Rating,
    RatingChange,
    rate_hand,
    unrated_reason,
)
from services.ranked.schema import audit, rated_hands, ratings, standing

#: How many rows a leaderboard shows.
BOARD_SIZE = 100


@dataclass(frozen=True)
class RatingRow:
    """One player's stored rating in one game."""

    user_id: str
    game: str
    rating: Rating
    shown: int
    display_name: str
    last_rated_ms: int


def board_key(row: RatingRow) -> tuple[int, int, str]:
    """Leaderboard order, best first: rating, then more hands, then user id."""
    return (-row.shown, -row.rating.hands, row.user_id)


def apply_standing(before: rk.Standing, action: rk.AdminActionName) -> rk.Standing:
    """What an admin action does to an account's standing (pure)."""
    match action:
        case "warn":
            return rk.Standing(
                user_id=before.user_id,
                frozen=before.frozen,
                barred=before.barred,
                warnings=before.warnings + 1,
            )
        case "bar-ranked" | "unbar-ranked":
            return rk.Standing(
                user_id=before.user_id,
                frozen=before.frozen,
                barred=action == "bar-ranked",
                warnings=before.warnings,
            )
        case "freeze" | "unfreeze":
            return rk.Standing(
                user_id=before.user_id,
                frozen=action == "freeze",
                barred=before.barred,
                warnings=before.warnings,
            )


class RankedStore(Protocol):
    async def apply_hand(self, record: HandRecord, now_ms: int) -> tuple[RatingChange, ...]:
        """Rate ``record`` unless it was already (or is not rateable): the changes made,
        empty when nothing changed."""
        ...

    async def apply_hands(
        self, records: Sequence[HandRecord], now_ms: int
    ) -> list[tuple[RatingChange, ...]]:
        """:meth:`apply_hand` for a batch, in order, at once (one SQL transaction):
        each record's changes."""
        ...

    async def ratings_of(self, user_id: str) -> dict[str, RatingRow]: ...

    async def board(self, game: str, since_ms: int | None, limit: int) -> list[RatingRow]: ...

    async def place_of(
        self, game: str, user_id: str, since_ms: int | None
    ) -> tuple[int, RatingRow] | None: ...

    async def standing(self, user_id: str) -> rk.Standing: ...

    async def act(self, act: rk.AdminAct, now_ms: int) -> rk.AdminActed: ...

    async def audit_log(self, limit: int) -> list[rk.AuditEntry]: ...


def _dialect_insert(conn: AsyncConnection, table: Any) -> Any:
    if conn.dialect.name == "postgresql":
        return pg_dialect.insert(table)
    return sqlite_dialect.insert(table)


def _row(r: Any) -> RatingRow:
    rating = Rating(
        mu=r.mu,
        sigma=r.sigma,
        hands=r.hands,
        last_change=r.last_change,
        last_hand_id=r.last_hand_id,
    )
    return RatingRow(r.user_id, r.game, rating, r.shown, r.display_name, r.last_rated_ms)


def rating_values(change: RatingChange, name: str, now_ms: int) -> dict[str, Any]:
    after = change.after
    return {
        "user_id": change.user_id,
        "game": change.game,
        "mu": after.mu,
        "sigma": after.sigma,
        "shown": change.shown,
        "hands": after.hands,
        "last_change": after.last_change,
        "last_hand_id": after.last_hand_id,
        "last_rated_ms": now_ms,
        "display_name": name[:128],
    }


def rateable_once(records: Sequence[HandRecord]) -> list[HandRecord]:
    """The rateable records of a batch, each hand once, in the order given."""
    seen: dict[str, HandRecord] = {}
    for record in records:
        if unrated_reason(record) is None:
            seen.setdefault(record.hand_id, record)
    return list(seen.values())


def rate_in_order(
    current: dict[tuple[str, str], Rating], records: Sequence[HandRecord], now_ms: int
) -> tuple[dict[str, tuple[RatingChange, ...]], list[dict[str, Any]]]:
    """Rate ``records`` one after the other from ``current`` ((user, game) -> rating,
    updated in place): each hand's changes by hand id, and the rows to write (each
    player's last). A hand already in a player's rating (``NotRateable``) changes
    nothing; its mark stays, so it is acknowledged rather than redelivered forever."""
    by_hand: dict[str, tuple[RatingChange, ...]] = {}
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for record in records:
        mine = {
            p.user_id: rating
            for p in record.players
            if (rating := current.get((p.user_id, record.game))) is not None
        }
        try:
            changes = rate_hand(mine, record)
        except NotRateable:
            continue
        names = {p.user_id: p.display_name for p in record.players}
        for change in changes:
            current[change.user_id, change.game] = change.after
            rows[change.user_id, change.game] = rating_values(change, names[change.user_id], now_ms)
        by_hand[record.hand_id] = changes
    return by_hand, list(rows.values())


class SqlRankedStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def apply_hand(self, record: HandRecord, now_ms: int) -> tuple[RatingChange, ...]:
        return (await self.apply_hands([record], now_ms))[0]

    async def apply_hands(
        self, records: Sequence[HandRecord], now_ms: int
    ) -> list[tuple[RatingChange, ...]]:
        wanted = rateable_once(records)
        if not wanted:
            return [() for _ in records]
        async with self.engine.begin() as conn:
            marks = [{"hand_id": r.hand_id, "game": r.game, "rated_ms": now_ms} for r in wanted]
            mark = _dialect_insert(conn, rated_hands).values(marks).on_conflict_do_nothing()
            fresh = set(await conn.scalars(mark.returning(rated_hands.c.hand_id)))
            todo = [r for r in wanted if r.hand_id in fresh]  # the rest: redeliveries
            keys = sorted({(p.user_id, r.game) for r in todo for p in r.players})
            current: dict[tuple[str, str], Rating] = {}
            if keys:
                query = select(ratings).where(tuple_(ratings.c.user_id, ratings.c.game).in_(keys))
                if conn.dialect.name == "postgresql":
                    # One lock order for every replica: no deadlock between two batches.
                    query = query.order_by(ratings.c.user_id, ratings.c.game).with_for_update()
                for r in (await conn.execute(query)).all():
                    current[r.user_id, r.game] = _row(r).rating
            by_hand, rows = rate_in_order(current, todo, now_ms)
            if rows:
                upsert = _dialect_insert(conn, ratings)
                upsert = upsert.on_conflict_do_update(
                    index_elements=[ratings.c.user_id, ratings.c.game],
                    set_={k: upsert.excluded[k] for k in rows[0] if k not in ("user_id", "game")},
                )
                await conn.execute(upsert, rows)
        return [by_hand.get(r.hand_id, ()) for r in records]

    async def ratings_of(self, user_id: str) -> dict[str, RatingRow]:
        async with self.engine.connect() as conn:
            rows = (await conn.execute(select(ratings).where(ratings.c.user_id == user_id))).all()
        return {r.game: _row(r) for r in rows}

    async def board(self, game: str, since_ms: int | None, limit: int) -> list[RatingRow]:
        query = select(ratings).where(ratings.c.game == game)
        if since_ms is not None:
            query = query.where(ratings.c.last_rated_ms >= since_ms)
        query = query.order_by(
            ratings.c.shown.desc(), ratings.c.hands.desc(), ratings.c.user_id
        ).limit(limit)
        async with self.engine.connect() as conn:
            return [_row(r) for r in (await conn.execute(query)).all()]

    async def place_of(
        self, game: str, user_id: str, since_ms: int | None
    ) -> tuple[int, RatingRow] | None:
        async with self.engine.connect() as conn:
            found = (
                await conn.execute(
                    select(ratings).where(ratings.c.game == game, ratings.c.user_id == user_id)
                )
            ).first()
            if found is None:
                return None
            mine = _row(found)
            if since_ms is not None and mine.last_rated_ms < since_ms:
                return None
            c = ratings.c
            ahead = select(func.count()).where(
                c.game == game,
                or_(
                    c.shown > mine.shown,
                    and_(c.shown == mine.shown, c.hands > mine.rating.hands),
                    and_(c.shown == mine.shown, c.hands == mine.rating.hands, c.user_id < user_id),
                ),
            )
            if since_ms is not None:
                ahead = ahead.where(c.last_rated_ms >= since_ms)
            count = int(await conn.scalar(ahead) or 0)
        return count + 1, mine

    async def standing(self, user_id: str) -> rk.Standing:
        async with self.engine.connect() as conn:
            return await _standing(conn, user_id)

    async def act(self, act: rk.AdminAct, now_ms: int) -> rk.AdminActed:
        async with self.engine.begin() as conn:
            query = select(standing).where(standing.c.user_id == act.user_id)
            if conn.dialect.name == "postgresql":
                query = query.with_for_update()
            found = (await conn.execute(query)).first()
            before = _standing_of(found, act.user_id)
            after = apply_standing(before, act.action)
            await conn.execute(delete(standing).where(standing.c.user_id == act.user_id))
            await conn.execute(
                standing.insert(),
                {
                    "user_id": act.user_id,
                    "frozen": after.frozen,
                    "barred": after.barred,
                    "warnings": after.warnings,
                    "updated_ms": now_ms,
                },
            )
            entry = rk.AuditEntry(
                user_id=act.user_id,
                action=act.action,
                reason=act.reason,
                admin_id=act.admin_id,
                at_ms=now_ms,
            )
            await conn.execute(audit.insert(), _audit_values(entry))
        return rk.AdminActed(standing=after, audit=entry)

    async def audit_log(self, limit: int) -> list[rk.AuditEntry]:
        query = select(audit).order_by(audit.c.at_ms.desc(), audit.c.id.desc()).limit(limit)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [
            rk.AuditEntry(
                user_id=r.user_id,
                action=r.action,
                reason=r.reason,
                admin_id=r.admin_id,
                at_ms=r.at_ms,
            )
            for r in rows
        ]


def _audit_values(entry: rk.AuditEntry) -> dict[str, Any]:
    return {
        "user_id": entry.user_id,
        "action": entry.action,
        "reason": entry.reason,
        "admin_id": entry.admin_id,
        "at_ms": entry.at_ms,
    }


def _standing_of(row: Any, user_id: str) -> rk.Standing:
    if row is None:
        return rk.Standing(user_id=user_id)
    return rk.Standing(
        user_id=user_id, frozen=bool(row.frozen), barred=bool(row.barred), warnings=row.warnings
    )


async def _standing(conn: AsyncConnection, user_id: str) -> rk.Standing:
    row = (await conn.execute(select(standing).where(standing.c.user_id == user_id))).first()
    return _standing_of(row, user_id)
