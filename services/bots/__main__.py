"""``python -m services.bots``: seat and play bots until SIGTERM (they resume elsewhere)."""

from __future__ import annotations

import asyncio
import logging

from kalaro.bus.runner import connect, redis_ready, serve
from kalaro.bus.store import connect_redis
from kalaro.logs import setup as setup_logs
from kalaro.settings import Settings, load_settings
from services.bots.service import SERVICE_NAME, Bots, build_service
from services.bots.settings import load_bot_settings

log = logging.getLogger("kalaro.bots")


async def run(settings: Settings) -> None:
    bot_settings = load_bot_settings(settings)
    redis = connect_redis(settings.redis_url, settings)
    try:
        nc = await connect(settings.nats_url, SERVICE_NAME)
        bots = Bots(nc, redis, bot_settings)
        log.info(
            "bots play through %s (think %d ms, %s policy, %d accounts)",
            bot_settings.gateway_url, bot_settings.think_ms, bot_settings.policy,
            bot_settings.pool_size,
        )  # fmt: skip
        # Accounts first, then the endpoint: until every bot exists nobody answers
        # bots.seat, and the lobby asks again (see Bots.prepare).
        await bots.prepare()
        await serve(
            build_service(bots),
            nc,
            health_port=settings.health_port,
            health_host=settings.health_host,
            checks={"redis": redis_ready(redis)},
            on_start=bots.start,
            on_stop=bots.stop,
        )
    finally:
        await redis.aclose()


def main() -> None:
    setup_logs("bots")
    # The SDK's HTTP client logs every request at INFO: far too chatty for a bot.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    asyncio.run(run(load_settings()))


if __name__ == "__main__":
    main()
