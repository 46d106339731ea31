"""The wallet's tables: SQLAlchemy Core ``Table``s for queries, numbered migrations for DDL.

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

Migrations are literal SQL, frozen once shipped; the only dialect difference is the
auto-increment primary key, rendered per dialect. Timestamps are ISO-8601 UTC strings
(``2025-01-31T12:00:00.000000+00:00``): portable, sortable, and what the contract sends.
All tables carry a ``wallet_`` prefix because by default the wallet shares one SQLite
file with the other services that own tables.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    ForeignKey,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.sql import Migration, migrate

COMPONENT = "wallet"

# The owner name of the house account. User ids may not start with "@" (the ledger
# rejects them), so no player can ever be mistaken for the house.
HOUSE = "@house"

metadata = MetaData()

accounts = Table(
    "wallet_accounts",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("owner", String(128), nullable=False, unique=True),
    Column("balance", BigInteger, nullable=False),
    Column("held", BigInteger, nullable=False),
    Column("created_at", String(40), nullable=False),
)

transactions = Table(
    "wallet_transactions",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
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
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("tx_id", BigInteger, ForeignKey("wallet_transactions.id"), nullable=False),
    Column("account_id", BigInteger, ForeignKey("wallet_accounts.id"), nullable=False),
    Column("amount", BigInteger, nullable=False),
)

holds = Table(
    "wallet_holds",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("hand_id", String(128), nullable=False),
    Column("table_id", String(128), nullable=False),
    Column("account_id", BigInteger, ForeignKey("wallet_accounts.id"), nullable=False),
    Column("amount", BigInteger, nullable=False),
    Column("captured", BigInteger, nullable=False),  # what settlement took from it
    Column("status", String(16), nullable=False),  # held, captured, released
    Column("created_at", String(40), nullable=False),
    Column("updated_at", String(40), nullable=False),
    UniqueConstraint("hand_id", "account_id"),
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
)

credit_requests = Table(
    "wallet_credit_requests",
    metadata,
    Column("request_id", String(64), primary_key=True),
    Column("user_id", String(128), nullable=False),
    Column("amount", BigInteger, nullable=False),
    Column("note", String(500), nullable=False),
    Column("status", String(16), nullable=False),  # pending, approved, rejected
    Column("created_at", String(40), nullable=False),
    Column("decided_by", String(128)),
    Column("decided_at", String(40)),
    Column("reason", String(500), nullable=False),
    Column("tx_id", BigInteger, ForeignKey("wallet_transactions.id")),
)

# ``{pk}`` is the only dialect-specific piece of DDL (see ``migrations``).
_V1 = (
    f"""CREATE TABLE wallet_accounts (
        id {{pk}},
        owner VARCHAR(128) NOT NULL UNIQUE,
        balance BIGINT NOT NULL DEFAULT 0,
        held BIGINT NOT NULL DEFAULT 0,
        created_at VARCHAR(40) NOT NULL,
        CONSTRAINT wallet_accounts_held_ck CHECK (held >= 0),
        CONSTRAINT wallet_accounts_available_ck CHECK (owner = '{HOUSE}' OR balance >= held)
    )""",
    """CREATE TABLE wallet_transactions (
        id {pk},
        kind VARCHAR(32) NOT NULL,
        idempotency_key VARCHAR(200) NOT NULL UNIQUE,
        actor VARCHAR(128) NOT NULL,
        memo VARCHAR(500) NOT NULL DEFAULT '',
        hand_id VARCHAR(128),
        created_at VARCHAR(40) NOT NULL
    )""",
    """CREATE TABLE wallet_entries (
        id {pk},
        tx_id BIGINT NOT NULL REFERENCES wallet_transactions (id),
        account_id BIGINT NOT NULL REFERENCES wallet_accounts (id),
        amount BIGINT NOT NULL
    )""",
    # History pages walk one account's entries by id, newest first.
    "CREATE INDEX wallet_entries_account_ix ON wallet_entries (account_id, id)",
    "CREATE INDEX wallet_entries_tx_ix ON wallet_entries (tx_id)",
    """CREATE TABLE wallet_holds (
        id {pk},
        hand_id VARCHAR(128) NOT NULL,
        table_id VARCHAR(128) NOT NULL,
        account_id BIGINT NOT NULL REFERENCES wallet_accounts (id),
        amount BIGINT NOT NULL,
        captured BIGINT NOT NULL DEFAULT 0,
        status VARCHAR(16) NOT NULL,
        created_at VARCHAR(40) NOT NULL,
        updated_at VARCHAR(40) NOT NULL,
        CONSTRAINT wallet_holds_hand_account_uq UNIQUE (hand_id, account_id),
        CONSTRAINT wallet_holds_amount_ck CHECK (amount > 0),
        CONSTRAINT wallet_holds_captured_ck CHECK (captured >= 0 AND captured <= amount),
        CONSTRAINT wallet_holds_status_ck CHECK (status IN ('held', 'captured', 'released'))
    )""",
    "CREATE INDEX wallet_holds_account_ix ON wallet_holds (account_id, status)",
    """CREATE TABLE wallet_settlements (
        hand_id VARCHAR(128) PRIMARY KEY,
        table_id VARCHAR(128) NOT NULL,
        status VARCHAR(16) NOT NULL,
        requested TEXT NOT NULL DEFAULT '[]',
        payments TEXT NOT NULL DEFAULT '[]',
        tx_id BIGINT REFERENCES wallet_transactions (id),
        created_at VARCHAR(40) NOT NULL,
        CONSTRAINT wallet_settlements_status_ck CHECK (status IN ('open', 'settled', 'voided'))
    )""",
    """CREATE TABLE wallet_credit_requests (
        request_id VARCHAR(64) PRIMARY KEY,
        user_id VARCHAR(128) NOT NULL,
        amount BIGINT NOT NULL,
        note VARCHAR(500) NOT NULL DEFAULT '',
        status VARCHAR(16) NOT NULL,
        created_at VARCHAR(40) NOT NULL,
        decided_by VARCHAR(128),
        decided_at VARCHAR(40),
        reason VARCHAR(500) NOT NULL DEFAULT '',
        tx_id BIGINT REFERENCES wallet_transactions (id),
        CONSTRAINT wallet_credit_requests_amount_ck CHECK (amount > 0),
        CONSTRAINT wallet_credit_requests_status_ck
            CHECK (status IN ('pending', 'approved', 'rejected'))
    )""",
    "CREATE INDEX wallet_credit_requests_status_ix ON wallet_credit_requests (status, created_at)",
)

# The reconciler asks each open hand's engine what became of it (v2).
_V2 = (
    "ALTER TABLE wallet_settlements ADD COLUMN game VARCHAR(32) NOT NULL DEFAULT ''",
    "CREATE INDEX wallet_settlements_status_ix ON wallet_settlements (status, created_at)",
)

# An auto-increment BIGINT key: SQLite only auto-assigns an ``INTEGER PRIMARY KEY``
# (a 64-bit rowid alias); PostgreSQL uses an identity column.
_PRIMARY_KEY = {
    "sqlite": "INTEGER PRIMARY KEY",
    "postgresql": "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
}


def migrations(dialect: str) -> list[Migration]:
    """The wallet's numbered migrations rendered for ``dialect`` (sqlite, postgresql)."""
    try:
        pk = _PRIMARY_KEY[dialect]
    except KeyError:
        raise ValueError(f"wallet: unsupported database dialect {dialect!r}") from None
    return [
        Migration(
            1,
            "ledger: accounts, transactions, entries, holds, settlements, requests",
            [s.replace("{pk}", pk) for s in _V1],
        ),
        Migration(2, "settlements: the hand's game; open hands by age", list(_V2)),
    ]


async def migrate_wallet(engine: AsyncEngine) -> int:
    """Bring the wallet's tables up to date; return the schema version."""
    return await migrate(engine, COMPONENT, migrations(engine.dialect.name))
