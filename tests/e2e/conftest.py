"""Fixtures for the e2e tier: the whole stack (see ``stack.py``) and an HTTP client."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from kalaro.devstack import NatsServer, RedisServer
from kalaro.launcher import SERVICES
from tests.e2e.stack import Stack, _running


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Every service of ``make run``, on a nats-server and redis-server of its own.

    Its own servers, not the session's: the stack's services join the same queue
    groups as the services the integration tests start, and must never answer them.
    """
    root = tmp_path_factory.mktemp("stack")
    nats = NatsServer(root / "nats").start()
    redis = RedisServer(root / "redis").start()
    running = Stack(root, nats, redis)
    try:
        for spec in SERVICES:
            running.start(spec)
        running.wait_ready()
        _running.append(running)
        yield running
    finally:
        if running in _running:
            _running.remove(running)
        for name in list(running.processes):
            running.stop(name)
        redis.stop()
        nats.stop()


@pytest.fixture
def http(stack: Stack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.base_url, timeout=15) as client:
        yield client
