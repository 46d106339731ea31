"""Ratings from the hand records: a durable consumer on the RECORDS stream (the one
history stores), ``ranked-records``, its own cursor beside history's.

Each record is applied in one SQL transaction with its "rated" mark
(:meth:`~services.ranked.store.RankedStore.apply_hand`) and acknowledged only after
the commit: a crash before the ack redelivers it and the mark makes the repeat change
nothing; a database that is down gets the record nak'ed and delivered again. Records
that are not rateable (:func:`services.ranked.ratings.unrated_reason`: practice,
private, ordinary public tables, voided, bots) are acknowledged untouched. A hand is
rated as soon as the engine publishes its record: within a fetch (about a second).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from nats.aio.client import Client as NATS

from kalaro.bus.jetstream import DurableConsumer, ensure_stream
from kalaro.proto import subjects
from kalaro.proto.history import StoredHand
from kalaro.settings import Settings
from services.ranked.store import RankedStore

log = logging.getLogger("kalaro.ranked")


def rate_records(
    store: RankedStore, clock: Callable[[], float] = time.time
) -> Callable[[StoredHand], Awaitable[None]]:
    async def handle(message: StoredHand) -> None:
        changes = await store.apply_hand(message.record, int(clock() * 1000))
        if changes:
            log.info(
                "rated %s hand %s: %s",
                message.record.game,
                message.record.hand_id,
                ", ".join(f"{c.user_id} {c.change:+d}" for c in changes),
            )

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
    consumer = DurableConsumer(
        nc,
        stream=subjects.RECORDS_STREAM,
        subject=subject,
        durable=durable,
        message_type=StoredHand,
        handler=rate_records(store, clock),
        batch=32,
    )
    await consumer.start()
    return consumer
