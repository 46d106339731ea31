"""Fixtures for the e2e tier: the whole stack (see ``stack.py``) and an HTTP client."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from kalaro.devstack import NatsServer, RedisServer
from kalaro.launcher import SERVICES
from tests.e2e.stack import Stack


@pytest.fixture(scope="session")
def stack(
    tmp_path_factory: pytest.TempPathFactory, nats_server: NatsServer, redis_server: RedisServer
) -> Iterator[Stack]:
    running = Stack(tmp_path_factory.mktemp("stack"), nats_server, redis_server)
    for spec in SERVICES:
        running.start(spec)
    try:
        running.wait_ready()
        yield running
    finally:
        for name in list(running.processes):
            running.stop(name)


@pytest.fixture
def http(stack: Stack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.base_url, timeout=15) as client:
        yield client
