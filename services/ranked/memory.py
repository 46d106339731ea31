"""Ranked's in-memory twin of :class:`~services.ranked.store.RankedStore`: the same
rules as SQL (one application per hand id, the same leaderboard order), in dicts, for
the unit tier. Not for production: nothing lasts past the process."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kalaro.proto import ranked as rk
from kalaro.proto.engine import HandRecord
from services.ranked.ratings import RatingChange
from services.ranked.store import (
    RankedStore,
    RatingRow,
    SqlRankedStore,
    apply_standing,
    board_key,
    rate_in_order,
    rateable_once,
)


class MemoryRankedStore:
    def __init__(self) -> None:
        self._ratings: dict[tuple[str, str], RatingRow] = {}  # (user, game) -> row
        self._rated: set[str] = set()
        self._standing: dict[str, rk.Standing] = {}
        self._audit: list[rk.AuditEntry] = []

    async def apply_hand(self, record: HandRecord, now_ms: int) -> tuple[RatingChange, ...]:
        return (await self.apply_hands([record], now_ms))[0]

    async def apply_hands(
        self, records: Sequence[HandRecord], now_ms: int
    ) -> list[tuple[RatingChange, ...]]:
        todo = [r for r in rateable_once(records) if r.hand_id not in self._rated]
        self._rated.update(r.hand_id for r in todo)
        current = {key: row.rating for key, row in self._ratings.items()}
        by_hand, rows = rate_in_order(current, todo, now_ms)
        for row in rows:
            self._ratings[row["user_id"], row["game"]] = RatingRow(
                row["user_id"], row["game"], current[row["user_id"], row["game"]],
                row["shown"], row["display_name"], now_ms,
            )  # fmt: skip
        return [by_hand.get(r.hand_id, ()) for r in records]

    async def ratings_of(self, user_id: str) -> dict[str, RatingRow]:
        return {g: row for (u, g), row in self._ratings.items() if u == user_id}

    def _rows(self, game: str, since_ms: int | None) -> list[RatingRow]:
        rows = [
            r
            for r in self._ratings.values()
            if r.game == game and (since_ms is None or r.last_rated_ms >= since_ms)
        ]
        return sorted(rows, key=board_key)

    async def board(self, game: str, since_ms: int | None, limit: int) -> list[RatingRow]:
        return self._rows(game, since_ms)[:limit]

    async def place_of(
        self, game: str, user_id: str, since_ms: int | None
    ) -> tuple[int, RatingRow] | None:
        for place, row in enumerate(self._rows(game, since_ms), start=1):
            if row.user_id == user_id:
                return place, row
        return None

    async def standing(self, user_id: str) -> rk.Standing:
        return self._standing.get(user_id, rk.Standing(user_id=user_id))

    async def act(self, act: rk.AdminAct, now_ms: int) -> rk.AdminActed:
        after = apply_standing(await self.standing(act.user_id), act.action)
        self._standing[act.user_id] = after
        entry = rk.AuditEntry(
            user_id=act.user_id,
            action=act.action,
            reason=act.reason,
            admin_id=act.admin_id,
            at_ms=now_ms,
        )
        self._audit.append(entry)
        return rk.AdminActed(standing=after, audit=entry)

    async def audit_log(self, limit: int) -> list[rk.AuditEntry]:
        return list(reversed(self._audit))[:limit]


if TYPE_CHECKING:  # mypy holds both to the port's interface
    _twin: type[RankedStore] = MemoryRankedStore
    _real: type[RankedStore] = SqlRankedStore
