"""The lobby's hands consumer: finished hands arrive on the durable EVENTS stream so
none is missed while the lobby is down (its endpoints are bound in
:mod:`services.lobby.bootstrap`).
"""

from __future__ import annotations

from nats.aio.client import Client as NATS

from kalaro.bus.jetstream import DurableConsumer, ensure_stream
from kalaro.proto import subjects
from kalaro.proto.lobby import (
    HandFinished,
)
from kalaro.settings import Settings
from services.lobby import handlers
from services.lobby.tables import Lobby

SERVICE_NAME = "lobby"


async def start_hands_consumer(
    nc: NATS,
    lobby: Lobby,
    *,
    durable: str = subjects.LOBBY_HANDS_CONSUMER,
    settings: Settings | None = None,
) -> DurableConsumer:
    """Ensure the EVENTS stream, then apply every ``HandFinished`` to its table.

    ``durable`` is a parameter only so tests sharing one nats-server keep their
    consumers apart; the service uses the default (one consumer shared by replicas).
    """
    await ensure_stream(nc.jetstream(), subjects.EVENTS_STREAM, settings=settings)

    async def finished(event: HandFinished) -> None:
        await handlers.hand_finished(event, lobby)

    consumer = DurableConsumer(
        nc,
        stream=subjects.EVENTS_STREAM,
        subject=subjects.HAND_FINISHED,
        durable=durable,
        message_type=HandFinished,
        handler=finished,
    )
    await consumer.start()
    return consumer
