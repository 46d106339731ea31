"""The engine worker: runs hands of one game type, statelessly, on NATS and Redis.

Every request loads the table's slot from Redis (one EVALSHA), applies the game's pure
rules through the pure step (:mod:`services.engine.step`), writes the slot back by
compare-and-set on its version and then publishes the move's client frames
(:mod:`services.engine.writer`) as one message on ``table.<id>.frames``: each seat's
frame, and the audience's while someone watches; each gateway sends a socket only its
own seat's part. The game's views and ``event_for`` hide concealed cards from everyone
else.

The worker is built in layers, one module each: outcome publishing
(:mod:`~services.engine.outcomes`), writes (:mod:`~services.engine.writer`), the timer
loop and outcome sweeper (:mod:`~services.engine.timers`), and here the request
handlers. Redis (:mod:`~services.engine.slots`) is the only truth: a replica keeps
nothing another one needs. The clock is one injected callable (``now_ms``) so tests
can drive time.

With ``owned=True`` (what ``python -m services.engine`` runs) a replica serves a
table's requests only while it owns the table's partition
(:mod:`~services.engine.ownership`): on ``engine.<game>.<request>.<partition>``, each
write fenced by its lease; the plain ``engine.<game>.<request>`` subjects forward to the
owner. Without it (tests' workers) every replica serves every partition.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Literal

from msgspec.structs import replace
from nats.aio.client import Client as NATS

from kalaro.bus import Service, ServiceError, request
from kalaro.games.base import IllegalAction
from kalaro.proto import endpoints, subjects
from kalaro.proto import errors as codes
from kalaro.proto.engine import (
    Act,
    Acted,
    CancelHand,
    GetHandOutcome,
    GetHandRecord,
    GetView,
    HandCancelled,
    HandOutcomeReport,
    HandRecord,
    HandStarted,
    ListMyHands,
    MyHands,
    StartHand,
)
from kalaro.proto.ws import HandView
from kalaro.records import summary
from kalaro.settings import Settings
from services.engine.hand import Slot, hand_record
from services.engine.outcomes import OUTCOME_GRACE_MS, RecordNotPublished
from services.engine.ownership import LEASE_MS, Ownership
from services.engine.slots import SlotStore, StaleVersion, deadline_member
from services.engine.step import Steps, seat_of
from services.engine.stored import stored_record
from services.engine.timers import SWEEP_SECONDS, TICK_SECONDS, Handler, TimerLoop

log = logging.getLogger("kalaro.engine")

#: How long a StartHand waits for the previous hand's outcome to be published (a NATS
#: leader election takes up to ~6 s), within the lobby's 10 s wait for the engine.
START_WAIT_SECONDS = 7.0
#: How long a request forwarded to a table's owner may take (a StartHand waits up to
#: START_WAIT_SECONDS).
FORWARD_TIMEOUT_SECONDS = START_WAIT_SECONDS + 3.0
#: The most hands one page of a player's hand history may ask for.
MAX_MY_HANDS = 100


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def _stale(expected: int, current: int) -> ServiceError:
    return ServiceError(
        codes.STALE_VERSION, f"the hand is at version {current}, not {expected}; resync and retry"
    )


class EngineWorker(TimerLoop):
    """One game's hands: request handlers as plain async methods, plus the timer loop.

    ``namespace`` prefixes the worker's Redis keys (tests share one redis-server).
    """

    def __init__(
        self,
        game: str,
        nc: NATS,
        redis: Any,
        *,
        now_ms: Callable[[], int] = wall_clock_ms,
        namespace: str = "",
        tick_seconds: float = TICK_SECONDS,
        sweep_seconds: float = SWEEP_SECONDS,
        settings: Settings | None = None,
        audience: Literal["watched", "always"] = "watched",
        owned: bool = False,
        lease_ms: int = LEASE_MS,
    ) -> None:
        self.game = game
        # "watched": the audience view only while a gateway marks the table as watched
        # (``subjects.table_audience_key``); "always" for tests that listen on NATS alone.
        self._audience_always = audience == "always"
        self._audience_prefix = namespace
        self._settings = settings
        self.steps = Steps(game)
        self.now_ms = now_ms
        self.slots = SlotStore(redis, game, namespace)
        self._nc = nc
        self._js = nc.jetstream()
        self._tick = tick_seconds
        self._sweep_every = sweep_seconds
        self._task = None
        self._stopping = False
        self._known = {}
        self._retries = set()
        self._partitions: dict[int, Service] = {}
        self.ownership = (
            Ownership(
                redis,
                game,
                on_acquired=self._serve_partition,
                on_released=self._leave_partition,
                namespace=namespace,
                lease_ms=lease_ms,
            )
            if owned
            else None
        )

    # --- requests ---------------------------------------------------------------------

    async def start_hand(self, msg: StartHand) -> HandStarted:
        """Deal a new hand at the table; a repeat of the same hand id changes nothing."""
        fresh, state = self.steps.deal(msg)
        fence = self._fence_of(msg.table_id)
        for _ in range(8):
            version, slot = await self.slots.load(msg.table_id)
            if slot is not None:
                if slot.hand_id == msg.hand_id:
                    if slot.status == "cancelled":
                        raise ServiceError(codes.CONFLICT, f"hand {msg.hand_id} was cancelled")
                    return HandStarted(hand_id=msg.hand_id, version=version)
                if slot.status == "playing":
                    raise ServiceError(
                        codes.CONFLICT,
                        f"hand {slot.hand_id} is still being played at table {msg.table_id}",
                    )
                if not slot.outcome_published:
                    # Never overwrite a settlement nobody has sent yet. The table has moved
                    # on, so the old hand's result frame would only confuse its sockets.
                    await self._publish_outcome_within(slot, version, START_WAIT_SECONDS)
                    continue
            now = self.now_ms()
            stepped = self.steps.advance(fresh, version, state, [], (), now)
            try:
                new_version = await self._commit(
                    stepped, version, now, was_timed=False, fence=fence
                )
            except StaleVersion:
                continue  # a racing StartHand (or the previous hand's marking) went first
            return HandStarted(hand_id=msg.hand_id, version=new_version)
        raise ServiceError(codes.CONFLICT, f"table {msg.table_id} is too busy; retry")

    async def act(self, msg: Act) -> Acted:
        """Apply one player's move made against ``msg.version``; nothing changes on error."""
        fence = self._fence_of(msg.table_id)
        known = self._known.get(msg.table_id)
        if known is not None and known[0] == msg.version:
            version, slot, state = known  # the write below still checks the version in Redis
        else:
            version, slot = await self._load(msg.table_id)
            state = None
        if version != msg.version:
            raise _stale(msg.version, version)
        now = self.now_ms()
        try:
            stepped = self.steps.step(slot, version, msg.user_id, bytes(msg.action), now, state)
        except IllegalAction as exc:
            if known is not None and self._known.pop(msg.table_id, None) is not None:
                # Judged on what this worker last wrote: make sure that is still the hand
                # (another replica may have moved it on) before calling the move illegal.
                return await self.act(msg)
            raise ServiceError(exc.code, exc.message) from None
        was_timed = slot.deadline_ms is not None
        try:
            new_version = await self._commit(
                stepped, version, now, was_timed=was_timed, fence=fence
            )
        except StaleVersion as exc:
            self._known.pop(msg.table_id, None)
            raise _stale(msg.version, exc.current) from None
        return Acted(hand_id=slot.hand_id, version=new_version)

    async def get_view(self, msg: GetView) -> HandView:
        """A full view: the caller's seat if seated, else the audience's."""
        version, slot = await self._load(msg.table_id)
        if not slot.state:
            raise ServiceError(codes.NOT_FOUND, f"no hand at table {msg.table_id}")
        seat = seat_of(slot, msg.user_id) if msg.user_id is not None else None
        return self.steps.view(slot, version, seat)

    async def get_record(self, msg: GetHandRecord) -> HandRecord:
        """A finished hand's record while Redis keeps it (an hour once history has it,
        else 7 days): what ``kalaro verify`` checks. The gateway asks history first."""
        record = await self.slots.load_record(msg.hand_id)
        if record is None:
            raise ServiceError(codes.NOT_FOUND, f"no finished hand {msg.hand_id} (or it expired)")
        return record

    async def my_hands(self, msg: ListMyHands) -> MyHands:
        """A player's finished hands of this game that history has not stored yet (it
        takes stored ones out of the index), newest first."""
        if not 1 <= msg.limit <= MAX_MY_HANDS:
            raise ServiceError(codes.BAD_REQUEST, f"limit must be 1 to {MAX_MY_HANDS}")
        found = await self.slots.player_hands(msg.user_id, msg.before_ms, msg.limit)
        return MyHands(hands=tuple(summary(r, msg.user_id, ms) for ms, r in found))

    async def outcome(self, msg: GetHandOutcome) -> HandOutcomeReport:
        """What became of a hand, for the wallet's reconciler (read only).

        A finished hand is answered from its record (Redis's copy, else history's, kept
        for good), so a settlement lost on its way to the wallet can still be applied
        from here. "unknown" (the wallet may release the holds) only when history says
        it has no such hand: history not answering is ``unavailable``.
        """
        _, slot = await self.slots.load(msg.table_id)
        if slot is not None and slot.hand_id == msg.hand_id and slot.status != "finished":
            return HandOutcomeReport(hand_id=msg.hand_id, status=slot.status)
        record = await self.slots.load_record(msg.hand_id)
        if record is None and slot is not None and slot.hand_id == msg.hand_id:
            record = hand_record(slot)  # finished a moment ago; its record is being saved
        if record is None:
            record = await stored_record(self._nc, msg.hand_id)
        if record is None:
            return HandOutcomeReport(hand_id=msg.hand_id, status="unknown")
        if record.voided:
            return HandOutcomeReport(hand_id=msg.hand_id, status="cancelled")
        return HandOutcomeReport(
            hand_id=msg.hand_id,
            status="finished",
            players=tuple(p.user_id for p in record.players),
            payments=record.payments,
        )

    async def cancel(self, msg: CancelHand) -> HandCancelled:
        """Void the hand (no credits move), unless it has finished. Idempotent.

        This compare-and-set is the one place a hand's outcome is decided: whichever
        of the last move and the cancel writes first wins, and only that outcome (a
        settlement or a void, under the hand id) is ever published to the wallet.
        ``voided=False`` means the hand finished and is being settled. A ``conflict``
        means the table is busy with another hand: ask again later.
        """
        fence = self._fence_of(msg.table_id)
        for _ in range(8):
            version, slot = await self.slots.load(msg.table_id)
            if slot is None or slot.hand_id != msg.hand_id:
                if slot is not None and (slot.status == "playing" or not slot.outcome_published):
                    raise ServiceError(
                        codes.CONFLICT,
                        f"table {msg.table_id} is at hand {slot.hand_id}, not {msg.hand_id}",
                    )
                if await self.slots.has_record(msg.hand_id):
                    return HandCancelled(hand_id=msg.hand_id, voided=False)  # finished: settled
                decided = await self._decided_in_history(msg.hand_id)
                if decided is not None:
                    return decided
                # Never seen here: a StartHand for it may still be on its way (the lobby
                # timed out). Leave a tombstone so it can never start, and void the holds.
                cancelled = Slot(
                    table_id=msg.table_id, hand_id=msg.hand_id, game=self.game, status="cancelled"
                )
            elif slot.status == "finished":
                return HandCancelled(hand_id=msg.hand_id, voided=False)
            elif slot.status == "cancelled":
                # Already voided. If its VoidHand is not out yet, the worker that cancelled
                # is sending it right now, or the sweeper will: sending it here too would
                # only repeat it.
                return HandCancelled(hand_id=msg.hand_id, voided=True)
            else:
                cancelled = replace(slot, status="cancelled", deadline_ms=None, timer_window="")
            drop = (
                deadline_member(slot.table_id, slot.hand_id, version)
                if slot is not None and slot.deadline_ms is not None
                else ""
            )
            try:
                new_version = (
                    await self.slots.save(
                        cancelled,
                        version,
                        drop_deadline=drop,
                        outcome="add",
                        outcome_due_ms=self.now_ms() + OUTCOME_GRACE_MS,
                        fence=fence,
                    )
                ).version
            except StaleVersion:
                continue
            try:
                await self._publish_outcome(cancelled, new_version)
            except RecordNotPublished as exc:
                # The void is out: the cancel stands. Its slot is left unmarked, so the
                # sweeper publishes the outcome again, record included (JetStream drops
                # the void's repeat).
                log.warning("%s (%r); the sweeper will", exc, exc.__cause__)
            return HandCancelled(hand_id=msg.hand_id, voided=True)
        raise ServiceError(codes.CONFLICT, f"table {msg.table_id} is too busy; retry")

    async def _decided_in_history(self, hand_id: str) -> HandCancelled | None:
        """A hand whose Redis copy is gone (history stored it over an hour ago), as
        history answers it; None: history has no such hand, or does not answer. Then
        the caller voids it: right for a hand never started here, and a settled hand's
        late void is refused by the wallet (one outcome per hand)."""
        try:
            record = await stored_record(self._nc, hand_id)
        except ServiceError as exc:
            log.warning("hand %s: %s; cancelling it as never started here", hand_id, exc.message)
            return None
        return None if record is None else HandCancelled(hand_id=hand_id, voided=record.voided)

    # --- routing: who serves which subject -----------------------------------------

    def _table_routes(self) -> list[tuple[endpoints.Endpoint[Any, Any], Handler]]:
        """The requests about one table: served by its partition's owner."""
        game = self.game
        return [
            (endpoints.engine_start(game), self.start_hand),
            (endpoints.engine_act(game), self.act),
            (endpoints.engine_view(game), self.get_view),
            (endpoints.engine_cancel(game), self.cancel),
            (endpoints.engine_outcome(game), self.outcome),
        ]

    def build_service(self) -> Service:
        """The worker's endpoints on the queue group ``engine-<game>``. With ownership
        the per-table ones forward to the owner (one hop more, for callers that do not
        route themselves); without, this replica serves every partition's subjects."""
        service = Service(f"engine-{self.game}")
        for endpoint, handler in self._table_routes():
            if self.ownership is not None:
                service.add(endpoint, self._forwarder(endpoint))
            else:
                service.add(endpoint, handler)
                service.add(endpoints.at_partition(endpoint, "*"), handler)
        service.add(endpoints.engine_record(self.game), self.get_record)
        service.add(endpoints.engine_my_hands(self.game), self.my_hands)
        return service

    def _forwarder(self, endpoint: endpoints.Endpoint[Any, Any]) -> Handler:
        async def forward(msg: Any) -> Any:
            # A refusal comes back as a RemoteError, answered with the owner's code.
            owner = endpoints.to_owner(endpoint, msg.table_id)
            return await request(self._nc, owner, msg, timeout=FORWARD_TIMEOUT_SECONDS)

        return forward

    async def _serve_partition(self, partition: int) -> None:
        """Subscribe to the partition's subjects (its lease is ours). No queue group: a
        former owner paused past its lease still holds its subscription, and must not
        take requests away from the new one (it answers late, and is fenced)."""
        service = Service(f"engine-{self.game}", queue=False)
        for endpoint, handler in self._table_routes():
            service.add(
                endpoints.at_partition(endpoint, partition),
                self._guarded(handler),
                label=endpoint.subject,
            )
        await service.start(self._nc)
        self._partitions[partition] = service

    async def _leave_partition(self, partition: int) -> None:
        """Unsubscribe (letting requests in flight finish) and forget its tables: a
        next owner may move them on, so nothing cached here may be trusted again."""
        service = self._partitions.pop(partition, None)
        if service is not None:
            await service.stop(timeout=2.0)
        for table_id in [t for t in self._known if subjects.partition_of(t) == partition]:
            del self._known[table_id]


__all__ = ["EngineWorker", "wall_clock_ms"]
