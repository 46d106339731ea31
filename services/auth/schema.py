"""The auth service's tables: users, refresh tokens, email and reset links, approvals.

Tables are prefixed ``auth_`` because every SQL-owning service may share one database
(``make run`` points them all at one SQLite file). The Alembic revisions in
``migrations/versions/`` are literal DDL in the subset SQLite and PostgreSQL agree on,
frozen once shipped; the SQLAlchemy ``Table`` objects below mirror them for queries (a
test checks the two agree).

Every ``*_at`` column is a UTC instant in epoch **milliseconds** (BIGINT): portable,
comparable in SQL without dialect date functions, and precise enough to order rows.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.sql_migrations import AlembicSchema, upgrade

COMPONENT = "auth"

metadata = sa.MetaData()

# A user's links, tokens and requests go with the user.
USERS_ID = "auth_users.id"

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
    sa.Column(
        "user_id", sa.String(32), sa.ForeignKey(USERS_ID, ondelete="CASCADE"), nullable=False
    ),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("expires_at", sa.BigInteger, nullable=False),
    sa.Column("used_at", sa.BigInteger),
    sa.Index("ix_auth_email_tokens_user", "user_id"),
)

# Single-use password reset links (30 minutes), stored as the sha256 of the token.
password_resets = sa.Table(
    "auth_password_resets",
    metadata,
    sa.Column("token_hash", sa.String(64), primary_key=True),
    sa.Column(
        "user_id", sa.String(32), sa.ForeignKey(USERS_ID, ondelete="CASCADE"), nullable=False
    ),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("expires_at", sa.BigInteger, nullable=False),
    sa.Column("used_at", sa.BigInteger),
    sa.Index("ix_auth_password_resets_user", "user_id"),
)

refresh_tokens = sa.Table(
    "auth_refresh_tokens",
    metadata,
    # sha256 of the opaque token: a leaked table cannot be replayed.
    sa.Column("token_hash", sa.String(64), primary_key=True),
    # Every token descended from one sign-in shares a family; reuse revokes it whole.
    sa.Column("family_id", sa.String(32), nullable=False),
    sa.Column(
        "user_id", sa.String(32), sa.ForeignKey(USERS_ID, ondelete="CASCADE"), nullable=False
    ),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("expires_at", sa.BigInteger, nullable=False),
    sa.Column("used_at", sa.BigInteger),
    sa.Column("revoked_at", sa.BigInteger),
    sa.Index("ix_auth_refresh_tokens_family", "family_id"),
    sa.Index("ix_auth_refresh_tokens_user", "user_id"),
)

# The one approval workflow (services/auth/approvals.py): every request an admin
# decides, host access or credits. No foreign key on user_id: credit requests moved
# from the wallet name their requester as the wallet did.
approvals = sa.Table(
    "auth_approvals",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),  # host_access, credits
    sa.Column("user_id", sa.String(128), nullable=False),
    sa.Column("amount", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("note", sa.String(500), nullable=False, server_default=""),
    # pending, approved, applied, declined, withdrawn: see approval_states.
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("decided_by", sa.String(128)),
    sa.Column("decided_at", sa.BigInteger),
    sa.Column("reason", sa.String(500), nullable=False, server_default=""),
    sa.Column("applied_at", sa.BigInteger),
    sa.Column("tx_id", sa.BigInteger),  # the wallet's ledger transaction (credits)
    sa.CheckConstraint("kind IN ('host_access', 'credits')", name="auth_approvals_kind_ck"),
    sa.CheckConstraint(
        "status IN ('pending', 'approved', 'applied', 'declined', 'withdrawn')",
        name="auth_approvals_status_ck",
    ),
    sa.CheckConstraint("amount >= 0", name="auth_approvals_amount_ck"),
    sa.Index("ix_auth_approvals_status", "status", "created_at"),
    sa.Index("ix_auth_approvals_user", "user_id", "created_at"),
    sa.Index(
        "ux_auth_approvals_pending_host",
        "user_id",
        unique=True,
        sqlite_where=sa.text("status = 'pending' AND kind = 'host_access'"),
        postgresql_where=sa.text("status = 'pending' AND kind = 'host_access'"),
    ),
)

# The audit trail: one row per transition, written in the transaction that made it.
approval_events = sa.Table(
    "auth_approval_events",
    metadata,
    sa.Column(
        "approval_id",
        sa.String(64),
        sa.ForeignKey("auth_approvals.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("status", sa.String(16), nullable=False),  # the state entered
    sa.Column("actor", sa.String(128), nullable=False),  # requester, admin, or "system"
    sa.Column("at", sa.BigInteger, nullable=False),
    sa.Column("reason", sa.String(500), nullable=False, server_default=""),
    sa.Index("ix_auth_approval_events_at", "at"),
)

#: Before Alembic, auth's steps 1-3 were recorded in ``schema_migrations``; each maps
#: to the revision that reproduces it, so such a database is stamped, not re-created.
SCHEMA = AlembicSchema(
    COMPONENT,
    metadata,
    Path(__file__).with_name("migrations"),
    bridge={1: "0001", 2: "0002", 3: "0003"},
)


async def migrate_auth(engine: AsyncEngine, revision: str = "head") -> str:
    """Upgrade auth's tables to ``revision`` (under the migration lock: see
    :func:`kalaro.sql_migrations.upgrade`); return the revision they are at."""
    return await upgrade(engine, SCHEMA, revision)
