"""History's tables: SQLAlchemy Core ``Table``s for queries, Alembic revisions for DDL.

History is the first service on Alembic (issue 31 asked for it; auth and wallet keep
``kalaro.sql.migrate``). The revisions live in ``migrations/versions/`` (literal SQL,
frozen once shipped) and the version in ``history_alembic_version``: ``history_``
prefix because by default every service shares one SQLite file. The ``Table``s below
mirror what the revisions build (a test compares them with Alembic's autogenerate).

``history_hands`` holds each hand once (the hand id is the primary key: a redelivered
record inserts nothing); ``history_player_hands`` indexes them by player, newest first.
Times are epoch milliseconds (what the contract sends and the cursor compares).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Index,
    MetaData,
    String,
    Table,
    Text,
    inspect,
    text,
)
from sqlalchemy.engine import Connection
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.sql import MIGRATION_LOCK_KEY, is_sqlite

log = logging.getLogger("kalaro.history")

COMPONENT = "history"
VERSION_TABLE = "history_alembic_version"
MIGRATIONS_DIR = Path(__file__).with_name("migrations")
#: Before Alembic, history's steps 1-3 were recorded in ``schema_migrations``; the
#: revisions that reproduce each step, so such a database is stamped, not re-created.
BRIDGE = {1: "0001", 2: "0002", 3: "0003"}
# SQLite: a writer waits up to the busy timeout for the lock; past that, try again.
_SQLITE_ATTEMPTS = 5


class _AlembicSteps(logging.Filter):
    """Alembic's "Running upgrade/stamp" lines (and its warnings), not the lines it logs
    every time a migration context is set up."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno > logging.INFO or record.getMessage().startswith("Running")


for _name in ("alembic.runtime.migration", "alembic.runtime.plugins"):
    logging.getLogger(_name).addFilter(_AlembicSteps())

metadata = MetaData()

hands = Table(
    "history_hands",
    metadata,
    Column("hand_id", String(64), primary_key=True),
    Column("game", String(32), nullable=False),
    Column("table_id", String(64), nullable=False),
    Column("practice", Boolean, nullable=False),
    Column("finished_ms", BigInteger, nullable=False),
    Column("record", Text, nullable=False),  # the HandRecord as msgspec JSON
    Column("voided", Boolean, nullable=False),  # 0004: cancelled before its end
    Index("history_hands_finished", "finished_ms", "hand_id"),
)

player_hands = Table(
    "history_player_hands",
    metadata,
    Column("user_id", String(128), primary_key=True),
    Column("hand_id", String(64), primary_key=True),
    Column("game", String(32), nullable=False),
    Column("finished_ms", BigInteger, nullable=False),
    # Revision 0002 (stats): the player's outcome, filled at ingest; ``derived`` is false
    # only on rows stored before it, until the start-up backfill fills them.
    Column("won", Boolean, nullable=False),
    Column("net", BigInteger, nullable=False),
    Column("practice", Boolean, nullable=False),
    Column("derived", Boolean, nullable=False),
    Column("voided", Boolean, nullable=False),  # 0004: the stats leave it out
    Index("history_player_hands_newest", "user_id", "finished_ms", "hand_id"),
    Index("history_player_hands_game_newest", "user_id", "game", "finished_ms", "hand_id"),
    Index("history_player_hands_stats", "user_id", "voided", "game", "practice", "won", "net"),
    Index("history_player_hands_underived", "derived"),
    Index("history_player_hands_hand", "hand_id"),
)


def alembic_config(connection: Connection) -> Config:
    """History's Alembic configuration, no ini file: the scripts, and the connection
    ``migrations/env.py`` migrates."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The latest revision in ``migrations/versions``."""
    head = ScriptDirectory(str(MIGRATIONS_DIR)).get_current_head()
    assert head is not None, "history has no revisions"
    return head


def current_revision(connection: Connection) -> str | None:
    """The revision recorded in ``history_alembic_version`` (None: none yet)."""
    context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
    return context.get_current_revision()


async def migrate_history(engine: AsyncEngine, revision: str = "head") -> str:
    """Upgrade history's tables to ``revision``; return the revision they are at.

    Safe when replicas start together: the whole upgrade is one transaction that
    first takes the lock every SQL migration in KaLaro takes (on PostgreSQL
    ``pg_advisory_xact_lock`` on :data:`kalaro.sql.MIGRATION_LOCK_KEY`, which also
    waits for auth's and wallet's runs and the old runner; on SQLite ``BEGIN
    IMMEDIATE``, the write lock): a second replica waits, then finds the version at
    head and does nothing. A run that still meets "database is locked" is retried.
    """
    for attempt in range(_SQLITE_ATTEMPTS):
        try:
            async with engine.connect() as conn:
                return await conn.run_sync(_upgrade, revision)
        except OperationalError as exc:
            last = attempt == _SQLITE_ATTEMPTS - 1
            if not is_sqlite(engine) or "locked" not in str(exc) or last:
                raise
            log.warning("database locked while migrating history; retrying")
            await asyncio.sleep(0.2 * (attempt + 1))
    raise AssertionError("unreachable")


def _upgrade(connection: Connection, revision: str) -> str:
    with connection.begin():  # SQLite: BEGIN IMMEDIATE (kalaro.sql.create_engine)
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK_KEY})
        config = alembic_config(connection)
        _bridge(connection, config)
        command.upgrade(config, revision)
        current = current_revision(connection)
    return current or "base"


def _bridge(connection: Connection, config: Config) -> None:
    """Stamp a database the old runner migrated (``schema_migrations``) at the revision
    matching its last step. Its rows there are kept: they are what that runner reads."""
    if current_revision(connection) is not None:
        return
    if not inspect(connection).has_table("schema_migrations"):
        return
    old = connection.scalar(
        text("SELECT MAX(version) FROM schema_migrations WHERE component = :c"),
        {"c": COMPONENT},
    )
    if old is None:
        return
    if old not in BRIDGE:
        raise RuntimeError(f"history is at unknown schema_migrations version {old}")
    command.stamp(config, BRIDGE[old])
    log.info("history: schema_migrations version %d stamped as revision %s", old, BRIDGE[old])
