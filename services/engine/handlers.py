"""The engine's request handlers, in the services' one shape ``handle(cmd, worker)``.

The deps is the :class:`~services.engine.worker.EngineWorker`: its slots in Redis (the
only truth), the pure steps, the clock, NATS and the ownership of partitions. Every
table's request loads the table's slot (or uses what this worker last wrote, checked
by the version), applies the game's pure rules through the step, and writes by
compare-and-set before publishing (:meth:`EngineWorker.commit`). The worker binds the
per-table ones on each partition it owns as it acquires it (:func:`table_routes`), and
the rest once (:func:`game_routes`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from msgspec.structs import replace

from kalaro.bus import Route, ServiceError, route
from kalaro.games.base import IllegalAction
from kalaro.proto import endpoints
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
from services.engine.hand import Slot, hand_record
from services.engine.outcomes import OUTCOME_GRACE_MS, RecordNotPublished
from services.engine.slots import StaleVersion, deadline_member
from services.engine.step import seat_of
from services.engine.stored import stored_record

if TYPE_CHECKING:
    from services.engine.worker import EngineWorker

log = logging.getLogger("kalaro.engine")

#: How long a StartHand waits for the previous hand's outcome to be published (a NATS
#: leader election takes up to ~6 s), within the lobby's 10 s wait for the engine.
START_WAIT_SECONDS = 7.0
#: The most hands one page of a player's hand history may ask for.
MAX_MY_HANDS = 100


def _stale(expected: int, current: int) -> ServiceError:
    return ServiceError(
        codes.STALE_VERSION, f"the hand is at version {current}, not {expected}; resync and retry"
    )


async def start_hand(msg: StartHand, worker: EngineWorker) -> HandStarted:
    """Deal a new hand at the table; a repeat of the same hand id changes nothing."""
    fresh, state = worker.steps.deal(msg)
    fence = worker.fence_of(msg.table_id)
    for _ in range(8):
        version, slot = await worker.slots.load(msg.table_id)
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
                await worker.publish_outcome_within(slot, version, START_WAIT_SECONDS)
                continue
        now = worker.now_ms()
        stepped = worker.steps.advance(fresh, version, state, [], (), now)
        try:
            new_version = await worker.commit(stepped, version, now, was_timed=False, fence=fence)
        except StaleVersion:
            continue  # a racing StartHand (or the previous hand's marking) went first
        return HandStarted(hand_id=msg.hand_id, version=new_version)
    raise ServiceError(codes.CONFLICT, f"table {msg.table_id} is too busy; retry")


async def act(msg: Act, worker: EngineWorker) -> Acted:
    """Apply one player's move made against ``msg.version``; nothing changes on error."""
    fence = worker.fence_of(msg.table_id)
    known = worker.known.get(msg.table_id)
    if known is not None and known[0] == msg.version:
        version, slot, state = known  # the write below still checks the version in Redis
    else:
        version, slot = await worker.load_hand(msg.table_id)
        state = None
    if version != msg.version:
        raise _stale(msg.version, version)
    now = worker.now_ms()
    try:
        stepped = worker.steps.step(slot, version, msg.user_id, bytes(msg.action), now, state)
    except IllegalAction as exc:
        if known is not None and worker.known.pop(msg.table_id, None) is not None:
            # Judged on what this worker last wrote: make sure that is still the hand
            # (another replica may have moved it on) before calling the move illegal.
            return await act(msg, worker)
        raise ServiceError(exc.code, exc.message) from None
    was_timed = slot.deadline_ms is not None
    try:
        new_version = await worker.commit(stepped, version, now, was_timed=was_timed, fence=fence)
    except StaleVersion as exc:
        worker.known.pop(msg.table_id, None)
        raise _stale(msg.version, exc.current) from None
    return Acted(hand_id=slot.hand_id, version=new_version)


async def get_view(msg: GetView, worker: EngineWorker) -> HandView:
    """A full view: the caller's seat if seated, else the audience's."""
    version, slot = await worker.load_hand(msg.table_id)
    if not slot.state:
        raise ServiceError(codes.NOT_FOUND, f"no hand at table {msg.table_id}")
    seat = seat_of(slot, msg.user_id) if msg.user_id is not None else None
    return worker.steps.view(slot, version, seat)


async def get_record(msg: GetHandRecord, worker: EngineWorker) -> HandRecord:
    """A finished hand's record while Redis keeps it (an hour once history has it,
    else 7 days): what ``kalaro verify`` checks. The gateway asks history first."""
    record = await worker.slots.load_record(msg.hand_id)
    if record is None:
        raise ServiceError(codes.NOT_FOUND, f"no finished hand {msg.hand_id} (or it expired)")
    return record


async def my_hands(msg: ListMyHands, worker: EngineWorker) -> MyHands:
    """A player's finished hands of this game that history has not stored yet (it
    takes stored ones out of the index), newest first."""
    if not 1 <= msg.limit <= MAX_MY_HANDS:
        raise ServiceError(codes.BAD_REQUEST, f"limit must be 1 to {MAX_MY_HANDS}")
    found = await worker.slots.player_hands(msg.user_id, msg.before_ms, msg.limit)
    return MyHands(hands=tuple(summary(r, msg.user_id, ms) for ms, r in found))


async def outcome(msg: GetHandOutcome, worker: EngineWorker) -> HandOutcomeReport:
    """What became of a hand, for the wallet's reconciler (read only).

    A finished hand is answered from its record (Redis's copy, else history's, kept
    for good), so a settlement lost on its way to the wallet can still be applied
    from here. "unknown" (the wallet may release the holds) only when history says
    it has no such hand: history not answering is ``unavailable``.
    """
    _, slot = await worker.slots.load(msg.table_id)
    if slot is not None and slot.hand_id == msg.hand_id and slot.status != "finished":
        return HandOutcomeReport(hand_id=msg.hand_id, status=slot.status)
    record = await worker.slots.load_record(msg.hand_id)
    if record is None and slot is not None and slot.hand_id == msg.hand_id:
        record = hand_record(slot)  # finished a moment ago; its record is being saved
    if record is None:
        record = await stored_record(worker.nc, msg.hand_id)
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


async def cancel(msg: CancelHand, worker: EngineWorker) -> HandCancelled:
    """Void the hand (no credits move), unless it has finished. Idempotent.

    This compare-and-set is the one place a hand's outcome is decided: whichever
    of the last move and the cancel writes first wins, and only that outcome (a
    settlement or a void, under the hand id) is ever published to the wallet.
    ``voided=False`` means the hand finished and is being settled. A ``conflict``
    means the table is busy with another hand: ask again later.
    """
    fence = worker.fence_of(msg.table_id)
    for _ in range(8):
        version, slot = await worker.slots.load(msg.table_id)
        if slot is None or slot.hand_id != msg.hand_id:
            if slot is not None and (slot.status == "playing" or not slot.outcome_published):
                raise ServiceError(
                    codes.CONFLICT,
                    f"table {msg.table_id} is at hand {slot.hand_id}, not {msg.hand_id}",
                )
            if await worker.slots.has_record(msg.hand_id):
                return HandCancelled(hand_id=msg.hand_id, voided=False)  # finished: settled
            decided = await _decided_in_history(worker, msg.hand_id)
            if decided is not None:
                return decided
            # Never seen here: a StartHand for it may still be on its way (the lobby
            # timed out). Leave a tombstone so it can never start, and void the holds.
            cancelled = Slot(
                table_id=msg.table_id, hand_id=msg.hand_id, game=worker.game, status="cancelled"
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
                await worker.slots.save(
                    cancelled,
                    version,
                    drop_deadline=drop,
                    outcome="add",
                    outcome_due_ms=worker.now_ms() + OUTCOME_GRACE_MS,
                    fence=fence,
                )
            ).version
        except StaleVersion:
            continue
        try:
            await worker.publish_outcome(cancelled, new_version)
        except RecordNotPublished as exc:
            # The void is out: the cancel stands. Its slot is left unmarked, so the
            # sweeper publishes the outcome again, record included (JetStream drops
            # the void's repeat).
            log.warning("%s (%r); the sweeper will", exc, exc.__cause__)
        return HandCancelled(hand_id=msg.hand_id, voided=True)
    raise ServiceError(codes.CONFLICT, f"table {msg.table_id} is too busy; retry")


async def _decided_in_history(worker: EngineWorker, hand_id: str) -> HandCancelled | None:
    """A hand whose Redis copy is gone (history stored it over an hour ago), as
    history answers it; None: history has no such hand, or does not answer. Then
    the caller voids it: right for a hand never started here, and a settled hand's
    late void is refused by the wallet (one outcome per hand)."""
    try:
        record = await stored_record(worker.nc, hand_id)
    except ServiceError as exc:
        log.warning("hand %s: %s; cancelling it as never started here", hand_id, exc.message)
        return None
    return None if record is None else HandCancelled(hand_id=hand_id, voided=record.voided)


def table_routes(game: str) -> list[Route[EngineWorker]]:
    """The requests about one table: served by its partition's owner."""
    return [
        route(endpoints.engine_start(game), start_hand),
        route(endpoints.engine_act(game), act),
        route(endpoints.engine_view(game), get_view),
        route(endpoints.engine_cancel(game), cancel),
        route(endpoints.engine_outcome(game), outcome),
    ]


def game_routes(game: str) -> list[Route[EngineWorker]]:
    """The requests about finished hands: any replica answers (from Redis)."""
    return [
        route(endpoints.engine_record(game), get_record),
        route(endpoints.engine_my_hands(game), my_hands),
    ]


__all__ = [
    "MAX_MY_HANDS",
    "START_WAIT_SECONDS",
    "act",
    "cancel",
    "game_routes",
    "get_record",
    "get_view",
    "my_hands",
    "outcome",
    "start_hand",
    "table_routes",
]
