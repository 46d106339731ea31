"""The bots' one bootstrap: the :class:`~services.bots.service.Bots` pool (its deps:
Redis, the bus, the bot settings), its accounts, and ``bots.seat`` bound to its handler
(``python -m services.bots`` runs it). The handler is ``handlers.seat(cmd, bots)``."""

from __future__ import annotations

import contextlib
import logging

from nats.aio.client import Client as NATS

from kalaro.bus import Route, Service, route
from kalaro.bus.runner import Running, redis_ready
from kalaro.bus.store import connect_redis
from kalaro.proto import endpoints
from kalaro.settings import Settings
from services.bots import handlers
from services.bots.service import SERVICE_NAME, Bots
from services.bots.settings import load_bot_settings

log = logging.getLogger("kalaro.bots")

ROUTES: list[Route[Bots]] = [route(endpoints.BOTS_SEAT, handlers.seat)]


def build_service(bots: Bots) -> Service:
    """``bots.seat`` on the queue group ``bots``."""
    return Service(SERVICE_NAME).bind(ROUTES, bots)


async def bootstrap(settings: Settings, nc: NATS, resources: contextlib.AsyncExitStack) -> Running:
    bot_settings = load_bot_settings(settings)
    redis = connect_redis(settings.redis_url, settings)
    resources.push_async_callback(redis.aclose)
    bots = Bots(nc, redis, bot_settings)
    log.info(
        "bots play through %s (think %d ms, %s policy, %d accounts)",
        bot_settings.gateway_url, bot_settings.think_ms, bot_settings.policy,
        bot_settings.pool_size,
    )  # fmt: skip
    # Accounts first, then the endpoint: until every bot exists nobody answers
    # bots.seat, and the lobby asks again (see Bots.prepare).
    await bots.prepare()
    return Running(
        build_service(bots),
        checks={"redis": redis_ready(redis)},
        on_start=[bots.start],
        on_stop=[bots.stop],
    )
