"""Settlements: the hand's game, and open hands by age (step 2 of the old runner).

The reconciler asks each open hand's engine what became of it.

Revision ID: 0002
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision: str | None = "0001"

STATEMENTS = (
    "ALTER TABLE wallet_settlements ADD COLUMN game VARCHAR(32) NOT NULL DEFAULT ''",
    "CREATE INDEX wallet_settlements_status_ix ON wallet_settlements (status, created_at)",
)


def upgrade() -> None:
    for statement in STATEMENTS:
        op.execute(statement)
