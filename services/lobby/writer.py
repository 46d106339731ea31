"""Writing a table: compare-and-set through the store, derive presence, keep the
indexes, publish what people see. Every handler's write goes through here, and so do
the gateways' presence reports and the presence sweep.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime

from msgspec.structs import replace
from nats.aio.client import Client as NATS

from kalaro.bus import ServiceError
from kalaro.bus.codec import encode
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.lobby import PresenceNoted, ReportPresence, TableInfo
from kalaro.proto.ws import TableChanged
from services.lobby import presence, rules
from services.lobby.records import CLOSED, TableRecord
from services.lobby.store import TableStore, Written

log = logging.getLogger("kalaro.lobby")


class TableWriter:
    """Writes and publishes tables; ``clock`` returns epoch seconds."""

    def __init__(
        self,
        nc: NATS,
        store: TableStore,
        *,
        clock: Callable[[], float],
        presence_grace_seconds: float,
        presence_forget_seconds: float,
    ) -> None:
        self._nc = nc
        self._store = store
        self._redis = store.redis
        self.clock = clock
        self.presence_grace_seconds = presence_grace_seconds
        self.presence_forget_seconds = presence_forget_seconds

    def now_iso(self) -> str:
        return datetime.fromtimestamp(self.clock(), UTC).isoformat(timespec="milliseconds")

    async def update(
        self, table_id: str, change: Callable[[TableRecord], TableRecord]
    ) -> TableRecord:
        """The record after ``change`` (see :meth:`write`)."""
        return (await self.write(table_id, change)).after

    async def write(
        self, table_id: str, change: Callable[[TableRecord], TableRecord], *, quiet: bool = False
    ) -> Written:
        """Compare-and-set ``change`` (deriving presence), then keep the indexes and
        publish. ``quiet`` (presence reports and sweeps, which mostly change nothing):
        publish only if the public info changed, and it is no activity at a practice
        table."""
        written = await self._store.update(table_id, change, derive=self._with_presence)
        if not written.wrote:
            return written
        before, info = written.before, written.after.info
        closed = info.status in CLOSED
        if not closed:
            await self._note_presence_due(before, written.after)
        if info.practice and not quiet:
            # Presence is not activity: the bots' sockets, re-announced by their
            # gateway, must not keep a table its host abandoned open for ever.
            await self._store.note_practice(table_id, closed=closed, now=self.clock())
        if not quiet or presence.public(info) != presence.public(before.info):
            await self.publish_table(info)
        return written

    async def publish_table(self, info: TableInfo) -> None:
        await self._nc.publish(
            subjects.table_events(info.table_id), encode(TableChanged(table=info))
        )

    async def insert(self, rec: TableRecord, *, listed: bool) -> TableRecord:
        """Store a new table under a fresh id with a fresh seed; index it if ``listed``."""
        seed, commitment = rules.new_server_seed()
        rec = replace(rec, info=replace(rec.info, seed_commitment=commitment), server_seed=seed)
        new = await self._store.insert(rec, listed_at=self.clock() if listed else None)
        await self.publish_table(new.info)
        return new

    # --- presence -----------------------------------------------------------------------

    def _with_presence(self, rec: TableRecord) -> TableRecord:
        return presence.derive(
            rec,
            self.clock(),
            grace=self.presence_grace_seconds,
            forget_after=self.presence_forget_seconds,
        )

    def _due(self, rec: TableRecord) -> float | None:
        return presence.due(
            rec, grace=self.presence_grace_seconds, forget_after=self.presence_forget_seconds
        )

    async def _note_presence_due(self, old: TableRecord, new: TableRecord) -> None:
        """Make sure the sweep looks at the table by when its presence next changes.

        ``LT``: a write only ever brings the time forward, so two replicas writing at
        once cannot push it past a change that is due; a time left too early costs the
        sweep one look, after which it sets the exact time (:meth:`sweep_presence`).
        """
        due = self._due(new)
        if due is not None and due != self._due(old):
            await self._redis.execute(
                "ZADD", self._store.presence_due, "LT", due, new.info.table_id
            )

    async def report_presence(self, req: ReportPresence) -> PresenceNoted:
        """A gateway's seated sockets on a table (all of them): note them, and publish
        the table if any seat's presence changed."""
        now = self.clock()
        users = tuple(sorted(set(req.user_ids)))
        written = await self.write(
            req.table_id,
            lambda rec: presence.note_gateway(rec, req.gateway_id, users, now),
            quiet=True,
        )
        moved = presence.public(written.after.info) != presence.public(written.before.info)
        return PresenceNoted(table_id=req.table_id, changed=moved)

    async def sweep_presence(self, limit: int = 200) -> int:
        """Downgrade seats whose grace ran out (``reconnecting`` → ``offline``) and forget
        gateways silent too long, at the tables where that is due; how many tables
        changed. Every replica may run this: each change is a compare-and-set."""
        due = await self._redis.execute(
            "ZRANGEBYSCORE", self._store.presence_due, "-inf", self.clock(), "LIMIT", 0, limit
        )
        changed = 0
        for member in due:
            try:
                changed += await self._sweep_presence_at(member.decode())
            except ServiceError as exc:
                log.warning("table %s: presence not swept yet (%s)", member.decode(), exc)
        return changed

    async def _sweep_presence_at(self, table_id: str) -> bool:
        try:
            written = await self.write(table_id, self._with_presence, quiet=True)
        except ServiceError as exc:
            if exc.code != codes.NOT_FOUND:
                raise
            await self._redis.zrem(self._store.presence_due, table_id)
            return False
        rec = written.after
        next_due = self._due(rec)
        if next_due is None or rec.info.status in CLOSED:
            await self._redis.zrem(self._store.presence_due, table_id)
        else:
            await self._redis.execute("ZADD", self._store.presence_due, next_due, table_id)
        return written.wrote
