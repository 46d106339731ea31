from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from nats.aio.client import Client as NATS

from kalaro.bus.redislink import RedisLink
from kalaro.devstack import NatsServer
from tests.integration.gateway.world import World, world_of


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    """Settings the gateway under test gets (a test module overrides this fixture)."""
    return {}


@pytest.fixture
async def world(
    nc: NATS,
    redis: RedisLink,
    nats_server: NatsServer,
    unique: str,
    gateway_settings: dict[str, Any],
) -> AsyncIterator[World]:
    async with world_of(nc, redis, nats_server, unique, **gateway_settings) as w:
        yield w
