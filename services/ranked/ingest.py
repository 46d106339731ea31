"""Ratings from the hand records: a durable consumer on the RECORDS stream (the one
history stores), ``ranked-records``, its own cursor beside history's.

Each fetch (up to 64 records) is applied in one SQL transaction with the hands'
"rated" marks (:meth:`~services.ranked.store.RankedStore.apply_hands`) and
acknowledged only after the commit: a crash before the ack redelivers them and the
marks make the repeat change nothing; a database that is down gets them nak'ed and
delivered again. Records that are not rateable
(:func:`services.ranked.ratings.unrated_reason`: practice, private, ordinary public
tables, voided, bots) are acknowledged untouched. A hand is rated as soon as the engine
publishes its record, within a fetch (about a second). Rated one fetch per transaction,
~1,400 hands/s on SQLite and ~1,000 on PostgreSQL on the 2-core dev box (a scratch run
of 2,000 queued records), well above 10× the paced table benchmark's ~45 hands/s.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from nats.aio.client import Client as NATS

from kalaro.bus.jetstream import DurableConsumer, ensure_stream
from kalaro.proto import subjects
from kalaro.proto.history import StoredHand
from kalaro.settings import Settings
from services.ranked.ratings import RatingChange
from services.ranked.store import RankedStore

log = logging.getLogger("kalaro.ranked")


#: The longest pause of ingest after failed batches (below the stop grace period).
MAX_PAUSE_SECONDS = 8.0


def _log_changes(changes: tuple[RatingChange, ...]) -> None:
    if changes:
        first = changes[0]
        moved = ", ".join(f"{c.user_id} {c.change:+d}" for c in changes)
        log.info("rated %s hand %s: %s", first.game, first.hand_id, moved)


def rate_batches(
    store: RankedStore, clock: Callable[[], float] = time.time
) -> Callable[[list[StoredHand]], Awaitable[list[BaseException | None]]]:
    """The batch handler: a whole fetch rated in one transaction (in the order the
    stream holds it). If that fails, each record is tried alone, so one record that
    cannot be rated holds up only itself; a database that is down makes every one fail
    (all are redelivered) and pauses the next try."""
    failures = 0

    async def handle(batch: list[StoredHand]) -> list[BaseException | None]:
        nonlocal failures
        now_ms = int(clock() * 1000)
        try:
            for changes in await store.apply_hands([m.record for m in batch], now_ms):
                _log_changes(changes)
            failures = 0
            return [None] * len(batch)
        except Exception:
            log.warning("rating a batch of %d failed; one at a time", len(batch), exc_info=True)
        outcomes: list[BaseException | None] = []
        for message in batch:
            try:
                _log_changes(await store.apply_hand(message.record, now_ms))
                outcomes.append(None)
            except Exception as exc:
                outcomes.append(exc)
        if all(o is not None for o in outcomes):
            failures += 1
            pause = min(MAX_PAUSE_SECONDS, 0.25 * 2**failures)
            log.warning("rating %d hands failed; again in %.1fs", len(batch), pause)
            await asyncio.sleep(pause)
        else:
            failures = 0
        return outcomes

    return handle


async def start_ratings_consumer(
    nc: NATS,
    store: RankedStore,
    settings: Settings,
    *,
    durable: str = subjects.RANKED_RECORDS_CONSUMER,
    subject: str = subjects.RECORDS_SUBJECTS,
    clock: Callable[[], float] = time.time,
) -> DurableConsumer:
    """Ensure the RECORDS stream and rate what it carries. ``durable`` and ``subject``
    are parameters only so tests sharing one nats-server keep apart."""
    await ensure_stream(nc.jetstream(), subjects.RECORDS_STREAM, settings=settings)
    handle = rate_batches(store, clock)

    async def single(message: StoredHand) -> None:
        outcome = (await handle([message]))[0]
        if outcome is not None:
            raise outcome

    consumer = DurableConsumer(
        nc,
        stream=subjects.RECORDS_STREAM,
        subject=subject,
        durable=durable,
        message_type=StoredHand,
        handler=single,
        batch_handler=handle,
        batch=64,
    )
    await consumer.start()
    return consumer
