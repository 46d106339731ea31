"""The lobby's in-memory twin of :class:`~services.lobby.store.Tables`: table records
(stored encoded, as Redis holds them) with their versions, and the listing index. For
the unit tier; nothing lasts past the process, and closed tables do not expire."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec
from msgspec.structs import replace

from services.lobby.records import CLOSED, TableRecord
from services.lobby.store import (
    LIST_CHUNK,
    Tables,
    TableStore,
    Written,
    decoded,
    loaded,
    next_record,
)


class MemoryTables:
    def __init__(self) -> None:
        self._records: dict[str, tuple[int, bytes]] = {}
        self._index: dict[str, int] = {}  # table id -> listed at (ms)

    async def get(self, table_id: str) -> tuple[int, bytes | None]:
        return self._records.get(table_id, (0, None))

    async def load(self, table_id: str) -> tuple[int, TableRecord]:
        return loaded(*await self.get(table_id))

    async def update(
        self,
        table_id: str,
        change: Callable[[TableRecord], TableRecord],
        *,
        derive: Callable[[TableRecord], TableRecord] = lambda rec: rec,
    ) -> Written:
        version, rec = await self.load(table_id)
        changed = next_record(rec, version, change, derive)
        if changed is rec:
            return Written(before=rec, after=rec)
        self._records[table_id] = (version + 1, msgspec.json.encode(changed))
        if changed.info.status in CLOSED:
            self._index.pop(table_id, None)
        return Written(before=rec, after=changed)

    async def insert(self, rec: TableRecord, *, listed_at: float | None) -> TableRecord:
        table_id = uuid.uuid4().hex[:16]
        new = replace(rec, info=replace(rec.info, table_id=table_id))
        self._records[table_id] = (1, msgspec.json.encode(new))
        if listed_at is not None:
            self._index[table_id] = int(listed_at * 1000)
        return new

    async def listed(self, start: int) -> list[tuple[str, TableRecord | None]]:
        # Redis's ZREVRANGE: highest score first, ties by member, descending.
        order = sorted(self._index, key=lambda t: (self._index[t], t), reverse=True)
        return await self.load_many(order[start : start + LIST_CHUNK])

    async def load_many(self, names: list[str]) -> list[tuple[str, TableRecord | None]]:
        found: list[tuple[str, TableRecord | None]] = []
        for name in names:
            version, data = await self.get(name)
            found.append((name, None if data is None else decoded(data, version)))
        return found

    async def unlist(self, *table_ids: str) -> None:
        for table_id in table_ids:
            self._index.pop(table_id, None)


if TYPE_CHECKING:  # mypy holds both to the port's interface
    _twin: type[Tables] = MemoryTables
    _real: type[Tables] = TableStore
