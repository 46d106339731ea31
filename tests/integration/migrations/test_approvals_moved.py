"""Host access and credit requests, moved into the one approval workflow with their rows
(auth's revision 0004, the wallet's 0003), whichever service migrates first, on SQLite
and PostgreSQL; and a credit request granted before the move is never granted again."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from kalaro.sql import create_engine
from services.auth import approval_store
from services.auth.schema import migrate_auth
from services.wallet import ledger
from services.wallet.schema import migrate_wallet

AT = "2026-01-01T00:00:00.000000+00:00"
AT_MS = 1_767_225_600_000
LATER = "2026-01-01T00:00:01.500000+00:00"
LATER_MS = AT_MS + 1_500


async def _seed(conn: AsyncConnection, u: str) -> None:
    """Rows as the releases before the move left them: three people, an admin; host
    requests pending and decided; credit requests pending, granted and rejected."""
    for who, roles in ((f"{u}p", "player"), (f"{u}h", "player,host"), (f"{u}a", "player,admin")):
        await conn.execute(
            text("INSERT INTO auth_users (id, email, display_name, roles, created_at)"
                 " VALUES (:i, :e, :n, :r, 1)"),
            {"i": who, "e": f"{who}@example.com", "n": f"name {who}", "r": roles},
        )  # fmt: skip
    host = (
        (f"{u}hr1", f"{u}p", "pending", None, None, ""),
        (f"{u}hr2", f"{u}h", "approved", f"{u}a", 20, "welcome aboard"),
        (f"{u}hr3", f"{u}p", "rejected", f"{u}a", 30, "not yet"),
    )
    for rid, who, status, by, at, reason in host:
        await conn.execute(
            text("INSERT INTO auth_host_requests (id, user_id, note, status, created_at,"
                 " decided_by, decided_at, reason) VALUES (:i, :u, 'let me host', :s, 10,"
                 " :b, :at, :r)"),
            {"i": rid, "u": who, "s": status, "b": by, "at": at, "r": reason},
        )  # fmt: skip
    # The granted one's ledger transaction, as the wallet's decide made it.
    await conn.execute(
        text("INSERT INTO wallet_transactions (kind, idempotency_key, actor, memo, created_at)"
             " VALUES ('credit_request', :k, :a, 'ok', :at)"),
        {"k": f"credit_request:{u}cr2", "a": f"{u}a", "at": LATER},
    )  # fmt: skip
    tx_id = await conn.scalar(
        text("SELECT id FROM wallet_transactions WHERE idempotency_key = :k"),
        {"k": f"credit_request:{u}cr2"},
    )
    credit = (
        (f"{u}cr1", "pending", None, None, "", None),
        (f"{u}cr2", "approved", f"{u}a", LATER, "ok", tx_id),
        (f"{u}cr3", "rejected", f"{u}a", LATER, "too much", None),
    )
    for rid, status, by, at, reason, tx in credit:
        await conn.execute(
            text("INSERT INTO wallet_credit_requests (request_id, user_id, amount, note,"
                 " status, created_at, decided_by, decided_at, reason, tx_id) VALUES"
                 " (:i, :u, 300, 'more please', :s, :c, :b, :at, :r, :tx)"),
            {"i": rid, "u": f"{u}p", "s": status, "c": AT, "b": by, "at": at, "r": reason,
             "tx": tx},
        )  # fmt: skip


async def _has(engine: AsyncEngine, table: str) -> bool:
    async with engine.connect() as conn:
        return await conn.run_sync(lambda c: inspect(c).has_table(table))


@pytest.mark.parametrize("wallet_first", [True, False], ids=["wallet-first", "auth-first"])
async def test_both_kinds_move_with_their_states_and_audit(
    database_url: str, unique: str, wallet_first: bool
) -> None:
    engine = create_engine(database_url)
    u = unique
    try:
        await migrate_auth(engine, "0003")
        await migrate_wallet(engine, "0002")
        async with engine.begin() as conn:
            await _seed(conn, u)
        if wallet_first:
            assert await migrate_wallet(engine) == "0003"
            # It holds rows nobody moved yet: kept for auth's revision.
            assert await _has(engine, "wallet_credit_requests")
        assert await migrate_auth(engine) == "0004"
        assert await migrate_wallet(engine) == "0003"
        assert not await _has(engine, "auth_host_requests")
        assert not await _has(engine, "wallet_credit_requests")

        async with engine.connect() as conn:
            rows = {
                r.approval_id: r
                for r in await approval_store.page(
                    conn, kind=None, status=None, user_id=None, limit=50, offset=0
                )
            }
            trails = {a: await approval_store.events(conn, a) for a in rows}
        seen = {a: (r.kind, r.status, r.amount, r.decided_by, r.reason) for a, r in rows.items()}
        assert seen == {
            f"{u}hr1": ("host_access", "pending", 0, None, ""),
            f"{u}hr2": ("host_access", "applied", 0, f"{u}a", "welcome aboard"),
            f"{u}hr3": ("host_access", "declined", 0, f"{u}a", "not yet"),
            f"{u}cr1": ("credits", "pending", 300, None, ""),
            f"{u}cr2": ("credits", "applied", 300, f"{u}a", "ok"),
            f"{u}cr3": ("credits", "declined", 300, f"{u}a", "too much"),
        }
        granted = rows[f"{u}cr2"]
        assert (granted.created_at, granted.decided_at, granted.applied_at) == (
            AT_MS,
            LATER_MS,
            LATER_MS,
        )
        assert granted.tx_id is not None
        assert rows[f"{u}cr1"].display_name == f"name {u}p"
        assert rows[f"{u}hr2"].applied_at == 20
        # The audit trail of each: asked, then decided, then applied.
        assert [e[1:3] for e in trails[f"{u}hr2"]] == [
            ("pending", f"{u}h"),
            ("approved", f"{u}a"),
            ("applied", f"{u}a"),
        ]
        assert [e[1] for e in trails[f"{u}cr3"]] == ["pending", "declined"]
        assert trails[f"{u}cr3"][1][3:] == (LATER_MS, "too much")
        assert [e[1] for e in trails[f"{u}cr1"]] == ["pending"]

        # Granting the one granted before the move again moves nothing: same key.
        again = await ledger.grant_approved(engine, f"{u}cr2", f"{u}p", 300, f"{u}a", "ok")
        assert (again.repeated, again.tx_id) == (True, granted.tx_id)
        # Still one pending host request per person.
        async with engine.connect() as conn:
            pending = await approval_store.pending_host_access(conn, f"{u}p")
        assert pending is not None and pending.approval_id == f"{u}hr1"
    finally:
        await engine.dispose()


async def test_a_new_database_has_no_old_tables(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        await migrate_wallet(engine)
        await migrate_auth(engine)
        for table in ("auth_host_requests", "wallet_credit_requests"):
            assert not await _has(engine, table), table
        assert await _has(engine, "auth_approvals")
    finally:
        await engine.dispose()
