"""The lobby on the bus: one endpoint per ``lobby.*`` subject, and the hands consumer.

Handlers are the :class:`~services.lobby.tables.Lobby` methods themselves; decoding,
typed errors, metrics and draining come from :class:`kalaro.bus.Service`. Finished
hands arrive on the durable EVENTS stream so none is missed while the lobby is down.
"""

from __future__ import annotations

from nats.aio.client import Client as NATS

from kalaro.bus import Service
from kalaro.bus.jetstream import DurableConsumer, ensure_stream
from kalaro.proto import endpoints, subjects
from kalaro.proto.lobby import (
    HandFinished,
)
from kalaro.settings import Settings
from services.lobby.tables import Lobby

SERVICE_NAME = "lobby"


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
        await lobby.hand_finished(event)

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
