"""Fixtures that start real infrastructure for the integration and e2e tiers, and the
Hypothesis profiles.

nats-server (with JetStream) and redis-server are started once per test session on
free loopback ports, from PATH or the packaged binaries (see ``kalaro.devstack``).
SQL tests run on SQLite always and on PostgreSQL when one is reachable at
``KALARO_TEST_POSTGRES_URL`` (default: the local server); otherwise the PostgreSQL
variants are skipped with the reason printed in the summary.

Hypothesis profiles, chosen by ``HYPOTHESIS_PROFILE`` (default ``dev``): ``dev`` and
``ci`` play a short sweep (``ci`` derandomized, so a CI run is reproducible); ``deep``
(``make test-deep``) plays many more examples. A test that sets no ``max_examples`` of
its own gets the profile's; the whole-hand random-play sweeps rely on that.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from nats.aio.client import Client as NATS

from kalaro.bus.redislink import RedisLink
from kalaro.bus.runner import connect
from kalaro.devstack import NatsCluster, NatsServer, RedisServer

_FAST = {
    "max_examples": 10,
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow],
}
settings.register_profile("dev", **_FAST)
settings.register_profile("ci", derandomize=True, print_blob=True, **_FAST)
settings.register_profile(
    "deep", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

POSTGRES_ADMIN_URL = os.environ.get(
    "KALARO_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)


@pytest.fixture(scope="session")
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsServer]:
    server = NatsServer(tmp_path_factory.mktemp("nats")).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def nats_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsCluster]:
    """A 3-node NATS cluster with JetStream, for the tests of one module (nodes die)."""
    nodes = NatsCluster(Path(tmp_path_factory.mktemp("cluster"))).start()
    try:
        nodes.wait_for_jetstream()
        yield nodes
    finally:
        nodes.stop()


@pytest.fixture
async def nc(nats_server: NatsServer) -> AsyncIterator[NATS]:
    client = await connect(nats_server.url, "tests")
    yield client
    await client.drain()


@pytest.fixture
async def redis(redis_server: RedisServer) -> AsyncIterator[RedisLink]:
    client = RedisLink(redis_server.url)
    yield client
    await client.aclose()


@pytest.fixture
def unique() -> str:
    """A short unique token for subjects, key prefixes and emails in one test."""
    return uuid.uuid4().hex[:10]


async def _postgres_database(name: str) -> str | None:
    """Create a scratch database; return its SQLAlchemy URL, or None if unreachable."""
    try:
        import asyncpg
    except ImportError:
        return None
    try:
        conn = await asyncio.wait_for(asyncpg.connect(POSTGRES_ADMIN_URL), 3)
    except Exception:
        return None
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    base = POSTGRES_ADMIN_URL.rsplit("/", 1)[0]
    return f"{base.replace('postgresql://', 'postgresql+asyncpg://', 1)}/{name}"


async def _drop_postgres_database(name: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(POSTGRES_ADMIN_URL)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


# The PostgreSQL variant carries the ``postgres`` marker: ``pytest -m postgres`` runs
# every test that touches PostgreSQL, ``-m "not postgres"`` none of them.
@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """A fresh, empty database for one test: SQLite file, or a scratch PostgreSQL DB."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'kalaro.db'}"
        return
    name = f"kalaro_test_{uuid.uuid4().hex[:12]}"
    url = await _postgres_database(name)
    if url is None:
        pytest.skip(f"PostgreSQL not reachable at {POSTGRES_ADMIN_URL}")
    yield url
    await _drop_postgres_database(name)
