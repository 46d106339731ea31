"""The schema on a real database: constraints, and the audit. (Its migrations, and that
they build what the Core tables describe: ``tests/integration/migrations``.)"""

from __future__ import annotations

import pytest
from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.proto.wallet import HoldRequest, Payment
from services.wallet import ledger
from services.wallet.schema import accounts


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
