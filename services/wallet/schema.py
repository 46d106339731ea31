"""The wallet's tables: SQLAlchemy Core ``Table``s for queries, Alembic revisions for DDL.

The ledger is double-entry. Every change of credits is one row in
``wallet_transactions`` (what happened, who did it, why, and an idempotency key that is
UNIQUE, so an operation keyed by a user or a hand can be applied only once) plus
``wallet_entries`` rows that sum to zero. The house account issues credits, so its
balance is minus everything in circulation and the sum over all accounts is always 0.

``wallet_accounts`` keeps a denormalised ``balance`` and ``held`` updated in the same
SQL transaction as the entries and holds they summarise (reads and checks stay O(1));
the audit recomputes both from ``wallet_entries`` and ``wallet_holds``. CHECK
constraints are the last line of defence: a player's available balance can never be
negative, whatever a bug upstream of the database does.

The revisions (``migrations/versions/``) are literal SQL, frozen once shipped; the only
dialect difference is the auto-increment primary key, rendered per dialect. Timestamps
are ISO-8601 UTC strings (``2025-01-31T12:00:00.000000+00:00``): portable, sortable,
and what the contract sends.
All tables carry a ``wallet_`` prefix because by default the wallet shares one SQLite
file with the other services that own tables.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import (
    BigInteger,
    Column,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.sql_migrations import AlembicSchema, upgrade

COMPONENT = "wallet"

# The owner name of the house account. User ids may not start with "@" (the ledger
# rejects them), so no player can ever be mistaken for the house. Revision 0001's CHECK
# on available balances spells it out.
HOUSE = "@house"

metadata = MetaData()

# Auto-increment keys are BIGINT, except on SQLite, which only auto-assigns an INTEGER
# PRIMARY KEY (a 64-bit rowid alias); revision 0001 builds them so.
_ID = BigInteger().with_variant(Integer(), "sqlite")

accounts = Table(
    "wallet_accounts",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("owner", String(128), nullable=False, unique=True),
    Column("balance", BigInteger, nullable=False),
    Column("held", BigInteger, nullable=False),
    Column("created_at", String(40), nullable=False),
)

transactions = Table(
    "wallet_transactions",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    # welcome, grant, adjust, credit_request, settlement, holds, void
    Column("kind", String(32), nullable=False),
    Column("idempotency_key", String(200), nullable=False, unique=True),
    Column("actor", String(128), nullable=False),
    Column("memo", String(500), nullable=False),
    Column("hand_id", String(128)),
    Column("created_at", String(40), nullable=False),
)

entries = Table(
    "wallet_entries",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("tx_id", BigInteger, ForeignKey("wallet_transactions.id"), nullable=False),
    Column("account_id", BigInteger, ForeignKey("wallet_accounts.id"), nullable=False),
    Column("amount", BigInteger, nullable=False),
    # History pages walk one account's entries by id, newest first.
    Index("wallet_entries_account_ix", "account_id", "id"),
    Index("wallet_entries_tx_ix", "tx_id"),
)

holds = Table(
    "wallet_holds",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("hand_id", String(128), nullable=False),
    Column("table_id", String(128), nullable=False),
    Column("account_id", BigInteger, ForeignKey("wallet_accounts.id"), nullable=False),
    Column("amount", BigInteger, nullable=False),
    Column("captured", BigInteger, nullable=False),  # what settlement took from it
    Column("status", String(16), nullable=False),  # held, captured, released
    Column("created_at", String(40), nullable=False),
    Column("updated_at", String(40), nullable=False),
    UniqueConstraint("hand_id", "account_id"),
    Index("wallet_holds_account_ix", "account_id", "status"),
)

settlements = Table(
    "wallet_settlements",
    metadata,
    Column("hand_id", String(128), primary_key=True),
    Column("table_id", String(128), nullable=False),
    # open (holds placed) -> settled | voided; the row every operation on a hand
    # claims, so holds, settle and void of one hand are serialised by its primary key.
    Column("status", String(16), nullable=False),
    Column("requested", Text, nullable=False),  # JSON: payments as the engine sent them
    Column("payments", Text, nullable=False),  # JSON: payments as applied (capped)
    Column("tx_id", BigInteger, ForeignKey("wallet_transactions.id")),  # settle or void
    Column("created_at", String(40), nullable=False),
    # The game whose engine decides the hand ('' before v2): the reconciler asks it.
    Column("game", String(32), nullable=False),
    Index("wallet_settlements_status_ix", "status", "created_at"),
)

#: Before Alembic, the wallet's steps 1-2 were recorded in ``schema_migrations``; each
#: maps to the revision that reproduces it, so such a database is stamped, not re-created.
SCHEMA = AlembicSchema(
    COMPONENT,
    metadata,
    Path(__file__).with_name("migrations"),
    bridge={1: "0001", 2: "0002"},
)


async def migrate_wallet(engine: AsyncEngine, revision: str = "head") -> str:
    """Upgrade the wallet's tables to ``revision`` (under the migration lock: see
    :func:`kalaro.sql_migrations.upgrade`); return the revision they are at."""
    return await upgrade(engine, SCHEMA, revision)
