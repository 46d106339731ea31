"""The lobby on real NATS and Redis, with stand-in wallet and engine peers.

Each test gets its own Redis key prefix and its own durable name for the hands
consumer (the EVENTS stream lives on the session's shared nats-server), a movable
clock, a recorder of everything published under ``table.>``, and peers playing the
wallet and the engines (see :class:`~tests.integration.lobby.harness.Peers`). After
each test the harness checks that no secret it knows of was ever published or
returned in a TableInfo.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from nats.aio.client import Client as NATS

from kalaro.bus.redislink import RedisLink
from services.lobby.bootstrap import build_service
from services.lobby.service import start_hands_consumer
from services.lobby.tables import Lobby
from tests.integration.lobby.harness import Clock, Frames, LobbyHarness, Peers


@pytest.fixture
def peers() -> Peers:
    return Peers()


@pytest.fixture
async def lobby(
    nc: NATS, redis: RedisLink, unique: str, peers: Peers
) -> AsyncIterator[LobbyHarness]:
    """A running lobby (queue group ``lobby``), its hands consumer, peers and a recorder."""
    frames = Frames()
    recorder = await nc.subscribe("table.>", cb=frames.on_message)
    peers.nc = nc
    peer_service = peers.service()
    await peer_service.start(nc)
    clock = Clock()
    prefix = f"test:{unique}:lobby:"
    core = Lobby(
        nc, redis, prefix=prefix, clock=clock, wallet_timeout=2, engine_timeout=2, bots_timeout=2
    )
    service = build_service(core)
    await service.start(nc)
    consumer = await start_hands_consumer(nc, core, durable=f"lobby-hands-{unique}")
    harness = LobbyHarness(nc, core, peers, frames, clock, unique, prefix)
    try:
        yield harness
        await nc.flush()
        harness.assert_no_secret_leaked()
    finally:
        await consumer.stop()
        await service.stop()
        await peer_service.stop()
        await recorder.unsubscribe()
