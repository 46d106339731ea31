"""History's in-memory twin of :class:`~services.history.store.HandHistory`: the same
rows as SQL (:func:`~services.history.store.rows_of`), kept in dicts, for the unit tier.
Not for production: nothing lasts past the process."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kalaro.proto.engine import HandRecord, HandSummary
from kalaro.proto.history import StoredHand
from kalaro.records import summary
from services.history.store import HandHistory, SqlHandHistory, rows_of


class MemoryHandHistory:
    """Hands by id and the players' index rows; a hand stored again changes nothing."""

    def __init__(self) -> None:
        self._records: dict[str, HandRecord] = {}
        self._index: dict[tuple[str, str], dict[str, Any]] = {}  # (user, hand) -> row

    async def store_hands(self, stored: Sequence[StoredHand]) -> None:
        records = {s.record.hand_id: s.record for s in stored}
        hand_rows, player_rows = rows_of(stored)
        for row in hand_rows:
            self._records.setdefault(row["hand_id"], records[row["hand_id"]])
        for row in player_rows:
            self._index.setdefault((row["user_id"], row["hand_id"]), row)

    async def load_hand(self, hand_id: str) -> HandRecord | None:
        return self._records.get(hand_id)

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
        def wanted(row: dict[str, Any]) -> bool:
            ms, hand_id = row["finished_ms"], row["hand_id"]
            if row["user_id"] != user_id or (game is not None and row["game"] != game):
                return False
            if since_ms is not None and ms < since_ms:
                return False
            if before_ms is None:
                return True
            if before_id is None:
                return bool(ms < before_ms)
            return bool((ms, hand_id) < (before_ms, before_id))

        rows = sorted(
            filter(wanted, self._index.values()),
            key=lambda r: (r["finished_ms"], r["hand_id"]),
            reverse=True,
        )[:limit]
        return [summary(self._records[r["hand_id"]], user_id, int(r["finished_ms"])) for r in rows]

    async def stored_ids(self, hand_ids: Sequence[str]) -> set[str]:
        return {h for h in hand_ids if h in self._records}


if TYPE_CHECKING:  # mypy holds both to the port's interface
    _twin: type[HandHistory] = MemoryHandHistory
    _real: type[HandHistory] = SqlHandHistory
