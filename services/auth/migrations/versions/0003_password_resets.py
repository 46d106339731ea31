"""Single-use password reset links (step 3 of the old runner).

Revision ID: 0003
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision: str | None = "0002"

STATEMENTS = (
    """CREATE TABLE auth_password_resets (
                token_hash VARCHAR(64) PRIMARY KEY,
                user_id VARCHAR(32) NOT NULL REFERENCES auth_users (id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                used_at BIGINT
            )""",
    "CREATE INDEX ix_auth_password_resets_user ON auth_password_resets (user_id)",
)


def upgrade() -> None:
    for statement in STATEMENTS:
        op.execute(statement)
