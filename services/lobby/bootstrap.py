"""The lobby's one bootstrap: the :class:`~services.lobby.tables.Lobby` (its deps:
Redis, the bus, the clock, settings), every ``lobby.*`` endpoint bound to its handler
(:mod:`services.lobby.handlers`, ``handle(cmd, lobby)``), the hands consumer and the
sweeper (``python -m services.lobby`` runs it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from nats.aio.client import Client as NATS

from kalaro.bus import Route, Service, route
from kalaro.bus.jetstream import DurableConsumer
from kalaro.bus.runner import Running, redis_ready, streams_ready
from kalaro.bus.store import connect_redis
from kalaro.proto import endpoints, subjects
from kalaro.proto.lobby import HandFinished
from kalaro.settings import Settings
from services.lobby import handlers as h
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


async def hand_finished(event: HandFinished, lobby: Lobby) -> HandFinished:
    """The engine's direct copy of the stream's event (see the engine worker's
    _deliver_directly): applied the same way, idempotently, and echoed."""
    await h.hand_finished(event, lobby)
    return event


ROUTES: list[Route[Lobby]] = [
    route(endpoints.LOBBY_CREATE_TABLE, h.create_table),
    route(endpoints.LOBBY_LIST_TABLES, h.list_tables),
    route(endpoints.LOBBY_GET_TABLE, h.get_table),
    route(endpoints.LOBBY_SIT, h.sit),
    route(endpoints.LOBBY_LEAVE, h.leave),
    route(endpoints.LOBBY_LEAVE_AFTER_HAND, h.leave_after_hand),
    route(endpoints.LOBBY_SET_READY, h.set_ready),
    route(endpoints.LOBBY_REMOVE_PLAYER, h.remove_player),
    route(endpoints.LOBBY_ALLOW_BACK, h.allow_back),
    route(endpoints.LOBBY_INVITE_CODE, h.invite_code),
    route(endpoints.LOBBY_DEAL, h.deal),
    route(endpoints.LOBBY_END_TABLE, h.end_table),
    route(endpoints.LOBBY_CANCEL_TABLE, h.cancel_table),
    route(endpoints.LOBBY_SET_CHAT, h.set_chat),
    route(endpoints.LOBBY_SEND_CHAT, h.send_chat),
    route(endpoints.LOBBY_CREATE_PRACTICE, h.create_practice),
    route(endpoints.LOBBY_ADD_BOT, h.add_bot),
    route(endpoints.LOBBY_PRESENCE, h.report_presence),
    route(endpoints.LOBBY_HAND_FINISHED, hand_finished),
    # ranked play (issue 34)
    route(endpoints.LOBBY_OPEN_RANKED, h.open_ranked),
    route(endpoints.LOBBY_SET_MIN_RATING, h.set_min_rating),
]


def build_service(lobby: Lobby) -> Service:
    """The lobby's request/reply endpoints, served on the ``lobby`` queue group."""
    return Service(SERVICE_NAME).bind(ROUTES, lobby)


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
        background=[lambda: sweep(lobby), lobby.ranked.run_clocks],
        on_stop=[stop],
    )
