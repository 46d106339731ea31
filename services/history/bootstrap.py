"""History's one bootstrap: migrate, build its deps, bind its endpoints, and run the
RECORDS consumer, the Redis import, the retention prune and the stats backfill beside
them (``python -m services.history`` runs it)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from nats.aio.client import Client as NATS
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import Route, Service, route
from kalaro.bus.jetstream import DurableConsumer
from kalaro.bus.redislink import RedisLink
from kalaro.bus.runner import Running, database_ready, redis_ready, streams_ready
from kalaro.bus.store import connect_redis
from kalaro.proto import endpoints, subjects
from kalaro.settings import Settings
from kalaro.sql import create_engine
from services.history import handlers as h
from services.history.handlers import HistoryDeps, history_deps
from services.history.redis_import import import_from_redis
from services.history.retention import prune_daily
from services.history.schema import migrate_history
from services.history.service import SERVICE_NAME, start_consumer
from services.history.stats import backfill

log = logging.getLogger("kalaro.history")

T = TypeVar("T")

ROUTES: list[Route[HistoryDeps]] = [
    route(endpoints.HISTORY_LIST_HANDS, h.list_hands),
    route(endpoints.HISTORY_GET_HAND, h.get_hand),
    route(endpoints.HISTORY_EXPORT_HANDS, h.export_hands),
    route(endpoints.HISTORY_PLAYER_STATS, h.player_stats),
]


def build_service(deps: HistoryDeps) -> Service:
    """History's read endpoints, served on the ``history`` queue group."""
    return Service(SERVICE_NAME).bind(ROUTES, deps)


async def until_done(what: str, work: Callable[[], Awaitable[T]]) -> T:
    """``work`` retried (backing off to 30 s) until it completes: Redis or SQL may be
    down at start."""
    attempt = 0
    while True:
        try:
            return await work()
        except Exception:
            attempt += 1
            log.warning("%s failed (attempt %d); retrying", what, attempt, exc_info=True)
            await asyncio.sleep(min(30.0, 0.5 * 2**attempt))


async def _import(engine: AsyncEngine, redis: RedisLink) -> None:
    await until_done("Redis import", lambda: import_from_redis(engine, redis))


async def backfill_stats(engine: AsyncEngine) -> None:
    """The stats of rows stored before revision 0002; meanwhile the stats lack those
    rows, new hands count at once."""
    filled = await until_done("stats backfill", lambda: backfill(engine))
    log.info("stats backfill done: %d rows filled", filled)


async def bootstrap(settings: Settings, nc: NATS, resources: contextlib.AsyncExitStack) -> Running:
    engine = create_engine(settings.database_url)
    resources.push_async_callback(engine.dispose)
    redis = connect_redis(settings.redis_url, settings)
    resources.push_async_callback(redis.aclose)
    revision = await migrate_history(engine)
    log.info("history schema at revision %s on %s", revision, engine.url.render_as_string())
    consumers: list[DurableConsumer] = []

    async def start() -> None:
        consumers.append(await start_consumer(nc, engine, settings, redis))

    async def stop() -> None:
        for consumer in consumers:
            await consumer.stop()

    return Running(
        build_service(history_deps(engine)),
        checks={
            "database": database_ready(engine),
            "redis": redis_ready(redis),
            "jetstream": streams_ready(nc, [subjects.RECORDS_STREAM], settings),
        },
        on_start=[start],
        background=[
            lambda: _import(engine, redis),
            lambda: prune_daily(engine, settings.history_retention_days),
            lambda: backfill_stats(engine),
        ],
        on_stop=[stop],
    )
