"""Publishing a decided hand's outcome: the settlement or void (RESULTS, for the
wallet), ``HandFinished`` (EVENTS, for the lobby), the hand's record (RECORDS, for
history) and the ``HandResult`` frame at the table; then the slot is marked.

A finished hand is entered in a pending-outcomes set in the same write that finishes
it, so if the worker dies before publishing, a sweeper on any replica publishes the
outcome later (:mod:`services.engine.timers`); JetStream's message ids make a repeat
harmless. While the streams have no leader (a NATS node just died), the outcome is
also handed to the wallet and the lobby by request/reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable
from typing import assert_never

from msgspec.structs import replace
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext

from kalaro.bus import RemoteError, ServiceError, request
from kalaro.bus.jetstream import publish_once
from kalaro.proto import endpoints, subjects
from kalaro.proto import errors as codes
from kalaro.proto.engine import HandRecord
from kalaro.proto.history import StoredHand
from kalaro.proto.wallet import SettleHand, VoidHand
from services.engine.hand import Slot, hand_record
from services.engine.slots import DONE_SLOT_TTL_MS, SlotStore, StaleVersion
from services.engine.step import Steps

log = logging.getLogger("kalaro.engine")

#: How long the worker that finished a hand has to publish its outcome before a
#: sweeper may step in (a repeat is harmless, but the HandResult frame would show twice).
OUTCOME_GRACE_MS = 5_000
#: A failed outcome publish (the stream is electing a leader) is retried at once with
#: this backoff, for this long, before the sweeper's own retries take over.
OUTCOME_RETRY_SECONDS = 30.0
_OUTCOME_BACKOFF = (0.1, 0.2, 0.3, 0.5)


class RecordNotPublished(Exception):
    """A voided hand's void went out, its record (for history) did not yet."""

    def __init__(self, hand_id: str) -> None:
        super().__init__(f"hand {hand_id}: voided, its record not published yet")


class OutcomePublisher:
    """The worker's outcome publishing (a base of :class:`~services.engine.worker.
    EngineWorker`, which sets the attributes below)."""

    steps: Steps
    slots: SlotStore
    now_ms: Callable[[], int]
    nc: NATS
    _js: JetStreamContext
    _stopping: bool
    _retries: set[asyncio.Task[None]]  # outcomes being published again

    def _retry_outcome(self, slot: Slot, version: int, exc: Exception) -> None:
        """The hand is over and stored. A stream whose leader just died answers again
        within seconds: publish again from here, soon, rather than wait for the sweeper
        (which also will, should this worker die)."""
        log.warning("hand %s: outcome not published yet (%r); retrying", slot.hand_id, exc)
        task = asyncio.create_task(self._publish_outcome_again(slot, version))
        self._retries.add(task)
        task.add_done_callback(self._retries.discard)

    async def publish_outcome_within(self, slot: Slot, version: int, seconds: float) -> None:
        """Publish (no frame), retrying while the stream elects a leader; ``unavailable``
        if it still cannot after ``seconds``."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + seconds
        for attempt in itertools.count():
            try:
                await self.publish_outcome(slot, version, frame=False)
            except Exception as exc:
                if loop.time() >= give_up:
                    raise ServiceError(
                        codes.UNAVAILABLE,
                        f"the last hand's result could not be recorded yet ({exc!r}); retry",
                    ) from None
                await asyncio.sleep(_OUTCOME_BACKOFF[min(attempt, len(_OUTCOME_BACKOFF) - 1)])
            else:
                return

    async def _publish_outcome_again(self, slot: Slot, version: int) -> None:
        loop = asyncio.get_running_loop()
        give_up = loop.time() + OUTCOME_RETRY_SECONDS
        try:
            shown = await self._deliver_directly(slot)
        except Exception:
            log.warning("hand %s: direct delivery failed", slot.hand_id, exc_info=True)
            shown = False
        for attempt in itertools.count():
            await asyncio.sleep(_OUTCOME_BACKOFF[min(attempt, len(_OUTCOME_BACKOFF) - 1)])
            try:
                await self.publish_outcome(slot, version, frame=not shown)
            except Exception as exc:
                if loop.time() >= give_up or self._stopping:
                    log.error(
                        "hand %s: outcome still not published (%r); the sweeper will",
                        slot.hand_id,
                        exc,
                    )
                    return
            else:
                log.info("hand %s: outcome published after %d retries", slot.hand_id, attempt + 1)
                return

    async def publish_outcome(self, slot: Slot, version: int, *, frame: bool = True) -> None:
        """Send a finished hand's settlement (or a cancelled one's void), then mark it.

        The settlement, ``HandFinished`` and the hand's record carry the hand id as their
        message id, so a repeat is dropped by JetStream; the ``HandResult`` frame
        (``frame``) is plain NATS, which is why callers avoid repeating it.
        """
        hand_id = slot.hand_id
        to_wallet, to_lobby, shown = self.steps.outcome_messages(slot)
        if slot.status == "finished":
            record, finished_ms = hand_record(slot), self.now_ms()
            await self.slots.save_record(record, finished_ms)
            # For good: the history service stores it in SQL, then cuts this copy to an hour.
            await self._publish_record(record, finished_ms)
        if to_wallet is not None:
            await publish_once(self._js, subjects.hand_result(hand_id), to_wallet, msg_id=hand_id)
        if to_lobby is not None:
            await publish_once(self._js, subjects.HAND_FINISHED, to_lobby, msg_id=hand_id)
        if slot.status == "cancelled" and slot.state:
            # A hand voided after its deal goes to history too (a tombstone, cancelled
            # before any deal, has nothing to record). After the void, so the wallet
            # never waits on the records stream. Not kept in Redis: the engine's stored
            # records mean "finished, settle these payments" to ``outcome`` and ``cancel``.
            try:
                await self._publish_record(hand_record(slot), self.now_ms())
            except Exception as exc:
                raise RecordNotPublished(hand_id) from exc
        if shown is not None and frame:
            await self.nc.publish(subjects.table_events(slot.table_id), self.steps.encode(shown))
        marked = replace(slot, outcome_published=True)
        with contextlib.suppress(StaleVersion):  # marked by another, or a new hand began
            await self.slots.save(marked, version, outcome="del", ttl_ms=DONE_SLOT_TTL_MS)

    async def _publish_record(self, record: HandRecord, finished_ms: int) -> None:
        """The hand's record on RECORDS, for the history service (once: the hand id)."""
        stored = StoredHand(record=record, finished_ms=finished_ms, practice=record.practice)
        hand_id = record.hand_id
        await publish_once(self._js, subjects.hand_record(hand_id), stored, msg_id=hand_id)

    async def _deliver_directly(self, slot: Slot) -> bool:
        """Hand a decided outcome to the wallet and the lobby by request/reply, while the
        streams have no leader (a NATS node just died: an election takes seconds, a
        request to a live replica milliseconds). Both apply it keyed by the hand, so the
        stream's copy, published once it answers again, changes nothing. Then show the
        result at the table. True when both confirmed."""
        to_wallet, to_lobby, shown = self.steps.outcome_messages(slot)
        try:
            match to_wallet:
                case SettleHand():
                    await request(self.nc, endpoints.WALLET_SETTLE, to_wallet, timeout=2)
                case VoidHand():
                    await request(self.nc, endpoints.WALLET_VOID, to_wallet, timeout=2)
                case None:
                    pass
                case _:
                    assert_never(to_wallet)
            if to_lobby is not None:
                await request(self.nc, endpoints.LOBBY_HAND_FINISHED, to_lobby, timeout=2)
        except RemoteError as exc:
            log.info("hand %s: direct delivery not confirmed (%s)", slot.hand_id, exc)
            return False
        if shown is not None:
            await self.nc.publish(subjects.table_events(slot.table_id), self.steps.encode(shown))
        return True
