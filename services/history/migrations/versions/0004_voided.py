"""Voided hands, kept and flagged so the stats leave them out.

A hand cancelled before its end is kept like a finished one (listed, exported, read by
id). Existing rows are finished hands (the engines published no voided record before
this), so the default is right for them. The stats index gains ``voided`` right after
the player: the aggregate still reads only index rows, now only the counted ones.

Revision ID: 0004
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision: str | None = "0003"

STATEMENTS = (
    "ALTER TABLE history_hands ADD COLUMN voided BOOLEAN NOT NULL DEFAULT FALSE",
    "ALTER TABLE history_player_hands ADD COLUMN voided BOOLEAN NOT NULL DEFAULT FALSE",
    "DROP INDEX history_player_hands_stats",
    "CREATE INDEX history_player_hands_stats"
    " ON history_player_hands (user_id, voided, game, practice, won, net)",
)


def upgrade() -> None:
    for statement in STATEMENTS:
        op.execute(statement)
