"""SQL plumbing shared by the services that own tables (auth, wallet).

SQLAlchemy Core (async) so the same statements run on SQLite (the embedded default)
and PostgreSQL. On SQLite every transaction starts with ``BEGIN IMMEDIATE``: writers
queue on the database lock up front instead of failing when a read lock would have to
be upgraded, and WAL lets readers carry on meanwhile.

Migrations are numbered steps per component, recorded in ``schema_migrations``; each
step runs in its own transaction and runs once.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

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


async def migrate(engine: AsyncEngine, component: str, migrations: Sequence[Migration]) -> int:
    """Apply the missing steps of ``component`` in order; return the schema version."""
    async with engine.begin() as conn:
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
        async with engine.begin() as conn:
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
