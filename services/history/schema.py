"""History's tables: SQLAlchemy Core ``Table``s for queries, Alembic revisions for DDL.

The revisions live in ``migrations/versions/`` (literal SQL, frozen once shipped) and
the version in ``history_alembic_version`` (:mod:`kalaro.sql_migrations` runs them, as
it does auth's and wallet's). The ``Table``s below mirror what the revisions build (a
test compares them with Alembic's autogenerate).

``history_hands`` holds each hand once (the hand id is the primary key: a redelivered
record inserts nothing); ``history_player_hands`` indexes them by player, newest first.
Times are epoch milliseconds (what the contract sends and the cursor compares).
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Index,
    MetaData,
    String,
    Table,
    Text,
)
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.sql_migrations import AlembicSchema, upgrade

COMPONENT = "history"

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


#: Before Alembic, history's steps 1-3 were recorded in ``schema_migrations``; each
#: maps to the revision that reproduces it, so such a database is stamped, not re-created.
SCHEMA = AlembicSchema(
    COMPONENT,
    metadata,
    Path(__file__).with_name("migrations"),
    bridge={1: "0001", 2: "0002", 3: "0003"},
)


async def migrate_history(engine: AsyncEngine, revision: str = "head") -> str:
    """Upgrade history's tables to ``revision`` (under the migration lock: see
    :func:`kalaro.sql_migrations.upgrade`); return the revision they are at."""
    return await upgrade(engine, SCHEMA, revision)
