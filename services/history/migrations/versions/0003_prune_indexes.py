"""Indexes for pruning and day exports (step 3 of the old runner).

Revision ID: 0003
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision: str | None = "0002"

STATEMENTS = (
    # The retention prune and an admin's day export scan by finish time.
    "CREATE INDEX history_hands_finished ON history_hands (finished_ms, hand_id)",
    # The prune deletes a batch's index rows by hand id.
    "CREATE INDEX history_player_hands_hand ON history_player_hands (hand_id)",
)


def upgrade() -> None:
    for statement in STATEMENTS:
        op.execute(statement)
