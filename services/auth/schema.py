"""The auth service's tables: users, refresh tokens, host requests, email and reset links.

Tables are prefixed ``auth_`` because every SQL-owning service may share one database
(``make run`` points them all at one SQLite file). The migrations are hand-written DDL
in the subset SQLite and PostgreSQL agree on; the SQLAlchemy ``Table`` objects below
mirror them for queries (a test checks the two agree).

Every ``*_at`` column is a UTC instant in epoch **milliseconds** (BIGINT): portable,
comparable in SQL without dialect date functions, and precise enough to order rows.
"""

from __future__ import annotations

import sqlalchemy as sa

from kalaro.sql import Migration

COMPONENT = "auth"

metadata = sa.MetaData()

users = sa.Table(
    "auth_users",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    # Always stored lower-cased, so the plain unique constraint is case-insensitive.
    sa.Column("email", sa.String(254), nullable=False, unique=True),
    sa.Column("display_name", sa.String(64), nullable=False),
    # NULL for accounts that only ever signed in with Google.
    sa.Column("password_hash", sa.String(255)),
    sa.Column("google_sub", sa.String(255), unique=True),
    # Comma-separated, canonical order ("player,host,admin"); see rules.ROLE_ORDER.
    sa.Column("roles", sa.String(64), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    # The owner proved the email (mailed link, Google, or the operator named it). An
    # unverified password account loses the address to its Google-verified owner.
    sa.Column("email_verified", sa.Boolean, nullable=False, server_default=sa.false()),
)

# Single-use email verification links, stored as the sha256 of the token.
email_tokens = sa.Table(
    "auth_email_tokens",
    metadata,
    sa.Column("token_hash", sa.String(64), primary_key=True),
    sa.Column("user_id", sa.String(32), sa.ForeignKey("auth_users.id"), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("expires_at", sa.BigInteger, nullable=False),
    sa.Column("used_at", sa.BigInteger),
)

# Single-use password reset links (30 minutes), stored as the sha256 of the token.
password_resets = sa.Table(
    "auth_password_resets",
    metadata,
    sa.Column("token_hash", sa.String(64), primary_key=True),
    sa.Column("user_id", sa.String(32), sa.ForeignKey("auth_users.id"), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("expires_at", sa.BigInteger, nullable=False),
    sa.Column("used_at", sa.BigInteger),
)

refresh_tokens = sa.Table(
    "auth_refresh_tokens",
    metadata,
    # sha256 of the opaque token: a leaked table cannot be replayed.
    sa.Column("token_hash", sa.String(64), primary_key=True),
    # Every token descended from one sign-in shares a family; reuse revokes it whole.
    sa.Column("family_id", sa.String(32), nullable=False),
    sa.Column("user_id", sa.String(32), sa.ForeignKey("auth_users.id"), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("expires_at", sa.BigInteger, nullable=False),
    sa.Column("used_at", sa.BigInteger),
    sa.Column("revoked_at", sa.BigInteger),
)

host_requests = sa.Table(
    "auth_host_requests",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("user_id", sa.String(32), sa.ForeignKey("auth_users.id"), nullable=False),
    sa.Column("note", sa.String(500), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("decided_by", sa.String(32), sa.ForeignKey("auth_users.id")),
    sa.Column("decided_at", sa.BigInteger),
    sa.Column("reason", sa.String(500), nullable=False, server_default=""),
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "users, refresh tokens, host requests",
        (
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
        ),
    ),
    Migration(
        2,
        "verified emails and single-use verification links",
        (
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
        ),
    ),
    Migration(
        3,
        "single-use password reset links",
        (
            """CREATE TABLE auth_password_resets (
                token_hash VARCHAR(64) PRIMARY KEY,
                user_id VARCHAR(32) NOT NULL REFERENCES auth_users (id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                used_at BIGINT
            )""",
            "CREATE INDEX ix_auth_password_resets_user ON auth_password_resets (user_id)",
        ),
    ),
)
