"""The table store port: one :class:`TableRecord` per table in Redis, written by
compare-and-set on its version, plus the lobby's sorted sets (the listing index, open
practice tables, presence due times, unconfirmed hand cancels).

Every change reads the record, applies a pure ``change`` to it and writes it back at
the version it read, retrying a bounded number of times when someone else wrote first,
so any lobby replica can serve any table and two racing requests cannot both apply.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Callable
from typing import Protocol

import msgspec
from msgspec.structs import replace

from kalaro.bus import ServiceError
from kalaro.bus.redislink import RedisLink
from kalaro.bus.store import StaleVersion, VersionedStore
from kalaro.proto import errors as codes
from kalaro.proto.lobby import NO_SUCH_TABLE
from services.lobby.records import CLOSED, TableRecord

# A handful of CAS attempts is plenty: a table sees a few writes a second at most, and
# a lost race resolves on the next read. Past that the table is genuinely contended.
_CAS_ATTEMPTS = 12
# Closed tables stay readable for a day (late sockets, hand history links), then go.
_CLOSED_TTL_MS = 24 * 3600 * 1000
LIST_CHUNK = 200


class Written(msgspec.Struct, frozen=True, kw_only=True):
    """One compare-and-set: the record as read, and as written (``after is before``
    when the change was nothing, so nothing was written)."""

    before: TableRecord
    after: TableRecord

    @property
    def wrote(self) -> bool:
        return self.after is not self.before


def decoded(data: bytes, version: int) -> TableRecord:
    """A stored record, its ``info.version`` the version it is stored at."""
    rec = msgspec.json.decode(data, type=TableRecord)
    return replace(rec, info=replace(rec.info, version=version))


def loaded(version: int, data: bytes | None) -> tuple[int, TableRecord]:
    """What :meth:`Tables.load` answers for a stored ``(version, data)``."""
    if data is None:
        raise ServiceError(codes.NOT_FOUND, NO_SUCH_TABLE)
    return version, decoded(data, version)


def next_record(
    rec: TableRecord,
    version: int,
    change: Callable[[TableRecord], TableRecord],
    derive: Callable[[TableRecord], TableRecord],
) -> TableRecord:
    """``rec`` (read at ``version``) as ``change`` and ``derive`` leave it, at the next
    version; ``rec`` itself when ``change`` changed nothing."""
    changed = change(rec)
    if changed is rec:
        return rec
    changed = derive(changed)
    return replace(changed, info=replace(changed.info, version=version + 1))


class Tables(Protocol):
    """The table records and their listing, as the lobby's handlers use them: in Redis
    (:class:`TableStore`) or in memory (:class:`services.lobby.memory.MemoryTables`,
    the unit tier's twin). Both pass tests/contracts/table_store.py."""

    async def get(self, table_id: str) -> tuple[int, bytes | None]: ...

    async def load(self, table_id: str) -> tuple[int, TableRecord]: ...

    async def update(
        self,
        table_id: str,
        change: Callable[[TableRecord], TableRecord],
        *,
        derive: Callable[[TableRecord], TableRecord] = ...,
    ) -> Written: ...

    async def insert(self, rec: TableRecord, *, listed_at: float | None) -> TableRecord: ...

    async def listed(self, start: int) -> list[tuple[str, TableRecord | None]]: ...

    async def load_many(self, names: list[str]) -> list[tuple[str, TableRecord | None]]: ...

    async def unlist(self, *table_ids: str) -> None: ...


class TableStore:
    """Table records and the lobby's indexes in Redis, every key under ``prefix``."""

    def __init__(self, redis: RedisLink, prefix: str) -> None:
        self.redis = redis
        self._records = VersionedStore(redis, f"{prefix}table:")
        self.index = f"{prefix}tables"
        # Open practice tables, scored by when something last happened at them (epoch
        # s), and the hand version each was last seen at (see end_idle_practice).
        self.practice = f"{prefix}practice"
        self.practice_hands = f"{prefix}practice-hands"
        # Hands whose cancel the engine has not confirmed yet: ``game|table|hand``,
        # scored by when the cancel was first asked for (see retry_cancels).
        self.cancels = f"{prefix}pending-cancels"
        # Deals in flight: ``table|hand``, scored by when the deal began (epoch s). A
        # replica adds one before it claims a table, so a deal it dies in is found
        # (see Dealer.rescue_stale_deals).
        self.deals = f"{prefix}deals-in-flight"
        # Tables whose presence changes by itself at some time, scored by that time.
        self.presence_due = f"{prefix}presence-due"

    async def get(self, table_id: str) -> tuple[int, bytes | None]:
        """The raw stored record and its version (0, None: no such table)."""
        return await self._records.get(table_id)

    async def load(self, table_id: str) -> tuple[int, TableRecord]:
        return loaded(*await self._records.get(table_id))

    async def update(
        self,
        table_id: str,
        change: Callable[[TableRecord], TableRecord],
        *,
        derive: Callable[[TableRecord], TableRecord] = lambda rec: rec,
    ) -> Written:
        """Read → ``change`` → ``derive`` → compare-and-set, retried on a lost race.

        ``change`` is pure: it raises to refuse, or returns the record unchanged (the
        same object) to do nothing, which writes nothing. A closed table leaves the
        listing index and presence sweep, and expires after a day.
        """
        for attempt in range(_CAS_ATTEMPTS):
            version, rec = await self.load(table_id)
            changed = next_record(rec, version, change, derive)
            if changed is rec:
                return Written(before=rec, after=rec)
            closed = changed.info.status in CLOSED
            try:
                await self._records.put(
                    table_id,
                    version,
                    msgspec.json.encode(changed),
                    ttl_ms=_CLOSED_TTL_MS if closed else 0,
                )
            except StaleVersion:
                # Someone wrote between our read and write; jitter keeps racers apart.
                await asyncio.sleep(random.uniform(0, 0.002 * (attempt + 1)))
                continue
            if closed:
                await self.redis.zrem(self.index, table_id)
                await self.redis.zrem(self.presence_due, table_id)
            return Written(before=rec, after=changed)
        raise ServiceError(codes.CONFLICT, "the table is busy right now; please try again")

    async def insert(self, rec: TableRecord, *, listed_at: float | None) -> TableRecord:
        """Store a new table under a fresh id; index it (scored ``listed_at``) unless
        that is None. ``rec`` has its seed; its ``table_id`` is set here."""
        for _ in range(3):
            table_id = uuid.uuid4().hex[:16]
            new = replace(rec, info=replace(rec.info, table_id=table_id))
            try:
                await self._records.put(table_id, 0, msgspec.json.encode(new))
            except StaleVersion:  # an id collision; vanishingly rare, just pick another
                continue
            if listed_at is not None:
                await self.redis.zadd(self.index, {table_id: int(listed_at * 1000)})
            return new
        raise ServiceError(codes.CONFLICT, "could not create the table; please try again")

    async def listed(self, start: int) -> list[tuple[str, TableRecord | None]]:
        """A chunk of the listing index from ``start``, newest first: each table id with
        its record (None: gone). Empty past the end."""
        ids = await self.redis.zrevrange(self.index, start, start + LIST_CHUNK - 1)
        return await self.load_many([i.decode() for i in ids])

    async def load_many(self, names: list[str]) -> list[tuple[str, TableRecord | None]]:
        """Each table id with its record (None: gone), read in one round trip."""
        if not names:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for name in names:
                pipe.hmget(self._records.key(name), ["v", "d"])
            rows = await pipe.execute()
        found: list[tuple[str, TableRecord | None]] = []
        for name, (version, data) in zip(names, rows, strict=True):
            if data is None:
                found.append((name, None))
                continue
            found.append((name, decoded(data, int(version))))
        return found

    async def unlist(self, *table_ids: str) -> None:
        await self.redis.zrem(self.index, *table_ids)

    async def note_practice(self, table_id: str, *, closed: bool, now: float) -> None:
        """Something happened at a practice table: it is not idle (or, closed, not open)."""
        if closed:
            await self.redis.zrem(self.practice, table_id)
            await self.redis.execute("HDEL", self.practice_hands, table_id)
        else:
            await self.redis.zadd(self.practice, {table_id: now})
