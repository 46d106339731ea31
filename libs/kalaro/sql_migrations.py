"""Alembic for the services that own SQL tables (auth, wallet, history), run one way.

Each such service keeps its revisions in ``services/<name>/migrations/versions/``
(literal SQL, forward-only, frozen once shipped), an ``env.py`` that calls
:func:`run_env`, and one :class:`AlembicSchema` naming them. :func:`upgrade` runs them
at start-up from the service's async engine (no ``alembic.ini``) and from
``python -m services.migrate``.

Every service records its revision in its own ``<name>_alembic_version`` table, not
Alembic's default one: by default all of them share one SQLite file.

Before Alembic, a hand-written runner recorded numbered steps per component in
``schema_migrations``. A database it migrated is stamped at the revision that
reproduces its last step (:attr:`AlembicSchema.bridge`), then upgraded; its rows there
are left as they were.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from alembic import command, context
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import MetaData, inspect, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.sql import MIGRATION_LOCK_KEY, is_sqlite

log = logging.getLogger("kalaro.sql")

# SQLite: a writer waits up to the busy timeout for the lock; past that, try again.
_SQLITE_ATTEMPTS = 5


class _AlembicSteps(logging.Filter):
    """Alembic's "Running upgrade/stamp" lines (and its warnings), not the lines it logs
    every time a migration context is set up."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno > logging.INFO or record.getMessage().startswith("Running")


for _name in ("alembic.runtime.migration", "alembic.runtime.plugins"):
    logging.getLogger(_name).addFilter(_AlembicSteps())


@dataclass(frozen=True)
class AlembicSchema:
    """One service's tables under Alembic."""

    #: The service's name: ``schema_migrations``' component, the version table's prefix.
    component: str
    #: The ``Table``s the service queries; they mirror what the revisions build.
    metadata: MetaData
    #: ``env.py`` and ``versions/``.
    directory: Path
    #: The old runner's step number -> the revision that ends where that step ended.
    bridge: Mapping[int, str] = field(default_factory=dict)

    @property
    def version_table(self) -> str:
        return f"{self.component}_alembic_version"

    def config(self, connection: Connection) -> Config:
        """Alembic's configuration, no ini file: the scripts, the connection ``env.py``
        migrates and this schema (which :func:`run_env` reads)."""
        config = Config()
        config.set_main_option("script_location", str(self.directory))
        config.attributes["connection"] = connection
        config.attributes["schema"] = self
        return config

    def head(self) -> str:
        """The latest revision in ``versions/``."""
        head = ScriptDirectory(str(self.directory)).get_current_head()
        assert head is not None, f"{self.component} has no revisions"
        return head

    def current(self, connection: Connection) -> str | None:
        """The revision recorded in the version table (None: none yet)."""
        opts = {"version_table": self.version_table}
        return MigrationContext.configure(connection, opts=opts).get_current_revision()


async def upgrade(engine: AsyncEngine, schema: AlembicSchema, revision: str = "head") -> str:
    """Upgrade ``schema``'s tables to ``revision``; return the revision they are at.

    Safe when replicas start together: the whole upgrade is one transaction that first
    takes the lock every service's migration takes (on PostgreSQL
    ``pg_advisory_xact_lock`` on :data:`kalaro.sql.MIGRATION_LOCK_KEY`; on SQLite
    ``BEGIN IMMEDIATE``, the write lock): a second replica waits, then finds the version
    at ``revision`` and does nothing. A run that still meets "database is locked" is
    retried.
    """
    for attempt in range(_SQLITE_ATTEMPTS):
        try:
            async with engine.connect() as conn:
                return await conn.run_sync(_upgrade, schema, revision)
        except OperationalError as exc:
            last = attempt == _SQLITE_ATTEMPTS - 1
            if not is_sqlite(engine) or "locked" not in str(exc) or last:
                raise
            log.warning("database locked while migrating %s; retrying", schema.component)
            await asyncio.sleep(0.2 * (attempt + 1))
    raise AssertionError("unreachable")


def run_env() -> None:
    """The body of every service's ``env.py`` (online only): run the revisions on the
    connection :func:`upgrade` opened, inside the transaction that holds the lock."""
    config = context.config
    connection = config.attributes.get("connection")
    schema = config.attributes.get("schema")
    if not isinstance(connection, Connection) or not isinstance(schema, AlembicSchema):
        raise RuntimeError(
            "KaLaro's migrations run from kalaro.sql_migrations.upgrade (python -m "
            "services.<name> or python -m services.migrate), not the alembic CLI"
        )
    context.configure(
        connection=connection,
        version_table=schema.version_table,
        target_metadata=schema.metadata,
    )
    with context.begin_transaction():
        context.run_migrations()


def _upgrade(connection: Connection, schema: AlembicSchema, revision: str) -> str:
    with connection.begin():  # SQLite: BEGIN IMMEDIATE (kalaro.sql.create_engine)
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK_KEY})
        config = schema.config(connection)
        _bridge(connection, schema, config)
        command.upgrade(config, revision)
        current = schema.current(connection)
    return current or "base"


def _bridge(connection: Connection, schema: AlembicSchema, config: Config) -> None:
    """Stamp a database the old runner migrated at the revision matching its last step."""
    if schema.current(connection) is not None:
        return
    if not inspect(connection).has_table("schema_migrations"):
        return
    old = connection.scalar(
        text("SELECT MAX(version) FROM schema_migrations WHERE component = :c"),
        {"c": schema.component},
    )
    if old is None:
        return
    if old not in schema.bridge:
        raise RuntimeError(f"{schema.component} is at unknown schema_migrations version {old}")
    command.stamp(config, schema.bridge[old])
    log.info(
        "%s: schema_migrations version %d stamped as revision %s",
        schema.component,
        old,
        schema.bridge[old],
    )
