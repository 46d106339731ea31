"""Fixtures for the engine worker's integration tests: workers on real NATS and Redis.

``workers`` starts engine worker "replicas", each with its own NATS connection (as
separate processes would have) and all sharing one Redis key namespace unique to the
test, so replicas of one test race each other but never see another test's hands.
Every replica is stopped at teardown; a test may also kill one abruptly.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from nats.aio.client import Client as NATS

from kalaro.bus.redislink import RedisLink
from kalaro.devstack import NatsServer
from tests.integration.engine.engine_helpers import FakeClock, Replicas


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def workers(
    nats_server: NatsServer, redis: RedisLink, unique: str, clock: FakeClock
) -> AsyncIterator[Replicas]:
    replicas = Replicas(nats_server.url, redis, f"t{unique}:", clock)
    yield replicas
    await replicas.stop_all()


@pytest.fixture
async def js_nc(nc: NATS) -> NATS:
    """The test's own connection, with the streams the engine publishes to in place."""
    from kalaro.bus.jetstream import ensure_stream
    from kalaro.proto import subjects

    js = nc.jetstream()
    await ensure_stream(js, subjects.RESULTS_STREAM, [subjects.RESULTS_SUBJECTS])
    await ensure_stream(js, subjects.EVENTS_STREAM, [subjects.EVENTS_SUBJECTS])
    return nc
