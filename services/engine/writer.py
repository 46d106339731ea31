"""Writing a step, then publishing it: the one place a hand's next state is stored.

The write is one compare-and-set on the slot's version (:meth:`SlotStore.save`) that
also moves the hand's timer deadline and, when the hand ends, enters its pending
outcome, in the same atomic step. Only then are its frames published, in one message
on the table's frames subject (each seat's frame, and the audience's only while a
gateway marks the table as watched): one publish per move, however many seats. Only
gateways subscribe to it; each sends a socket its own seat's part alone.
"""

from __future__ import annotations

import logging
from typing import Any

from nats.aio.client import Client as NATS

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from services.engine.hand import Slot
from services.engine.outcomes import OUTCOME_GRACE_MS, OutcomePublisher
from services.engine.slots import Fence, deadline_member
from services.engine.step import Stepped

log = logging.getLogger("kalaro.engine")

#: how many tables' latest state a worker keeps to skip a read (see ``_remember``)
KNOWN_TABLES = 10_000


class HandWriter(OutcomePublisher):
    """The worker's writes (a base of :class:`~services.engine.worker.EngineWorker`)."""

    game: str
    nc: NATS
    _audience_always: bool  # publish the audience frame even when nobody watches (tests)
    _audience_prefix: str  # the Redis namespace of the audience marks
    # table id -> (version, slot, decoded state) as this worker last wrote it
    known: dict[str, tuple[int, Slot, Any]]

    async def commit(
        self, stepped: Stepped, version: int, now: int, *, was_timed: bool, fence: Fence | None
    ) -> int:
        """Write ``stepped`` over the slot at ``version`` (compare-and-set), then publish
        what changed; the new version. Raises ``StaleVersion`` (nothing written, nothing
        sent) if someone wrote first, ``Fenced`` if ``fence`` (the table's ownership
        lease) is not ours any more. ``was_timed``: the slot at ``version`` had a
        deadline, which this write drops."""
        new, new_version = stepped.slot, stepped.version
        table_id, hand_id = new.table_id, new.hand_id
        deadline = new.deadline_ms
        written = await self.slots.save(
            new,
            version,
            appended=stepped.logged,
            drop_deadline=deadline_member(table_id, hand_id, version) if was_timed else "",
            add_deadline=(
                (deadline_member(table_id, hand_id, new_version), deadline)
                if deadline is not None
                else None
            ),
            outcome="add" if stepped.over else "",
            outcome_due_ms=now + OUTCOME_GRACE_MS,
            watch_key=(
                ""
                if self._audience_always
                else self._audience_prefix + subjects.table_audience_key(table_id)
            ),
            fence=fence,
        )
        self._remember(table_id, new_version, new, stepped.state)
        await self._publish_views(stepped, self._audience_always or written.watched)
        if stepped.over:
            try:
                await self.publish_outcome(new, new_version)
            except Exception as exc:
                self._retry_outcome(new, new_version, exc)
        return new_version

    async def _publish_views(self, stepped: Stepped, watched: bool) -> None:
        """Every seat's frame and, when ``watched``, the audience's: one message.

        ``watched`` is the audience mark as the state's write found it, in the same
        atomic step. A gateway subscribes to the table, then sets the mark, then asks
        for the current view; so either the write saw the mark and this message carries
        the audience frame the new spectator needs, or the mark came later and so did
        the view the gateway asked for, which then already shows this version.
        """
        table_id = stepped.slot.table_id
        await self.nc.publish(
            subjects.table_frames(table_id), self.steps.table_frames(stepped, watched)
        )

    def _remember(self, table_id: str, version: int, slot: Slot, state: Any) -> None:
        """Keep what this worker just wrote, so the next move at the table usually needs no
        read: it is used only when the move names exactly that version, and the
        compare-and-set write still refuses it if another replica has moved the hand on.
        Redis stays the only truth; this saves one round trip per move."""
        known = self.known
        known.pop(table_id, None)
        known[table_id] = (version, slot, state)
        if len(known) > KNOWN_TABLES:
            del known[next(iter(known))]  # the least recently written table

    async def load_hand(self, table_id: str) -> tuple[int, Slot]:
        version, slot = await self.slots.load(table_id)
        if slot is None:
            raise ServiceError(codes.NOT_FOUND, f"no hand at table {table_id}")
        if slot.game != self.game:
            raise ServiceError(codes.CONFLICT, f"table {table_id} plays {slot.game}")
        return version, slot
