"""A gateway's NATS node dies: what was published meanwhile reaches its sockets anyway.

A real 3-node NATS cluster, the real lobby and an in-process engine worker on it. A
gateway hub (its connection given every node) holds Ana's seat socket of a
dealt Tongits hand. Its node is paused (SIGSTOP), so what the lobby and the engine
publish meanwhile is routed to a node that will never deliver it; a move is made and a
table changes; then the node is killed (kill -9). The lobby and the engines publish only
on change, so without the gateway resending the table and the hand when its connection
is back, Ana would be shown the old hand and the old table until something else changed.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import AsyncIterator

import msgspec
import pytest
from nats.aio.client import Client as NATS

from kalaro.bus import request
from kalaro.bus.redislink import RedisLink
from kalaro.bus.runner import connect
from kalaro.devstack import NatsCluster
from kalaro.proto import endpoints, subjects
from kalaro.proto import lobby as lb
from kalaro.proto import ws as w
from kalaro.proto.engine import GetView
from services.gateway.connection import Connection
from services.gateway.hub import Hub
from services.lobby.bootstrap import build_service
from services.lobby.tables import Lobby
from tests.integration.engine.engine_helpers import FakeClock, Replicas, legal, send_act
from tests.integration.lobby.harness import Clock

_view = msgspec.json.Decoder(w.HandView)
_table = msgspec.json.Decoder(w.TableChanged)


@pytest.fixture
async def gateway_nc(nats_cluster: NatsCluster) -> AsyncIterator[tuple[NATS, list[Hub]]]:
    hubs: list[Hub] = []  # the hub made below, once there is one

    def back() -> None:
        for hub in hubs:
            hub.resync_soon()

    nc = await connect(nats_cluster.url, "test-gateway", on_reconnected=back)
    yield nc, hubs
    for hub in hubs:
        await hub.stop()
    await nc.close()


async def test_a_gateway_whose_nats_node_died_resends_the_table_and_the_hand(
    nats_cluster: NatsCluster,
    gateway_nc: tuple[NATS, list[Hub]],
    redis: RedisLink,
    unique: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    tables_nc, hubs = gateway_nc
    assert tables_nc.connected_url is not None
    port = tables_nc.connected_url.port
    doomed = next(n for n in nats_cluster.nodes if n.url.endswith(f":{port}"))
    survivor = next(n for n in nats_cluster.nodes if n is not doomed)
    # The lobby and the engine stay on a node that lives.
    services_nc = await connect(survivor.url, "test-lobby-engine")
    lobby = Lobby(services_nc, redis, prefix=f"test:{unique}:lobby:", clock=Clock())
    lobby_service = build_service(lobby)
    await lobby_service.start(services_nc)
    replicas = Replicas(survivor.url, redis, f"test:{unique}:", FakeClock())
    await replicas.start("tongits", audience="watched")
    try:

        def caller(name: str, *roles: str) -> lb.Caller:
            return lb.Caller(
                user_id=f"{name.lower()}-{unique}", display_name=name, roles=("player", *roles)
            )

        async def call(subject: str, message: msgspec.Struct, reply: type) -> object:
            return await request(services_nc, subject, message, reply, timeout=10)  # type: ignore[arg-type]

        host = caller("Host", "host")
        ana, ben, cris = caller("Ana"), caller("Ben"), caller("Cris")
        created = await call(
            subjects.LOBBY_CREATE_TABLE, lb.CreateTable(caller=host, game="tongits", bet=0),
            lb.TableCreated,
        )  # fmt: skip
        assert isinstance(created, lb.TableCreated)
        tid = created.table.table_id
        for who in (ana, ben, cris):
            await call(subjects.LOBBY_SIT, lb.Sit(caller=who, table_id=tid), lb.TableInfo)
            await call(
                subjects.LOBBY_SET_READY, lb.SetReady(caller=who, table_id=tid), lb.TableInfo
            )
        dealt = await call(subjects.LOBBY_DEAL, lb.Deal(caller=host, table_id=tid), lb.TableInfo)
        assert isinstance(dealt, lb.TableInfo) and dealt.hand_id is not None

        # Ana's socket on the gateway, subscribed as a socket's subscribe does it.
        hub = Hub(tables_nc)
        hubs.append(hub)
        frames: list[bytes] = []
        arrived = asyncio.Event()

        async def send(frame: bytes) -> None:
            frames.append(frame)
            arrived.set()

        socket = Connection(ana.user_id, "Ana", send)
        socket.start()
        table = await request(tables_nc, endpoints.LOBBY_GET_TABLE, lb.GetTable(table_id=tid))
        assert await hub.join(socket, table) == 0

        async def seat_view(who: lb.Caller) -> w.HandView:
            return await request(
                services_nc, endpoints.engine_view("tongits"),
                GetView(table_id=tid, user_id=who.user_id),
            )  # fmt: skip

        views = [await seat_view(p) for p in (ana, ben, cris)]
        mover, before = next(
            (i, v) for i, v in enumerate(views) if legal(msgspec.json.decode(v.view))
        )

        # The gateway's node stops answering: what is published now goes nowhere.
        assert doomed.process is not None
        doomed.process.send_signal(signal.SIGSTOP)
        player = (ana, ben, cris)[mover]
        move = legal(msgspec.json.decode(before.view))[0]
        acted = await send_act(services_nc, "tongits", tid, player.user_id, before.version, move)
        changed = await call(
            subjects.LOBBY_LEAVE_AFTER_HAND, lb.LeaveAfterHand(caller=ben, table_id=tid),
            lb.TableInfo,
        )  # fmt: skip
        assert isinstance(changed, lb.TableInfo) and changed.version > table.version
        await asyncio.sleep(0.3)
        assert not any(b'"type":"view"' in f for f in frames)  # nothing got through

        caplog.set_level(logging.INFO, logger="kalaro.gateway.hub")
        doomed.kill()  # as a crash would: the gateway's connection fails over

        def newest_table() -> lb.TableInfo | None:
            found = [_table.decode(f).table for f in frames if f.startswith(b'{"type":"table"')]
            return max(found, key=lambda t: t.version, default=None)

        def newest_view() -> int:
            return max(
                (_view.decode(f).version for f in frames if f.startswith(b'{"type":"view"')),
                default=0,
            )

        async def healed() -> None:
            while not (
                (t := newest_table()) is not None
                and t.version >= changed.version
                and newest_view() >= acted.version
            ):
                arrived.clear()
                await arrived.wait()

        await asyncio.wait_for(healed(), timeout=20)
        shown = newest_table()
        assert shown is not None and shown.seats[1] is not None
        assert shown.seats[1].leave_after_hand
        ana_views = [_view.decode(f) for f in frames if f.startswith(b'{"type":"view"')]
        assert {v.seat for v in ana_views} == {0}  # her own seat's view, nobody else's
        assert "resent 1 tables their current state" in caplog.text
        await hub.leave(socket, tid)
        socket.close()
    finally:
        await replicas.stop_all()
        await lobby_service.stop()
        await services_nc.drain()
        doomed.start()  # the cluster whole again for whatever runs next
