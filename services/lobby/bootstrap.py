"""The lobby's one bootstrap: the :class:`~services.lobby.tables.Lobby` (its deps:
Redis, the bus, settings), every ``lobby.*`` endpoint bound to its handler, the hands
consumer and the sweeper (``python -m services.lobby`` runs it).

The lobby's handlers are the Lobby's methods (the deps is the object they are bound
to: ``lobby.sit(cmd)``), as the engine worker's are; the other services' are functions
``handle(cmd, deps)`` bound with :meth:`kalaro.bus.Service.bind`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from nats.aio.client import Client as NATS

from kalaro.bus import Service
from kalaro.bus.jetstream import DurableConsumer
from kalaro.bus.runner import Running, redis_ready, streams_ready
from kalaro.bus.store import connect_redis
from kalaro.proto import endpoints, subjects
from kalaro.proto.lobby import HandFinished
from kalaro.settings import Settings
from services.lobby.service import SERVICE_NAME, start_hands_consumer
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


def build_service(lobby: Lobby) -> Service:
    """The lobby's request/reply endpoints, served on the ``lobby`` queue group."""
    service = Service(SERVICE_NAME)
    service.add(endpoints.LOBBY_CREATE_TABLE, lobby.create_table)
    service.add(endpoints.LOBBY_LIST_TABLES, lobby.list_tables)
    service.add(endpoints.LOBBY_GET_TABLE, lobby.get_table)
    service.add(endpoints.LOBBY_SIT, lobby.sit)
    service.add(endpoints.LOBBY_LEAVE, lobby.leave)
    service.add(endpoints.LOBBY_LEAVE_AFTER_HAND, lobby.leave_after_hand)
    service.add(endpoints.LOBBY_SET_READY, lobby.set_ready)
    service.add(endpoints.LOBBY_REMOVE_PLAYER, lobby.remove_player)
    service.add(endpoints.LOBBY_ALLOW_BACK, lobby.allow_back)
    service.add(endpoints.LOBBY_INVITE_CODE, lobby.invite_code)
    service.add(endpoints.LOBBY_DEAL, lobby.deal)
    service.add(endpoints.LOBBY_END_TABLE, lobby.end_table)
    service.add(endpoints.LOBBY_CANCEL_TABLE, lobby.cancel_table)
    service.add(endpoints.LOBBY_SET_CHAT, lobby.set_chat)
    service.add(endpoints.LOBBY_SEND_CHAT, lobby.send_chat)
    service.add(endpoints.LOBBY_CREATE_PRACTICE, lobby.create_practice)
    service.add(endpoints.LOBBY_ADD_BOT, lobby.add_bot)
    service.add(endpoints.LOBBY_PRESENCE, lobby.report_presence)

    async def hand_finished(event: HandFinished) -> HandFinished:
        # The engine's direct copy of the stream's event (see the engine worker's
        # _deliver_directly): applied the same way, idempotently.
        await lobby.hand_finished(event)
        return event

    service.add(endpoints.LOBBY_HAND_FINISHED, hand_finished)
    return service


async def bootstrap(settings: Settings, nc: NATS, resources: contextlib.AsyncExitStack) -> Running:
    redis = connect_redis(settings.redis_url, settings)
    resources.push_async_callback(redis.aclose)
    lobby = Lobby(
        nc,
        redis,
        practice_idle_seconds=settings.practice_idle_minutes * 60,
        practice_per_player=settings.practice_tables_per_player,
        presence_grace_seconds=settings.presence_grace_seconds,
        presence_refresh_seconds=settings.presence_refresh_seconds,
    )
    consumers: list[DurableConsumer] = []

    async def start() -> None:
        consumers.append(await start_hands_consumer(nc, lobby, settings=settings))

    async def stop() -> None:
        for consumer in consumers:
            await consumer.stop()

    return Running(
        build_service(lobby),
        checks={
            "redis": redis_ready(redis),
            "jetstream": streams_ready(nc, [subjects.EVENTS_STREAM], settings),
        },
        on_start=[start],
        background=[lambda: sweep(lobby)],
        on_stop=[stop],
    )
