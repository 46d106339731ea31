"""Databases as the releases before Alembic left them, with rows in them.

The hand-written runner those releases used is gone; what it left is reproduced
exactly: each service's tables built by its steps' SQL (the revisions that bridge them
run it word for word, and a one-off check at the switch compared the two on SQLite and
PostgreSQL), and its ``schema_migrations`` table with one row per step run.

Each service's :class:`Case` seeds rows as the release at step 1 stored them (only the
columns step 1 made; later steps' columns have defaults) and, after the upgrade, reads
them back through the service's own code.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import msgspec
from alembic import command
from sqlalchemy import select, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from kalaro.proto.history import StoredHand
from kalaro.sql import create_engine
from kalaro.sql_migrations import AlembicSchema
from services.auth import approval_store
from services.auth import store as auth_store
from services.auth.schema import SCHEMA as AUTH
from services.auth.schema import migrate_auth
from services.history import store as history_store
from services.history.schema import SCHEMA as HISTORY
from services.history.schema import migrate_history, player_hands
from services.wallet import ledger
from services.wallet.schema import SCHEMA as WALLET
from services.wallet.schema import migrate_wallet
from tests.integration.history.history_helpers import stored

# The old runner's bookkeeping table, as it created it.
SCHEMA_MIGRATIONS = (
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " component VARCHAR(64) NOT NULL,"
    " version INTEGER NOT NULL,"
    " description VARCHAR(200) NOT NULL,"
    " PRIMARY KEY (component, version))"
)


@dataclass(frozen=True)
class Case:
    schema: AlembicSchema
    migrate: Callable[[AsyncEngine], Awaitable[str]]  # the service's public function
    seed: Callable[[AsyncConnection, str], Awaitable[None]]
    check: Callable[[AsyncEngine, str, int], Awaitable[None]]  # (…, the step bridged)

    @property
    def name(self) -> str:
        return self.schema.component


async def empty_database(url: str, name: str) -> str:
    """An empty database: a new SQLite file, or the PostgreSQL scratch's schema reset."""
    if url.startswith("sqlite"):
        return url.replace("kalaro.db", f"{name}.db")
    engine = create_engine(url)
    try:
        async with engine.begin() as conn:
            await conn.execute(text("DROP SCHEMA public CASCADE"))
            await conn.execute(text("CREATE SCHEMA public"))
    finally:
        await engine.dispose()
    return url


async def old_database(url: str, case: Case, steps: int, unique: str) -> None:
    """A database the old runner migrated to ``steps``, holding ``case``'s seed rows."""

    def build(conn: Connection) -> None:
        with conn.begin():
            command.upgrade(case.schema.config(conn), case.schema.bridge[steps])
            conn.execute(text(f"DROP TABLE {case.schema.version_table}"))
            conn.execute(text(SCHEMA_MIGRATIONS))
            for version in range(1, steps + 1):
                conn.execute(
                    text("INSERT INTO schema_migrations VALUES (:c, :v, :d)"),
                    {"c": case.name, "v": version, "d": f"step {version}"},
                )

    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            await conn.run_sync(build)
        async with engine.begin() as conn:
            await case.seed(conn, unique)
    finally:
        await engine.dispose()


# --- auth -----------------------------------------------------------------------------


async def _seed_auth(conn: AsyncConnection, unique: str) -> None:
    users = (  # (id, google_sub, roles): step 2 verifies Google's, admins' and bots'
        (f"{unique}g", f"sub-{unique}", "player"),
        (f"{unique}p", None, "player"),
        (f"{unique}a", None, "player,admin"),
    )
    for user_id, sub, roles in users:
        await conn.execute(
            text(
                "INSERT INTO auth_users"
                " (id, email, display_name, password_hash, google_sub, roles, created_at)"
                " VALUES (:i, :e, :n, :h, :g, :r, 1000)"
            ),
            {"i": user_id, "e": f"{user_id}@example.com", "n": user_id, "h": "argon2-hash",
             "g": sub, "r": roles},
        )  # fmt: skip
    await conn.execute(
        text("INSERT INTO auth_refresh_tokens VALUES ('t' || :u, 'f', :u, 1, 2, NULL, NULL)"),
        {"u": f"{unique}p"},
    )
    await conn.execute(
        text(
            "INSERT INTO auth_host_requests (id, user_id, note, status, created_at)"
            " VALUES ('r' || :u, :u, 'let me host', 'pending', 3)"
        ),
        {"u": f"{unique}p"},
    )


async def _check_auth(engine: AsyncEngine, unique: str, steps: int) -> None:
    async with engine.connect() as conn:
        verified = {}
        for suffix in "gpa":
            account = await auth_store.account_by_email(conn, f"{unique}{suffix}@example.com")
            assert account is not None, suffix
            verified[suffix] = account.email_verified
        pending = await approval_store.pending_host_access(conn, f"{unique}p")
    # Revision 0002's UPDATE verifies Google-linked and admin accounts (a database
    # bridged at step 2 or later ran it before it held these rows).
    assert verified == {"g": steps < 2, "p": False, "a": steps < 2}
    # Revision 0004 moved the host request into the one approval workflow.
    assert pending is not None and (pending.note, pending.display_name) == (
        "let me host",
        f"{unique}p",
    )


# --- wallet ---------------------------------------------------------------------------


async def _seed_wallet(conn: AsyncConnection, unique: str) -> None:
    player = f"{unique}-p"
    at = "2026-01-01T00:00:00.000000+00:00"
    for owner, balance in (("@house", -100), (player, 100)):
        await conn.execute(
            text("INSERT INTO wallet_accounts (owner, balance, held, created_at)"
                 " VALUES (:o, :b, 0, :at)"),
            {"o": owner, "b": balance, "at": at},
        )  # fmt: skip
    await conn.execute(
        text("INSERT INTO wallet_transactions (kind, idempotency_key, actor, memo, created_at)"
             " VALUES ('welcome', :k, 'system', '', :at)"),
        {"k": f"welcome:{player}", "at": at},
    )  # fmt: skip
    for owner, amount in (("@house", -100), (player, 100)):
        await conn.execute(
            text(
                "INSERT INTO wallet_entries (tx_id, account_id, amount)"
                " SELECT t.id, a.id, :amount FROM wallet_transactions t, wallet_accounts a"
                " WHERE t.idempotency_key = :k AND a.owner = :o"
            ),
            {"amount": amount, "k": f"welcome:{player}", "o": owner},
        )
    await conn.execute(
        text("INSERT INTO wallet_settlements (hand_id, table_id, status, created_at)"
             " VALUES (:h, 't', 'settled', :at)"),
        {"h": f"{unique}.0", "at": at},
    )  # fmt: skip


async def _check_wallet(engine: AsyncEngine, unique: str, _steps: int) -> None:
    assert (await ledger.get_balance(engine, f"{unique}-p")).available == 100
    report = await ledger.audit(engine)
    assert (report.total, report.accounts, report.mismatched_accounts) == (0, 2, ())
    async with engine.connect() as conn:
        game = await conn.scalar(text("SELECT game FROM wallet_settlements"))
    assert game == ""  # revision 0002's default for hands settled before it


# --- history --------------------------------------------------------------------------


async def insert_history_hand(conn: AsyncConnection, item: StoredHand) -> None:
    """Hand ``item`` in ``history_hands``, in the columns step 1 made."""
    r = item.record
    await conn.execute(
        text(
            "INSERT INTO history_hands (hand_id, game, table_id, practice, finished_ms, record)"
            " VALUES (:h, :g, :t, :p, :f, :r)"
        ),
        {"h": r.hand_id, "g": r.game, "t": r.table_id, "p": item.practice,
         "f": item.finished_ms, "r": msgspec.json.encode(r).decode()},
    )  # fmt: skip


async def _seed_history(conn: AsyncConnection, unique: str) -> None:
    item = stored(unique, 0)
    await insert_history_hand(conn, item)
    await conn.execute(
        text(
            "INSERT INTO history_player_hands (user_id, hand_id, game, finished_ms)"
            " VALUES (:u, :h, :g, :f)"
        ),
        {"u": f"{unique}-a", "h": item.record.hand_id, "g": item.record.game,
         "f": item.finished_ms},
    )  # fmt: skip


async def _check_history(engine: AsyncEngine, unique: str, _steps: int) -> None:
    assert await history_store.load_hand(engine, f"{unique}.0") == stored(unique, 0).record
    page = await history_store.player_page(
        engine, f"{unique}-a", game=None, before_ms=None, before_id=None, limit=5
    )
    assert [h.hand_id for h in page] == [f"{unique}.0"]
    async with engine.connect() as conn:
        flags = await conn.execute(select(player_hands.c.voided, player_hands.c.derived))
        # Not voided (0004's default); the start-up backfill's to derive (0002's).
        assert [tuple(bool(v) for v in row) for row in flags] == [(False, False)]


CASES = {
    "auth": Case(AUTH, migrate_auth, _seed_auth, _check_auth),
    "wallet": Case(WALLET, migrate_wallet, _seed_wallet, _check_wallet),
    "history": Case(HISTORY, migrate_history, _seed_history, _check_history),
}
