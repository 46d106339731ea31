from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from nats.aio.client import Client as NATS

from kalaro.bus.redislink import RedisLink
from kalaro.devstack import NatsServer
from tests.integration.gateway.world import World, world_of


@pytest.fixture
async def world(
    nc: NATS, redis: RedisLink, nats_server: NatsServer, unique: str
) -> AsyncIterator[World]:
    async with world_of(nc, redis, nats_server, unique) as w:
        yield w
