"""SQL plumbing shared by the services that own tables (auth, wallet).

SQLAlchemy Core (async) so the same statements run on SQLite (the embedded default)
and PostgreSQL. On SQLite every transaction starts with ``BEGIN IMMEDIATE``: writers
queue on the database lock up front instead of failing when a read lock would have to
be upgraded, and WAL lets readers carry on meanwhile.

Migrations are numbered steps per component, recorded in ``schema_migrations``; each
step runs in its own transaction and runs once, even when replicas start together
(a PostgreSQL advisory lock, or SQLite's write lock, lets one migrate at a time).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

log = logging.getLogger("kalaro.sql")


def create_engine(url: str, **kwargs: Any) -> AsyncEngine:
    """An async engine for ``url``; SQLite gets WAL, a busy timeout and IMMEDIATE txns."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        kwargs.setdefault("pool_size", 10)
        kwargs.setdefault("max_overflow", 20)
        return create_async_engine(url, pool_pre_ping=True, **kwargs)
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_async_engine(url, connect_args={"timeout": 30}, **kwargs)
    sync_engine = engine.sync_engine

    @event.listens_for(sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control away from the driver so BEGIN IMMEDIATE is ours.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def is_sqlite(engine: AsyncEngine) -> bool:
    return engine.dialect.name == "sqlite"


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    statements: Sequence[str]


# Every component's migrations run under one PostgreSQL advisory lock: they share
# ``schema_migrations`` (whose CREATE TABLE IF NOT EXISTS is itself not safe to race),
# and a migration takes milliseconds, so serialising them all costs nothing. The key is
# fixed (the first 8 bytes of sha256(b"kalaro.schema_migrations"), signed).
MIGRATION_LOCK_KEY = int.from_bytes(
    hashlib.sha256(b"kalaro.schema_migrations").digest()[:8], "big", signed=True
)
# SQLite: a writer waits up to the busy timeout for the lock; past that, try again.
_SQLITE_ATTEMPTS = 5


async def migrate(engine: AsyncEngine, component: str, migrations: Sequence[Migration]) -> int:
    """Apply the missing steps of ``component`` in order; return the schema version.

    Safe when several replicas start together on a fresh database: on PostgreSQL the
    whole run holds a session advisory lock (:data:`MIGRATION_LOCK_KEY`), so a second
    replica waits, then finds every step recorded; on SQLite each step's transaction
    begins IMMEDIATE (the write lock first), and a run that still meets "database is
    locked" is retried.
    """
    if is_sqlite(engine):
        for attempt in range(_SQLITE_ATTEMPTS):
            try:
                async with engine.connect() as conn:
                    return await _migrate(conn, component, migrations)
            except OperationalError as exc:
                if "locked" not in str(exc) or attempt == _SQLITE_ATTEMPTS - 1:
                    raise
                log.warning("%s: database locked while migrating; retrying", component)
                await asyncio.sleep(0.2 * (attempt + 1))
        raise AssertionError("unreachable")
    async with engine.connect() as conn:
        key = {"k": MIGRATION_LOCK_KEY}
        if not await conn.scalar(text("SELECT pg_try_advisory_lock(:k)"), key):
            log.info("%s: another process is migrating; waiting for it", component)
            await conn.execute(text("SELECT pg_advisory_lock(:k)"), key)
        await conn.commit()  # a session lock: it outlives the transaction that took it
        try:
            return await _migrate(conn, component, migrations)
        finally:
            try:
                await conn.execute(text("SELECT pg_advisory_unlock(:k)"), key)
                await conn.commit()
            except Exception:
                # The server drops a dead session's locks; never pool this connection.
                await conn.invalidate()


async def _migrate(conn: AsyncConnection, component: str, migrations: Sequence[Migration]) -> int:
    async with conn.begin():
        await conn.execute(
            text(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " component VARCHAR(64) NOT NULL,"
                " version INTEGER NOT NULL,"
                " description VARCHAR(200) NOT NULL,"
                " PRIMARY KEY (component, version))"
            )
        )
    current = 0
    for step in sorted(migrations, key=lambda m: m.version):
        async with conn.begin():
            done = await conn.scalar(
                text("SELECT 1 FROM schema_migrations WHERE component = :c AND version = :v"),
                {"c": component, "v": step.version},
            )
            if not done:
                for statement in step.statements:
                    await conn.execute(text(statement))
                await conn.execute(
                    text("INSERT INTO schema_migrations VALUES (:c, :v, :d)"),
                    {"c": component, "v": step.version, "d": step.description},
                )
                log.info("%s: migrated to %d (%s)", component, step.version, step.description)
        current = step.version
    return current
