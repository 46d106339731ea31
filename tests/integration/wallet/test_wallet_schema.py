"""The schema on a real database: migrations, the Core tables, constraints, and the audit."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.proto.wallet import HoldRequest, Payment
from services.wallet import ledger
from services.wallet.schema import accounts, metadata, migrate_wallet, migrations


async def test_migrations_run_once_and_match_the_core_tables(engine: AsyncEngine) -> None:
    latest = migrations(engine.dialect.name)[-1].version
    assert await migrate_wallet(engine) == latest  # a second run is a no-op
    async with engine.connect() as conn:
        applied = (
            await conn.execute(
                text("SELECT version FROM schema_migrations WHERE component = 'wallet'")
            )
        ).scalars()
        assert list(applied) == [m.version for m in migrations(engine.dialect.name)]

        def columns(sync_conn: object) -> dict[str, set[str]]:
            inspector = inspect(sync_conn)
            return {
                t.name: {c["name"] for c in inspector.get_columns(t.name)}
                for t in metadata.sorted_tables
            }

        in_database = await conn.run_sync(columns)
    # The queries use the Core tables; the database was built by the SQL migrations.
    assert in_database == {t.name: {c.name for c in t.columns} for t in metadata.sorted_tables}


async def test_database_refuses_a_negative_available_balance(engine: AsyncEngine) -> None:
    await ledger.welcome_grant(engine, "p1", 100)
    await ledger.place_holds(engine, "t", "h", [HoldRequest(user_id="p1", amount=80)])
    with pytest.raises(IntegrityError):
        async with engine.begin() as conn:
            await conn.execute(update(accounts).where(accounts.c.owner == "p1").values(balance=50))
    assert (await ledger.get_balance(engine, "p1")).available == 20


async def test_audit_finds_tampered_books(engine: AsyncEngine) -> None:
    for user in ("p1", "p2"):
        await ledger.welcome_grant(engine, user, 100)
    await ledger.place_holds(
        engine,
        "t",
        "h",
        [HoldRequest(user_id="p1", amount=50), HoldRequest(user_id="p2", amount=50)],
    )
    await ledger.settle(
        engine, "h", [Payment(user_id="p1", amount=-50), Payment(user_id="p2", amount=50)]
    )
    clean = await ledger.audit(engine)
    assert (clean.total, clean.accounts, clean.mismatched_accounts) == (0, 3, ())

    async with engine.begin() as conn:  # credits appear from nowhere on one account
        await conn.execute(update(accounts).where(accounts.c.owner == "p2").values(balance=999))
        await conn.execute(update(accounts).where(accounts.c.owner == "p1").values(held=7))
    report = await ledger.audit(engine)

    assert report.total == 999 - 150
    assert set(report.mismatched_accounts) == {"p1", "p2"}
    assert report.negative_available == ()
