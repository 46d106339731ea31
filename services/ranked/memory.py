"""Ranked's in-memory twin of :class:`~services.ranked.store.RankedStore`: the same
rules as SQL (one application per hand id, the same leaderboard order), in dicts, for
the unit tier. Not for production: nothing lasts past the process."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kalaro.proto import ranked as rk
from kalaro.proto.engine import HandRecord
from services.ranked.ratings import NotRateable, RatingChange, rate_hand, unrated_reason
from services.ranked.store import (
    RankedStore,
    RatingRow,
    SqlRankedStore,
    apply_standing,
    board_key,
)


class MemoryRankedStore:
    def __init__(self) -> None:
        self._ratings: dict[tuple[str, str], RatingRow] = {}  # (user, game) -> row
        self._rated: set[str] = set()
        self._standing: dict[str, rk.Standing] = {}
        self._audit: list[rk.AuditEntry] = []

    async def apply_hand(self, record: HandRecord, now_ms: int) -> tuple[RatingChange, ...]:
        if unrated_reason(record) is not None or record.hand_id in self._rated:
            return ()
        current = {
            p.user_id: row.rating
            for p in record.players
            if (row := self._ratings.get((p.user_id, record.game))) is not None
        }
        self._rated.add(record.hand_id)
        try:
            changes = rate_hand(current, record)
        except NotRateable:
            return ()  # already in these ratings: marked, nothing changes (as SQL)
        names = {p.user_id: p.display_name for p in record.players}
        for c in changes:
            self._ratings[c.user_id, c.game] = RatingRow(
                c.user_id, c.game, c.after, c.shown, names[c.user_id][:128], now_ms
            )
        return changes

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
