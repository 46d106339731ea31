"""Ranked's tables: SQLAlchemy Core ``Table``s for queries, Alembic revisions for DDL.

The revisions live in ``migrations/versions/`` (literal SQL, frozen once shipped) and
the version in ``ranked_alembic_version`` (:mod:`kalaro.sql_migrations` runs them, as
for auth, wallet and history). The ``Table``s mirror what the revisions build.

``ranked_rated_hands`` is the exactly-once mark: a hand's ratings are applied in the
transaction that inserts its row, so a redelivered record finds the row and changes
nothing. ``ranked_standing`` is what admins decided (frozen, barred, warnings);
``ranked_audit`` says who decided it, when and why.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.sql_migrations import AlembicSchema, upgrade

COMPONENT = "ranked"

metadata = MetaData()

ratings = Table(
    "ranked_ratings",
    metadata,
    Column("user_id", String(128), primary_key=True),
    Column("game", String(32), primary_key=True),
    Column("mu", Float, nullable=False),
    Column("sigma", Float, nullable=False),
    Column("shown", Integer, nullable=False),  # ratings.shown_rating, kept for the boards
    Column("hands", Integer, nullable=False),
    Column("last_change", Integer, nullable=False),
    Column("last_hand_id", String(64), nullable=False),
    Column("last_rated_ms", BigInteger, nullable=False),
    Column("display_name", String(128), nullable=False),  # as the last hand named them
    Index("ranked_ratings_board", "game", "shown", "hands", "user_id"),
    Index("ranked_ratings_recent", "game", "last_rated_ms"),
)

rated_hands = Table(
    "ranked_rated_hands",
    metadata,
    Column("hand_id", String(64), primary_key=True),
    Column("game", String(32), nullable=False),
    Column("rated_ms", BigInteger, nullable=False),
)

standing = Table(
    "ranked_standing",
    metadata,
    Column("user_id", String(128), primary_key=True),
    Column("frozen", Boolean, nullable=False),
    Column("barred", Boolean, nullable=False),
    Column("warnings", Integer, nullable=False),
    Column("updated_ms", BigInteger, nullable=False),
)

audit = Table(
    "ranked_audit",
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    Column("user_id", String(128), nullable=False),
    Column("action", String(32), nullable=False),
    Column("reason", Text, nullable=False),
    Column("admin_id", String(128), nullable=False),
    Column("at_ms", BigInteger, nullable=False),
    Index("ranked_audit_newest", "at_ms", "id"),
)

SCHEMA = AlembicSchema(COMPONENT, metadata, Path(__file__).with_name("migrations"))


async def migrate_ranked(engine: AsyncEngine, revision: str = "head") -> str:
    """Upgrade ranked's tables to ``revision`` (under the migration lock: see
    :func:`kalaro.sql_migrations.upgrade`); return the revision they are at."""
    return await upgrade(engine, SCHEMA, revision)
