"""SQL plumbing shared by the services that own tables (auth, wallet, history).

SQLAlchemy Core (async) so the same statements run on SQLite (the embedded default)
and PostgreSQL. On SQLite every transaction starts with ``BEGIN IMMEDIATE``: writers
queue on the database lock up front instead of failing when a read lock would have to
be upgraded, and WAL lets readers carry on meanwhile.

Migrations are Alembic revisions per service, run by :mod:`kalaro.sql_migrations`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine


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


# Every service's migrations run under one PostgreSQL advisory lock (taken per
# transaction by kalaro.sql_migrations): a migration takes milliseconds, so serialising
# them all costs nothing. The key is fixed (the first 8 bytes of
# sha256(b"kalaro.schema_migrations"), signed): the hand-written runner of earlier
# releases took the same one, so a replica still running it waits for ours too.
MIGRATION_LOCK_KEY = int.from_bytes(
    hashlib.sha256(b"kalaro.schema_migrations").digest()[:8], "big", signed=True
)
