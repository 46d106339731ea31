"""Users, refresh tokens, host requests (step 1 of the old ``schema_migrations`` "auth").

Revision ID: 0001
"""

from __future__ import annotations

from alembic import op

revision = "0001"
down_revision: str | None = None

STATEMENTS = (
    """CREATE TABLE auth_users (
                id VARCHAR(32) PRIMARY KEY,
                email VARCHAR(254) NOT NULL UNIQUE,
                display_name VARCHAR(64) NOT NULL,
                password_hash VARCHAR(255),
                google_sub VARCHAR(255) UNIQUE,
                roles VARCHAR(64) NOT NULL,
                created_at BIGINT NOT NULL
            )""",
    """CREATE TABLE auth_refresh_tokens (
                token_hash VARCHAR(64) PRIMARY KEY,
                family_id VARCHAR(32) NOT NULL,
                user_id VARCHAR(32) NOT NULL REFERENCES auth_users (id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                used_at BIGINT,
                revoked_at BIGINT
            )""",
    "CREATE INDEX ix_auth_refresh_tokens_family ON auth_refresh_tokens (family_id)",
    "CREATE INDEX ix_auth_refresh_tokens_user ON auth_refresh_tokens (user_id)",
    """CREATE TABLE auth_host_requests (
                id VARCHAR(32) PRIMARY KEY,
                user_id VARCHAR(32) NOT NULL REFERENCES auth_users (id) ON DELETE CASCADE,
                note VARCHAR(500) NOT NULL,
                status VARCHAR(16) NOT NULL
                    CHECK (status IN ('pending', 'approved', 'rejected')),
                created_at BIGINT NOT NULL,
                decided_by VARCHAR(32) REFERENCES auth_users (id),
                decided_at BIGINT,
                reason VARCHAR(500) NOT NULL DEFAULT ''
            )""",
    # At most one pending request per user, enforced by the database so two
    # racing "make me a host" requests cannot both insert.
    "CREATE UNIQUE INDEX ux_auth_host_requests_pending"
    " ON auth_host_requests (user_id) WHERE status = 'pending'",
    "CREATE INDEX ix_auth_host_requests_status ON auth_host_requests (status, created_at)",
)


def upgrade() -> None:
    for statement in STATEMENTS:
        op.execute(statement)
