"""History's tables: SQLAlchemy Core ``Table``s for queries, numbered migrations for DDL.

The project's own versioned migrations (``kalaro.sql.migrate``, recorded in
``schema_migrations``), like auth and wallet: Alembic would be a second mechanism for
one component. Literal SQL, frozen once shipped; ``history_`` prefix because by default
every service shares one SQLite file.

``history_hands`` holds each hand once (the hand id is the primary key: a redelivered
record inserts nothing); ``history_player_hands`` indexes them by player, newest first.
Times are epoch milliseconds (what the contract sends and the cursor compares).
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Column, MetaData, String, Table, Text
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.sql import Migration, migrate

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
)

player_hands = Table(
    "history_player_hands",
    metadata,
    Column("user_id", String(128), primary_key=True),
    Column("hand_id", String(64), primary_key=True),
    Column("game", String(32), nullable=False),
    Column("finished_ms", BigInteger, nullable=False),
    # Migration 2 (stats): the player's outcome, filled at ingest; ``derived`` is false
    # only on rows stored before it, until the start-up backfill fills them.
    Column("won", Boolean, nullable=False),
    Column("net", BigInteger, nullable=False),
    Column("practice", Boolean, nullable=False),
    Column("derived", Boolean, nullable=False),
)

MIGRATIONS = (
    Migration(
        1,
        "hands and hands by player",
        (
            "CREATE TABLE history_hands ("
            " hand_id VARCHAR(64) NOT NULL PRIMARY KEY,"
            " game VARCHAR(32) NOT NULL,"
            " table_id VARCHAR(64) NOT NULL,"
            " practice BOOLEAN NOT NULL,"
            " finished_ms BIGINT NOT NULL,"
            " record TEXT NOT NULL)",
            "CREATE TABLE history_player_hands ("
            " user_id VARCHAR(128) NOT NULL,"
            " hand_id VARCHAR(64) NOT NULL,"
            " game VARCHAR(32) NOT NULL,"
            " finished_ms BIGINT NOT NULL,"
            " PRIMARY KEY (user_id, hand_id))",
            # "My hands" newest first, all games or one.
            "CREATE INDEX history_player_hands_newest"
            " ON history_player_hands (user_id, finished_ms, hand_id)",
            "CREATE INDEX history_player_hands_game_newest"
            " ON history_player_hands (user_id, game, finished_ms, hand_id)",
        ),
    ),
    Migration(
        2,
        "each player's outcome of a hand, for stats",
        (
            "ALTER TABLE history_player_hands ADD COLUMN won BOOLEAN NOT NULL DEFAULT FALSE",
            "ALTER TABLE history_player_hands ADD COLUMN net BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE history_player_hands ADD COLUMN practice BOOLEAN NOT NULL DEFAULT FALSE",
            "ALTER TABLE history_player_hands ADD COLUMN derived BOOLEAN NOT NULL DEFAULT FALSE",
            # Stats: one player's rows per game (the aggregate reads only the index's rows).
            "CREATE INDEX history_player_hands_stats"
            " ON history_player_hands (user_id, game, practice, won, net)",
            # The backfill finds the rows stored before this migration.
            "CREATE INDEX history_player_hands_underived ON history_player_hands (derived)",
        ),
    ),
    Migration(
        3,
        "indexes for pruning and day exports",
        (
            # The retention prune and an admin's day export scan by finish time.
            "CREATE INDEX history_hands_finished ON history_hands (finished_ms, hand_id)",
            # The prune deletes a batch's index rows by hand id.
            "CREATE INDEX history_player_hands_hand ON history_player_hands (hand_id)",
        ),
    ),
)


async def migrate_history(engine: AsyncEngine) -> int:
    return await migrate(engine, COMPONENT, MIGRATIONS)
