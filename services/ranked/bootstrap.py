"""Ranked's one bootstrap: migrate, build its deps, bind its endpoints, and run beside
them the ratings consumer (RECORDS), the matcher loop and the "seen from" notes
(``python -m services.ranked`` runs it)."""

from __future__ import annotations

import contextlib
import logging
import time

from nats.aio.client import Client as NATS
from nats.aio.msg import Msg

from kalaro.bus import Route, Service, route
from kalaro.bus.codec import decode
from kalaro.bus.jetstream import DurableConsumer
from kalaro.bus.runner import Running, database_ready, redis_ready, streams_ready
from kalaro.bus.store import connect_redis
from kalaro.proto import endpoints, subjects
from kalaro.proto import ranked as rk
from kalaro.settings import Settings
from kalaro.sql import create_engine
from services.ranked import handlers as h
from services.ranked.handlers import RankedDeps
from services.ranked.ingest import start_ratings_consumer
from services.ranked.matcher import Matcher
from services.ranked.names import NameCache
from services.ranked.queue import RankedQueue
from services.ranked.schema import migrate_ranked
from services.ranked.store import SqlRankedStore

log = logging.getLogger("kalaro.ranked")

SERVICE_NAME = "ranked"

ROUTES: list[Route[RankedDeps]] = [
    route(endpoints.RANKED_RATINGS, h.ratings),
    route(endpoints.RANKED_LEADERBOARD, h.leaderboard),
    route(endpoints.RANKED_QUEUE_JOIN, h.join_queue),
    route(endpoints.RANKED_QUEUE_LEAVE, h.leave_queue),
    route(endpoints.RANKED_QUEUE_STATUS, h.queue_status),
    route(endpoints.RANKED_STANDING, h.get_standing),
    route(endpoints.RANKED_FAIR_PLAY, h.fair_play),
    route(endpoints.RANKED_ADMIN_ACT, h.admin_act),
]


def build_service(deps: RankedDeps) -> Service:
    """Ranked's endpoints, served on the ``ranked`` queue group."""
    return Service(SERVICE_NAME).bind(ROUTES, deps)


async def listen_seen(nc: NATS, deps: RankedDeps, subject: str = subjects.RANKED_SEEN) -> object:
    """Record the gateway's "seen from" notes (one replica each: a queue group)."""

    async def on_seen(msg: Msg) -> None:
        try:
            note = decode(msg.data, rk.SeenFrom)
            await deps.queue.note_seen(
                note.user_id, deps.now_ms(), address=note.address, device_id=note.device_id
            )
        except Exception:
            log.warning("could not record a %s note", subject, exc_info=True)

    return await nc.subscribe(subject, queue=SERVICE_NAME, cb=on_seen)


async def bootstrap(settings: Settings, nc: NATS, resources: contextlib.AsyncExitStack) -> Running:
    engine = create_engine(settings.database_url)
    resources.push_async_callback(engine.dispose)
    redis = connect_redis(settings.redis_url, settings)
    resources.push_async_callback(redis.aclose)
    revision = await migrate_ranked(engine)
    log.info("ranked schema at revision %s", revision)
    store = SqlRankedStore(engine)
    queue = RankedQueue(redis)
    deps = RankedDeps(store=store, queue=queue, nc=nc, names=NameCache(nc), clock=time.time)
    matcher = Matcher(nc, queue)
    consumers: list[DurableConsumer] = []
    subscriptions: list[object] = []

    async def start() -> None:
        consumers.append(await start_ratings_consumer(nc, store, settings))
        subscriptions.append(await listen_seen(nc, deps))

    async def stop() -> None:
        for consumer in consumers:
            await consumer.stop()
        for sub in subscriptions:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()  # type: ignore[attr-defined]

    return Running(
        build_service(deps),
        checks={
            "database": database_ready(engine),
            "redis": redis_ready(redis),
            "jetstream": streams_ready(nc, [subjects.RECORDS_STREAM], settings),
        },
        on_start=[start],
        background=[matcher.run],
        on_stop=[stop],
    )
