"""The auth service on real NATS, Redis and SQL (SQLite, and PostgreSQL when reachable).

Each test gets a freshly migrated database, its own Redis key prefix for throttling,
its own signing-key file, and a Google key set generated here: the tests sign Google
ID tokens themselves, so every claim and the signature are under their control.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.rsa import generate_private_key
from nats.aio.client import Client as NATS

from kalaro.bus.redislink import RedisLink
from kalaro.sql import create_engine
from services.auth.bootstrap import build_deps, build_service
from services.auth.schema import migrate_auth
from tests.integration.auth.harness import AuthHarness, Clock, GoogleKeys, auth_settings


@pytest.fixture(scope="session")
def google_keys() -> GoogleKeys:
    return GoogleKeys(generate_private_key(public_exponent=65537, key_size=2048))


@pytest.fixture
async def auth(
    nc: NATS,
    redis: RedisLink,
    database_url: str,
    tmp_path: Path,
    unique: str,
    google_keys: GoogleKeys,
) -> AsyncIterator[AuthHarness]:
    """A running auth service (queue group ``auth``) and handles on its state."""
    jwks_file = tmp_path / "google-jwks.json"
    jwks_file.write_text(json.dumps(google_keys.jwks()))
    settings = auth_settings(database_url, tmp_path, jwks_file)
    engine = create_engine(database_url)
    await migrate_auth(engine)
    clock = Clock()
    deps = await build_deps(
        settings,
        engine=engine,
        redis=redis,
        nc=nc,
        throttle_prefix=f"test:{unique}:throttle:",
        clock=clock,
    )
    service = build_service(deps)
    await service.start(nc)
    try:
        yield AuthHarness(nc, deps, settings, clock, google_keys, unique)
    finally:
        await service.stop()
        await engine.dispose()
