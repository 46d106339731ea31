"""History's ingest: the RECORDS consumer (its read handlers are in
:mod:`services.history.handlers`, bound in :mod:`services.history.bootstrap`).

Ingest: a durable pull consumer on ``records.>``. Each fetch is stored in one SQL
transaction (multi-row ``INSERT ... ON CONFLICT DO NOTHING`` keyed by hand id) and only
then acknowledged, so a crash mid-batch redelivers it and the repeat inserts nothing;
SQL down: the batch is nak'ed and delivered again (JetStream keeps it meanwhile).
Once stored, the hand's Redis copy (``handrecord:<id>``) is cut to an hour and the
hand leaves its players' Redis indexes (``handsof:<game>:<user>``): Redis keeps live
state, history keeps the rest, so Redis does not grow with the hands played. Its
backlog is the runner's ``kalaro_consumer_pending`` gauge (every running consumer is sampled).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from nats.aio.client import Client as NATS
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus.jetstream import DurableConsumer, ensure_stream
from kalaro.bus.redislink import RedisLink
from kalaro.proto import subjects
from kalaro.proto.engine import HandRecord
from kalaro.proto.history import (
    StoredHand,
)
from kalaro.records import index_key, record_key
from kalaro.settings import Settings
from services.history import store

log = logging.getLogger("kalaro.history")

SERVICE_NAME = "history"

#: Once history has a hand, its Redis copy lives at most this long (the engine's
#: fallback for a moment's lag; the record itself is in SQL).
REDIS_COPY_TTL_MS = 3600 * 1000
#: The longest pause of ingest after failed batches (below the stop grace period).
MAX_PAUSE_SECONDS = 8.0


async def shorten_redis_copies(
    redis: RedisLink, namespace: str, records: Sequence[HandRecord]
) -> None:
    """Once ``records`` are committed in SQL: cut their Redis copies to
    :data:`REDIS_COPY_TTL_MS` (LT: never lengthen one) and take them out of their
    players' indexes (an index left empty is deleted by Redis), in one pipeline.

    Taking a hand out of the index right away loses no listing: the gateway reads the
    engines' indexes before history (``services.gateway.hand_source``), so a hand gone
    from an index was already in SQL when history is read. Best effort: a failure
    leaves the engine's own 7-day TTLs, and the next start's Redis import tries again.
    """
    commands: list[tuple[str | int, ...]] = []
    for record in records:
        commands.append(("PEXPIRE", record_key(namespace, record.hand_id), REDIS_COPY_TTL_MS, "LT"))
        for user_id in {p.user_id for p in record.players if not p.is_bot}:
            commands.append(("ZREM", index_key(namespace, record.game, user_id), record.hand_id))
    if not commands:
        return
    try:
        await redis.execute_many(commands)
    except Exception:
        log.warning("could not shorten %d Redis records' TTL", len(records), exc_info=True)


def _ingest(
    engine: AsyncEngine, redis: RedisLink | None, namespace: str
) -> Callable[[list[StoredHand]], Awaitable[list[BaseException | None]]]:
    """The batch handler: store the fetch (one transaction), then shorten the copies."""

    failures = 0  # batches failed in a row: the pause before the next try grows

    async def handle(batch: list[StoredHand]) -> list[BaseException | None]:
        nonlocal failures
        try:
            await store.store_hands(engine, batch)
        except Exception as exc:
            # SQL unreachable (or refusing): nothing is acked, the batch comes again;
            # pause first so a dead database is not hammered (/readyz says why).
            failures += 1
            pause = min(MAX_PAUSE_SECONDS, 0.25 * 2**failures)
            log.warning("storing %d hands failed (%r); again in %.1fs", len(batch), exc, pause)
            await asyncio.sleep(pause)
            return [exc] * len(batch)
        failures = 0
        if redis is not None:
            await shorten_redis_copies(redis, namespace, [s.record for s in batch])
        return [None] * len(batch)

    return handle


async def start_consumer(
    nc: NATS,
    engine: AsyncEngine,
    settings: Settings,
    redis: RedisLink | None,
    *,
    namespace: str = "",
    durable: str = subjects.HISTORY_RECORDS_CONSUMER,
    subject: str = subjects.RECORDS_SUBJECTS,
    batch: int = 64,
) -> DurableConsumer:
    """Ensure the RECORDS stream and start storing what it carries. ``durable``,
    ``subject`` and ``namespace`` are parameters only so tests sharing one nats-server
    and redis-server keep apart."""
    await ensure_stream(nc.jetstream(), subjects.RECORDS_STREAM, settings=settings)
    handle = _ingest(engine, redis, namespace)

    async def single(message: StoredHand) -> None:
        await handle([message])

    consumer = DurableConsumer(
        nc,
        stream=subjects.RECORDS_STREAM,
        subject=subject,
        durable=durable,
        message_type=StoredHand,
        handler=single,
        batch_handler=handle,
        batch=batch,
    )
    await consumer.start()
    return consumer
