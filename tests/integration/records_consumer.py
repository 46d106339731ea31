"""What the integration tests of a RECORDS consumer (history, ranked) share: a database
migrated by the service's own migrations, and the test's own consumer name, record
subjects and Redis namespace (the session shares one nats-server and redis-server)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from nats.aio.client import Client as NATS
from nats.js.errors import NotFoundError
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus.jetstream import ensure_stream
from kalaro.proto import subjects
from kalaro.sql import create_engine


async def migrated_engine(
    database_url: str, migrate: Callable[[AsyncEngine], Awaitable[Any]]
) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(database_url)
    await migrate(engine)
    yield engine
    await engine.dispose()


async def consumer_names(nc: NATS, unique: str, service: str) -> AsyncIterator[dict[str, str]]:
    """The consumer's durable name, its filter (hand ids ``<unique>.<n>``), the Redis
    namespace: this test's alone. The RECORDS stream exists (as the engines ensure it)."""
    await ensure_stream(nc.jetstream(), subjects.RECORDS_STREAM)
    found = {
        "durable": f"{service}-{unique}",
        "subject": subjects.hand_record(f"{unique}.*"),
        "namespace": f"{unique}:",
    }
    yield found
    with contextlib.suppress(NotFoundError):
        await nc.jetstream().delete_consumer(subjects.RECORDS_STREAM, found["durable"])
