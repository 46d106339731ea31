"""Presence through real gateways: two gateway apps (two "replicas") served by uvicorn in
this process, the real lobby, on the session's NATS and Redis; clients are the SDK's
table sockets. Only the auth service's key set is stood in (the tests sign their own
access tokens with a key they publish on ``auth.public_keys``).

What a seat shows comes from the gateways' sockets: a player with a socket on either
gateway is ``connected``; when the last one goes, ``reconnecting``; after the grace
period (the lobby's sweep) ``offline``; back again, ``connected``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from litestar import Litestar
from nats.aio.client import Client as NATS

from kalaro.bus import request
from kalaro.bus.redislink import RedisLink
from kalaro.client import KalaroClient
from kalaro.client.socket import TableSocket
from kalaro.devstack import NatsServer
from kalaro.proto import lobby as lb
from kalaro.proto import subjects
from kalaro.proto.auth import TokenPair, UserProfile
from kalaro.settings import load_settings
from kalaro.tokens import issue_access_token, key_id
from services.lobby.bootstrap import build_service
from services.lobby.tables import Lobby
from tests.integration.gateway.world import AUDIENCE, ISSUER, serving, signing_keys
from tests.integration.lobby.harness import Clock

GRACE = 30.0


@dataclass
class Gateway:
    app: Litestar
    url: str

    @property
    def gateway_id(self) -> str:
        return str(self.app.state.hub.presence.gateway_id)


@dataclass
class World:
    nc: NATS
    lobby: Lobby
    clock: Clock
    key: Ed25519PrivateKey
    unique: str
    gateways: list[Gateway]

    def caller(self, name: str, *roles: str) -> lb.Caller:
        return lb.Caller(
            user_id=f"{name.lower()}-{self.unique}", display_name=name, roles=("player", *roles)
        )

    def client(self, who: lb.Caller, gateway: Gateway) -> KalaroClient:
        token = issue_access_token(
            self.key, key_id(self.key), who.user_id, who.roles, who.display_name,
            ISSUER, AUDIENCE, 300,
        )  # fmt: skip
        client = KalaroClient(gateway.url)
        profile = UserProfile(user_id=who.user_id, email=f"{who.user_id}@example.com",
                              display_name=who.display_name, roles=who.roles, created_at="")  # type: ignore[arg-type]  # fmt: skip
        client.tokens = TokenPair(
            access_token=token, refresh_token="unused", expires_in=300, user=profile
        )
        return client

    async def lobby_call(self, subject: str, message: object, reply: type) -> object:
        return await request(self.nc, subject, message, reply, timeout=10)  # type: ignore[arg-type]


@asynccontextmanager
async def gateway(nc: NATS, nats_url: str, refresh: float) -> AsyncIterator[Gateway]:
    """One gateway app under uvicorn on a free port, for as long as the block runs."""
    settings = load_settings(
        {}, nats_url=nats_url, ws_heartbeat_seconds=20, presence_refresh_seconds=refresh
    )
    async with serving(nc, settings, log_level="warning") as (app, address):
        yield Gateway(app, f"http://{address}")


@pytest.fixture
async def world(
    nc: NATS, redis: RedisLink, nats_server: NatsServer, unique: str
) -> AsyncIterator[World]:
    clock = Clock()
    prefix = f"test:{unique}:lobby:"
    core = Lobby(nc, redis, prefix=prefix, clock=clock, presence_grace_seconds=GRACE)
    lobby_service = build_service(core)
    async with signing_keys(nc) as key:
        await lobby_service.start(nc)
        try:
            async with (
                gateway(nc, nats_server.url, refresh=0.5) as one,
                gateway(nc, nats_server.url, refresh=0.5) as two,
            ):
                yield World(nc, core, clock, key, unique, [one, two])
        finally:
            await lobby_service.stop()


async def table_with(world: World, *players: lb.Caller) -> lb.TableInfo:
    host = world.caller("Host", "host")
    created = await world.lobby_call(
        subjects.LOBBY_CREATE_TABLE,
        lb.CreateTable(caller=host, game="tongits", bet=0),
        lb.TableCreated,
    )
    assert isinstance(created, lb.TableCreated)
    table = created.table
    for who in players:
        seated = await world.lobby_call(
            subjects.LOBBY_SIT, lb.Sit(caller=who, table_id=table.table_id), lb.TableInfo
        )
        assert isinstance(seated, lb.TableInfo)
        table = seated
    return table


async def watch(world: World, who: lb.Caller, gateway: Gateway, table_id: str) -> TableSocket:
    socket: TableSocket = world.client(who, gateway).table_socket(reconnect=False)
    await socket.connect()
    await socket.subscribe(table_id)
    return socket


def presence_of(socket: TableSocket, table_id: str) -> Callable[[], list[str | None]]:
    def now() -> list[str | None]:
        table = socket.state(table_id).table
        assert table is not None
        return [s.presence if s is not None else None for s in table.seats]

    return now


async def sees(socket: TableSocket, table_id: str, expected: list[str | None]) -> None:
    """Wait until the socket's latest table frame shows exactly these presences."""
    shown = presence_of(socket, table_id)
    try:
        await socket.wait_for(lambda: shown() == expected, timeout=10)
    except TimeoutError:
        raise AssertionError(f"saw {shown()}, expected {expected}") from None


async def test_presence_follows_sockets_across_two_gateways(world: World) -> None:
    one, two = world.gateways
    ana, ben = world.caller("Ana"), world.caller("Ben")
    table = await table_with(world, ana, ben)
    tid = table.table_id
    watcher = await watch(world, ben, two, tid)  # Ben watches from gateway two
    await sees(watcher, tid, ["offline", "connected", None])
    # Ana has a socket on each gateway.
    ana_one = await watch(world, ana, one, tid)
    ana_two = await watch(world, ana, two, tid)
    await sees(watcher, tid, ["connected", "connected", None])
    rec = await world.lobby.store.load(tid)
    assert sorted(g.gateway_id for g in rec[1].gateways) == sorted([one.gateway_id, two.gateway_id])

    # One of her sockets closes: she still has the other. Gateway two now reports only
    # Ben; the seat is still connected.
    await ana_two.close()

    async def only_ben_on_two() -> bool:
        _, rec = await world.lobby.store.load(tid)
        return [g.user_ids for g in rec.gateways if g.gateway_id == two.gateway_id] == [
            (ben.user_id,)
        ]

    await until(only_ben_on_two)
    assert presence_of(watcher, tid)() == ["connected", "connected", None]

    # The last one closes: reconnecting, then (the grace over, the lobby's sweep) offline.
    await ana_one.close()
    await sees(watcher, tid, ["reconnecting", "connected", None])
    world.clock.advance(GRACE + 1)
    assert await world.lobby.sweep_presence() == 1
    await sees(watcher, tid, ["offline", "connected", None])

    # She comes back (on either gateway): connected.
    back = await watch(world, ana, one, tid)
    await sees(watcher, tid, ["connected", "connected", None])
    await back.close()
    await watcher.close()


async def test_a_spectator_has_no_presence_until_they_sit(world: World) -> None:
    one, two = world.gateways
    ana, cris = world.caller("Ana"), world.caller("Cris")
    table = await table_with(world, ana)
    tid = table.table_id
    ana_socket = await watch(world, ana, one, tid)
    spectator = await watch(world, cris, two, tid)
    await sees(spectator, tid, ["connected", None, None])
    assert spectator.state(tid).seat is None
    # Cris sits down with the socket open: the gateway moves it to the seat and says so.
    await world.lobby_call(
        subjects.LOBBY_SIT, lb.Sit(caller=cris, table_id=tid, seat=2), lb.TableInfo
    )
    await sees(ana_socket, tid, ["connected", None, "connected"])
    await spectator.close()
    await sees(ana_socket, tid, ["connected", None, "reconnecting"])
    await ana_socket.close()


async def test_gateways_re_announce_so_a_lost_report_heals(world: World) -> None:
    one, _ = world.gateways
    ana, ben = world.caller("Ana"), world.caller("Ben")
    table = await table_with(world, ana, ben)
    tid = table.table_id
    ana_socket = await watch(world, ana, one, tid)
    ben_socket = await watch(world, ben, one, tid)
    await sees(ben_socket, tid, ["connected", "connected", None])
    # The lobby loses what gateway one said (as if its Redis had been restored from an
    # older copy): the seats fall back to reconnecting ...
    lost = lb.ReportPresence(gateway_id=one.gateway_id, table_id=tid, user_ids=())
    await world.lobby_call(subjects.LOBBY_PRESENCE, lost, lb.PresenceNoted)
    await sees(ben_socket, tid, ["reconnecting", "reconnecting", None])
    # ... until the gateway's next re-announce (every 0.5 s here) puts them right.
    await sees(ben_socket, tid, ["connected", "connected", None])
    await ana_socket.close()
    await ben_socket.close()


async def test_a_gateway_that_stops_says_its_sockets_are_gone(
    world: World, nc: NATS, nats_server: NatsServer
) -> None:
    ana, ben = world.caller("Ana"), world.caller("Ben")
    table = await table_with(world, ana, ben)
    tid = table.table_id
    watcher = await watch(world, ben, world.gateways[0], tid)
    async with gateway(nc, nats_server.url, refresh=30) as leaving:
        ana_socket = await watch(world, ana, leaving, tid)
        await sees(watcher, tid, ["connected", "connected", None])
    # The gateway went away (a redeploy): Ana's seat no longer shows her connected.
    await sees(watcher, tid, ["reconnecting", "connected", None])
    await ana_socket.close()
    await watcher.close()


async def until(check: Callable[[], object], timeout: float = 10) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        outcome = check()
        if asyncio.iscoroutine(outcome):
            outcome = await outcome
        if outcome:
            return
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)
