"""Verified emails and single-use verification links (step 2 of the old runner).

Revision ID: 0002
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision: str | None = "0001"

STATEMENTS = (
    "ALTER TABLE auth_users ADD COLUMN email_verified BOOLEAN NOT NULL DEFAULT FALSE",
    # Google vouched for linked accounts; the operator named the admins; bot
    # addresses are reserved. Older password-only accounts stay unverified.
    "UPDATE auth_users SET email_verified = TRUE WHERE google_sub IS NOT NULL"
    " OR roles LIKE '%admin%' OR roles LIKE '%bot%'",
    """CREATE TABLE auth_email_tokens (
                token_hash VARCHAR(64) PRIMARY KEY,
                user_id VARCHAR(32) NOT NULL REFERENCES auth_users (id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                used_at BIGINT
            )""",
    "CREATE INDEX ix_auth_email_tokens_user ON auth_email_tokens (user_id)",
)


def upgrade() -> None:
    for statement in STATEMENTS:
        op.execute(statement)
