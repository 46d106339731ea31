"""The worker's background loop: timers that fall due and outcomes nobody published.

Timers (Tongits' Fight/Fold window, Mahjong's call window) are deadlines in a Redis
sorted set, written in the same atomic step as the state that opened them. Every
replica polls the set and *leases* what is due, so a worker that dies mid-timeout
loses nothing: the lease runs out and another replica applies it. With ownership
(:mod:`services.engine.ownership`) only the table's owner applies it: another replica
that claims it gives it straight back, due at once, and the owner's next tick takes it.
A due deadline whose version is not the slot's any more is stale (someone acted) and
is dropped. The sweeper does the same for finished hands whose outcome is still pending.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from kalaro.bus import ServiceError
from kalaro.bus.jetstream import ensure_stream
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.settings import Settings
from services.engine.hand import Slot
from services.engine.ownership import Ownership
from services.engine.slots import Fence, Fenced, StaleVersion, parse_deadline, parse_outcome
from services.engine.writer import HandWriter

log = logging.getLogger("kalaro.engine")

#: How long a claimed deadline or outcome stays with the worker that claimed it.
LEASE_MS = 5_000
#: A sweep that failed to publish an outcome tries again this soon.
SWEEP_RETRY_MS = 2_000
#: The timer loop's period and the sweeper's.
TICK_SECONDS = 0.1
SWEEP_SECONDS = 3.0


class NotOwner(ServiceError):
    """A request or timer for a table whose partition this replica does not own."""

    def __init__(self, table_id: str) -> None:
        super().__init__(
            codes.UNAVAILABLE, f"table {table_id} is moving to another engine replica; retry"
        )


#: A request handler of the worker's (request in, reply out).
Handler = Callable[[Any], Awaitable[Any]]


class TimerLoop(HandWriter):
    """Due timers and the outcome sweeper (a base of
    :class:`~services.engine.worker.EngineWorker`)."""

    _settings: Settings | None  # stream replicas and limits (defaults without)
    _tick: float
    _sweep_every: float
    _task: asyncio.Task[None] | None
    #: None: no ownership, any replica writes any table (the version's compare-and-set
    #: keeps that safe); tests' workers run so.
    ownership: Ownership | None

    def fence_of(self, table_id: str) -> Fence | None:
        """What a write to ``table_id`` is fenced by (None: unfenced, no ownership).
        Raises :class:`NotOwner` when another replica owns it."""
        if self.ownership is None:
            return None
        fence = self.ownership.fence(subjects.partition_of(table_id))
        if fence is None:
            raise NotOwner(table_id)
        return fence

    def _guarded(self, handler: Handler) -> Handler:
        """``handler`` answering a fenced-off write as "not the owner": the partition is
        dropped, nothing was written, and the caller may retry at the new owner."""

        async def handle(msg: Any) -> Any:
            try:
                return await handler(msg)
            except Fenced as exc:
                self._fenced_off(exc.table_id)
                raise NotOwner(exc.table_id) from None

        return handle

    def _fenced_off(self, table_id: str) -> None:
        """A write to ``table_id`` was refused by its lease: this replica drops the
        partition (unsubscribes, forgets its tables) and its next tick sorts it out."""
        if self.ownership is not None:
            partition = subjects.partition_of(table_id)
            fence = self.ownership.fence(partition)
            if fence is not None:
                self.ownership.lose(partition, fence)

    async def claim_due_timers(self) -> list[str]:
        """Lease the deadlines due now (what ``fire_due_timers`` does first)."""
        return await self.slots.claim(self.slots.deadlines_key, self.now_ms(), LEASE_MS)

    async def fire_due_timers(self) -> int:
        """Apply every due timer; the number of hands that changed."""
        members = await self.claim_due_timers()
        if not members:
            return 0
        fired = await asyncio.gather(*(self.fire_timer(m) for m in members))
        return sum(fired)

    async def fire_timer(self, member: str) -> bool:
        """Apply one claimed deadline if it still stands; release it either way."""
        table_id, hand_id, version = parse_deadline(member)
        applied = False
        try:
            fence = self.fence_of(table_id)
            current, slot = await self.slots.load(table_id)
            if (
                slot is not None
                and slot.hand_id == hand_id
                and current == version
                and slot.status == "playing"
            ):
                applied = await self._time_out(slot, current, fence)
        except StaleVersion:
            pass  # someone acted first: this deadline is stale
        except (NotOwner, Fenced) as exc:
            if isinstance(exc, Fenced):
                self._fenced_off(table_id)
            # Not ours: due again at once, for the owner's next tick.
            await self.slots.due_again(self.slots.deadlines_key, member, self.now_ms())
            return False
        except Exception:
            # Leave the lease to run out: another try (here or elsewhere) comes later.
            log.exception("timer %s failed", member)
            return False
        await self.slots.release(self.slots.deadlines_key, member)
        return applied

    async def _time_out(self, slot: Slot, version: int, fence: Fence | None) -> bool:
        """Time out every seat the window still waits on, in one write."""
        now = self.now_ms()
        stepped = self.steps.time_out(slot, version, now)
        if stepped is None:
            return False
        await self.commit(stepped, version, now, was_timed=True, fence=fence)
        return True

    async def sweep_outcomes(self) -> int:
        """Publish outcomes of finished or cancelled hands nobody published in time."""
        members = await self.slots.claim(self.slots.outcomes_key, self.now_ms(), LEASE_MS * 6)
        published = 0
        for member in members:
            table_id, hand_id = parse_outcome(member)
            try:
                version, slot = await self.slots.load(table_id)
                if (
                    slot is not None
                    and slot.hand_id == hand_id
                    and slot.status != "playing"
                    and not slot.outcome_published
                ):
                    log.warning("hand %s: publishing its outcome late", hand_id)
                    await self.publish_outcome(slot, version)
                    published += 1
            except Exception as exc:
                log.warning("outcome of hand %s: publishing failed (%r); will retry", hand_id, exc)
                await self.slots.due_again(
                    self.slots.outcomes_key, member, self.now_ms() + SWEEP_RETRY_MS
                )
                continue
            await self.slots.release(self.slots.outcomes_key, member)
        return published

    async def ensure_streams(self) -> None:
        await ensure_stream(self._js, subjects.RESULTS_STREAM, settings=self._settings)
        await ensure_stream(self._js, subjects.EVENTS_STREAM, settings=self._settings)
        await ensure_stream(self._js, subjects.RECORDS_STREAM, settings=self._settings)

    async def start(self) -> None:
        """Ensure the streams, sweep once, then run the timer loop in the background."""
        await self.ensure_streams()
        try:
            await self.sweep_outcomes()
        except Exception:
            log.warning("engine %s: first sweep failed; the loop retries", self.game, exc_info=True)
        self._stopping = False
        if self.ownership is not None:
            self.ownership.start()
        self._task = asyncio.create_task(self._background(), name=f"engine-{self.game}-timers")

    async def stop(self) -> None:
        # The flag as well as the cancel: Python 3.11's wait_for (inside nats-py) can
        # swallow a cancellation that lands as its future completes, and the loop then
        # ran on, so SIGTERM left the worker hanging until it was killed.
        self._stopping = True
        if self.ownership is not None:
            await self.ownership.stop()  # give every partition back: others take over now
        for task in (self._task, *self._retries):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._task = None

    async def _background(self) -> None:
        loop = asyncio.get_running_loop()
        next_sweep = loop.time() + self._sweep_every
        while not self._stopping:
            try:
                await self.fire_due_timers()
                if loop.time() >= next_sweep:
                    next_sweep = loop.time() + self._sweep_every
                    await self.sweep_outcomes()
            except Exception:
                log.warning("engine %s: timer loop failed; retrying", self.game, exc_info=True)
            await asyncio.sleep(self._tick)
