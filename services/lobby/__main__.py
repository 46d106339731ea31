"""``python -m services.lobby``: connect NATS and Redis, serve the lobby until SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from kalaro.bus.jetstream import DurableConsumer
from kalaro.bus.runner import connect, redis_ready, run_until_stopped, serve, streams_ready
from kalaro.bus.store import connect_redis
from kalaro.logs import setup as setup_logs
from kalaro.proto import subjects
from kalaro.settings import Settings, load_settings
from services.lobby.service import SERVICE_NAME, build_service, start_hands_consumer
from services.lobby.tables import Lobby

log = logging.getLogger("kalaro.lobby")

#: How often a replica looks for idle practice tables (every replica may; ending one
#: is a compare-and-set, so two replicas never both do it).
PRACTICE_SWEEP_SECONDS = 60.0
#: How often a replica asks the engines again about cancels they did not confirm.
CANCEL_RETRY_SECONDS = 5.0


async def sweep(
    lobby: Lobby,
    *,
    practice_every: float = PRACTICE_SWEEP_SECONDS,
    cancels_every: float = CANCEL_RETRY_SECONDS,
) -> None:
    """Until cancelled: retry unconfirmed hand cancels (:meth:`Lobby.retry_cancels`),
    rescue deals a replica died in (:meth:`Lobby.rescue_stale_deals`),
    downgrade presence whose time is up (:meth:`Lobby.sweep_presence`: reconnecting →
    offline, gateways gone silent forgotten) and end idle practice tables
    (:meth:`Lobby.end_idle_practice`)."""
    loop = asyncio.get_running_loop()
    next_practice = loop.time() + practice_every
    while True:
        await asyncio.sleep(cancels_every)
        try:
            await lobby.retry_cancels()
        except Exception:
            log.warning("retrying hand cancels failed; retrying", exc_info=True)
        try:
            await lobby.rescue_stale_deals()
        except Exception:
            log.warning("rescuing interrupted deals failed; retrying", exc_info=True)
        try:
            await lobby.sweep_presence()
        except Exception:
            log.warning("sweeping presence failed; retrying", exc_info=True)
        if loop.time() < next_practice:
            continue
        next_practice = loop.time() + practice_every
        try:
            await lobby.end_idle_practice()
        except Exception:
            log.warning("sweeping idle practice tables failed; retrying", exc_info=True)


async def run(settings: Settings) -> None:
    redis = connect_redis(settings.redis_url, settings)
    try:
        nc = await connect(settings.nats_url, SERVICE_NAME)
        lobby = Lobby(
            nc,
            redis,
            practice_idle_seconds=settings.practice_idle_minutes * 60,
            practice_per_player=settings.practice_tables_per_player,
            presence_grace_seconds=settings.presence_grace_seconds,
            presence_refresh_seconds=settings.presence_refresh_seconds,
        )
        consumers: list[DurableConsumer] = []
        sweepers: list[asyncio.Task[None]] = []

        async def on_start() -> None:
            consumers.append(await start_hands_consumer(nc, lobby, settings=settings))
            sweepers.append(asyncio.create_task(sweep(lobby)))

        async def on_stop() -> None:
            # After requests stop and before NATS drains: no event is left half-applied.
            for task in sweepers:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            for consumer in consumers:
                await consumer.stop()

        await serve(
            build_service(lobby),
            nc,
            health_port=settings.health_port,
            health_host=settings.health_host,
            checks={
                "redis": redis_ready(redis),
                "jetstream": streams_ready(nc, [subjects.EVENTS_STREAM], settings),
            },
            on_start=on_start,
            on_stop=on_stop,
        )
    finally:
        await redis.aclose()


def main() -> None:
    setup_logs("lobby")
    run_until_stopped(run(load_settings()))


if __name__ == "__main__":
    main()
