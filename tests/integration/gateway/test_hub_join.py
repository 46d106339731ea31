"""A socket joining a table on a real NATS server: the gateway is subscribed to the
table's events before it tells the lobby who is here.

The lobby answers a presence report that changes a seat by publishing the table once
(re-reports that change nothing publish nothing), so a table frame published before the
gateway's subscription reached the server would be lost for good, and the players on
this gateway would go on seeing a connected seat as offline. Here a "lobby" publishes
the changed table the instant it is told.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import msgspec
import pytest
from nats.aio.client import Client as NATS

from kalaro.bus.runner import connect
from kalaro.devstack import NatsServer
from kalaro.proto import subjects
from kalaro.proto import ws as w
from kalaro.proto.lobby import SeatInfo, TableInfo
from services.gateway.connection import Connection
from services.gateway.hub import Hub
from services.gateway.presence import PresenceReporter

_encode = msgspec.json.Encoder().encode


def _table(table_id: str, version: int, presence: str) -> TableInfo:
    seat = SeatInfo(user_id="ana", display_name="Ana", presence=presence)
    return TableInfo(
        table_id=table_id, game="tongits", ruleset="classic", options={}, bet=0,
        max_loss=0, private=False, chat_enabled=True, host_id="h", host_name="H",
        seats=(seat, None, None), status="waiting", hand_no=0, version=version,
        created_at="2026-12-02T00:00:00Z",
    )  # fmt: skip


class InstantLobby(PresenceReporter):
    """Told who is here, publishes the table with that seat connected at once, as the
    lobby does when a report changes a presence (and records what the hub had then)."""

    def __init__(self, nc: NATS, lobby_nc: NATS) -> None:
        super().__init__(nc, refresh_seconds=3600)
        self._lobby_nc = lobby_nc
        self.hub: Hub | None = None
        self.subscribed_when_told: list[bool] = []
        self.published: list[asyncio.Task[None]] = []

    def seated(self, table_id: str, user_ids: frozenset[str]) -> None:
        assert self.hub is not None
        feed = self.hub.feed(table_id)
        events = subjects.table_events(table_id)
        self.subscribed_when_told.append(feed is not None and feed.subscribed)
        if user_ids:
            frame = w.TableChanged(table=_table(table_id, 2, "connected"))
            self.published.append(asyncio.create_task(self._publish(events, _encode(frame))))

    async def _publish(self, subject: str, data: bytes) -> None:
        await self._lobby_nc.publish(subject, data)
        await self._lobby_nc.flush()


@pytest.fixture
async def lobby_nc(nats_server: NatsServer) -> AsyncIterator[NATS]:
    nc = await connect(nats_server.url, "test-instant-lobby")
    yield nc
    await nc.drain()


@pytest.mark.parametrize("attempt", range(10))
async def test_a_joining_socket_gets_the_table_frame_its_own_report_causes(
    nc: NATS, lobby_nc: NATS, unique: str, attempt: int
) -> None:
    lobby = InstantLobby(nc, lobby_nc)
    hub = Hub(nc, lobby)
    lobby.hub = hub
    table_id = f"join-{unique}-{attempt}"
    connected = asyncio.Event()

    async def send(frame: bytes) -> None:
        if b'"presence":"connected"' in frame:
            connected.set()

    conn = Connection("ana", "Ana", send)
    conn.start()
    assert await hub.join(conn, _table(table_id, 1, "offline")) == 0
    assert lobby.subscribed_when_told == [True]
    await asyncio.gather(*lobby.published)

    await asyncio.wait_for(connected.wait(), timeout=5)
    feed = hub.feed(table_id)
    assert feed is not None and feed.table.version == 2
    await hub.leave(conn, table_id)
    conn.close()
