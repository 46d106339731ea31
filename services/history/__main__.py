"""``python -m services.history``: migrate its tables (Alembic), copy Redis's records,
then ingest and serve."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys

from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus.jetstream import DurableConsumer
from kalaro.bus.redislink import RedisLink
from kalaro.bus.runner import (
    connect,
    database_ready,
    redis_ready,
    run_until_stopped,
    serve,
    streams_ready,
)
from kalaro.bus.store import connect_redis
from kalaro.logs import setup as setup_logs
from kalaro.proto import subjects
from kalaro.settings import Settings, load_settings, production_problem
from kalaro.sql import create_engine
from services.history.redis_import import import_from_redis
from services.history.retention import prune_daily
from services.history.schema import migrate_history
from services.history.service import SERVICE_NAME, build_service, start_consumer
from services.history.stats import backfill

log = logging.getLogger("kalaro.history")


async def import_until_done(engine: AsyncEngine, redis: RedisLink) -> None:
    """The Redis import, retried until it completes (Redis or SQL may be down at start)."""
    attempt = 0
    while True:
        try:
            await import_from_redis(engine, redis)
            return
        except Exception:
            attempt += 1
            log.warning("Redis import failed (attempt %d); retrying", attempt, exc_info=True)
            await asyncio.sleep(min(30.0, 0.5 * 2**attempt))


async def backfill_until_done(engine: AsyncEngine) -> None:
    """The stats of rows stored before revision 0002, retried until done (SQL may be down);
    meanwhile the stats lack those rows, new hands count at once."""
    attempt = 0
    while True:
        try:
            filled = await backfill(engine)
            log.info("stats backfill done: %d rows filled", filled)
            return
        except Exception:
            attempt += 1
            log.warning("stats backfill failed (attempt %d); retrying", attempt, exc_info=True)
            await asyncio.sleep(min(30.0, 0.5 * 2**attempt))


async def run(settings: Settings) -> None:
    engine = create_engine(settings.database_url)
    redis = connect_redis(settings.redis_url, settings)
    try:
        nc = await connect(settings.nats_url, SERVICE_NAME)
        revision = await migrate_history(engine)
        log.info("history schema at revision %s on %s", revision, engine.url.render_as_string())
        service = build_service(engine)
        consumers: list[DurableConsumer] = []
        background: list[asyncio.Task[None]] = []

        async def on_start() -> None:
            consumers.append(await start_consumer(nc, engine, settings, redis))
            background.append(asyncio.create_task(import_until_done(engine, redis)))
            background.append(
                asyncio.create_task(prune_daily(engine, settings.history_retention_days))
            )
            background.append(asyncio.create_task(backfill_until_done(engine)))

        async def on_stop() -> None:
            for task in background:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            for consumer in consumers:
                await consumer.stop()

        checks = {
            "database": database_ready(engine),
            "redis": redis_ready(redis),
            "jetstream": streams_ready(nc, [subjects.RECORDS_STREAM], settings),
        }
        await serve(
            service,
            nc,
            health_port=settings.health_port,
            health_host=settings.health_host,
            checks=checks,
            on_start=on_start,
            on_stop=on_stop,
        )
    finally:
        await redis.aclose()
        await engine.dispose()


def main() -> int:
    setup_logs("history")
    settings = load_settings()
    problem = production_problem(settings)
    if problem is not None:
        print(f"history: {problem}", file=sys.stderr)
        return 2
    run_until_stopped(run(settings))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
