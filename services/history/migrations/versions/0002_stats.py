"""Each player's outcome of a hand, for stats (step 2 of the old runner).

Rows stored before it keep ``derived`` false until the start-up backfill
(:func:`services.history.stats.backfill`) fills them.

Revision ID: 0002
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision: str | None = "0001"

STATEMENTS = (
    "ALTER TABLE history_player_hands ADD COLUMN won BOOLEAN NOT NULL DEFAULT FALSE",
    "ALTER TABLE history_player_hands ADD COLUMN net BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE history_player_hands ADD COLUMN practice BOOLEAN NOT NULL DEFAULT FALSE",
    "ALTER TABLE history_player_hands ADD COLUMN derived BOOLEAN NOT NULL DEFAULT FALSE",
    # Stats: one player's rows per game (the aggregate reads only the index's rows).
    "CREATE INDEX history_player_hands_stats"
    " ON history_player_hands (user_id, game, practice, won, net)",
    # The backfill finds the rows stored before this migration.
    "CREATE INDEX history_player_hands_underived ON history_player_hands (derived)",
)


def upgrade() -> None:
    for statement in STATEMENTS:
        op.execute(statement)
