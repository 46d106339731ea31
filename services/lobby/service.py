"""The lobby on the bus: one endpoint per ``lobby.*`` subject, and the hands consumer.

Handlers are the :class:`~services.lobby.tables.Lobby` methods themselves; decoding,
typed errors, metrics and draining come from :class:`kalaro.bus.Service`. Finished
hands arrive on the durable EVENTS stream so none is missed while the lobby is down.
"""

from __future__ import annotations

from nats.aio.client import Client as NATS

from kalaro.bus import Service
from kalaro.bus.jetstream import DurableConsumer, ensure_stream
from kalaro.proto import subjects
from kalaro.proto.lobby import (
    AddBot,
    CancelTable,
    CreatePractice,
    CreateTable,
    Deal,
    EndTable,
    GetTable,
    HandFinished,
    Leave,
    LeaveAfterHand,
    ListTables,
    RemovePlayer,
    ReportPresence,
    SendChat,
    SetChat,
    SetReady,
    Sit,
)
from kalaro.settings import Settings
from services.lobby.tables import Lobby

SERVICE_NAME = "lobby"


def build_service(lobby: Lobby) -> Service:
    """The lobby's request/reply endpoints, served on the ``lobby`` queue group."""
    service = Service(SERVICE_NAME)
    service.add(subjects.LOBBY_CREATE_TABLE, CreateTable, lobby.create_table)
    service.add(subjects.LOBBY_LIST_TABLES, ListTables, lobby.list_tables)
    service.add(subjects.LOBBY_GET_TABLE, GetTable, lobby.get_table)
    service.add(subjects.LOBBY_SIT, Sit, lobby.sit)
    service.add(subjects.LOBBY_LEAVE, Leave, lobby.leave)
    service.add(subjects.LOBBY_LEAVE_AFTER_HAND, LeaveAfterHand, lobby.leave_after_hand)
    service.add(subjects.LOBBY_SET_READY, SetReady, lobby.set_ready)
    service.add(subjects.LOBBY_REMOVE_PLAYER, RemovePlayer, lobby.remove_player)
    service.add(subjects.LOBBY_DEAL, Deal, lobby.deal)
    service.add(subjects.LOBBY_END_TABLE, EndTable, lobby.end_table)
    service.add(subjects.LOBBY_CANCEL_TABLE, CancelTable, lobby.cancel_table)
    service.add(subjects.LOBBY_SET_CHAT, SetChat, lobby.set_chat)
    service.add(subjects.LOBBY_SEND_CHAT, SendChat, lobby.send_chat)
    service.add(subjects.LOBBY_CREATE_PRACTICE, CreatePractice, lobby.create_practice)
    service.add(subjects.LOBBY_ADD_BOT, AddBot, lobby.add_bot)
    service.add(subjects.LOBBY_PRESENCE, ReportPresence, lobby.report_presence)

    async def hand_finished(event: HandFinished) -> HandFinished:
        # The engine's direct copy of the stream's event (see the engine worker's
        # _deliver_directly): applied the same way, idempotently.
        await lobby.hand_finished(event)
        return event

    service.add(subjects.LOBBY_HAND_FINISHED, HandFinished, hand_finished)
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
