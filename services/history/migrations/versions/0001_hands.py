"""Hands and hands by player (step 1 of the old ``schema_migrations`` "history").

Revision ID: 0001
"""

from __future__ import annotations

from alembic import op

revision = "0001"
down_revision: str | None = None

STATEMENTS = (
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
)


def upgrade() -> None:
    for statement in STATEMENTS:
        op.execute(statement)
