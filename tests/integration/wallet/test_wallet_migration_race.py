"""Replicas starting together on a fresh database both migrate it and start.

Two real processes (as two replicas of the wallet and auth services would be) are
released at the same moment on an empty database, several rounds: both exit 0 and
the schema ends at the latest version of each component, recorded once. On
PostgreSQL the migration runner serialises them with an advisory lock; on SQLite with
the database's write lock (``BEGIN IMMEDIATE``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sqlalchemy import text

from kalaro.sql import create_engine
from services.auth.schema import MIGRATIONS as AUTH_MIGRATIONS
from services.wallet.schema import migrations as wallet_migrations

ROUNDS = 5
ROOT = Path(__file__).resolve().parents[3]

# Waits for the go line on stdin, then migrates both components at once.
REPLICA = """
import asyncio, sys
from kalaro.sql import create_engine, migrate
from services.auth.schema import COMPONENT, MIGRATIONS
from services.wallet.schema import migrate_wallet

async def main(url):
    engine = create_engine(url)
    try:
        await asyncio.gather(migrate_wallet(engine), migrate(engine, COMPONENT, MIGRATIONS))
    finally:
        await engine.dispose()

print("ready", flush=True)
sys.stdin.readline()
asyncio.run(main(sys.argv[1]))
"""


def _race(url: str) -> list[tuple[int, str]]:
    replicas = [
        subprocess.Popen(
            [sys.executable, "-c", REPLICA, url],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for replica in replicas:  # both imported everything and wait at the line
        assert replica.stdout is not None
        assert replica.stdout.readline().strip() == "ready"
    for replica in replicas:
        assert replica.stdin is not None
        replica.stdin.write("go\n")
        replica.stdin.flush()
    results = []
    for replica in replicas:
        _, stderr = replica.communicate(timeout=60)
        results.append((replica.returncode, stderr))
    return results


async def _versions(url: str) -> dict[str, list[int]]:
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(
                text("SELECT component, version FROM schema_migrations ORDER BY 1, 2")
            )
            found: dict[str, list[int]] = {}
            for component, version in rows:
                found.setdefault(component, []).append(version)
            return found
    finally:
        await engine.dispose()


async def _fresh(url: str, round_: int) -> str:
    """An empty database for one round: a new SQLite file, or PostgreSQL's schema reset."""
    if url.startswith("sqlite"):
        return url.replace("kalaro.db", f"kalaro-{round_}.db")
    engine = create_engine(url)
    try:
        async with engine.begin() as conn:
            await conn.execute(text("DROP SCHEMA public CASCADE"))
            await conn.execute(text("CREATE SCHEMA public"))
    finally:
        await engine.dispose()
    return url


async def test_two_replicas_migrating_a_fresh_database_at_once_both_succeed(
    database_url: str,
) -> None:
    dialect = "sqlite" if database_url.startswith("sqlite") else "postgresql"
    expected = {
        "auth": [m.version for m in AUTH_MIGRATIONS],
        "wallet": [m.version for m in wallet_migrations(dialect)],
    }
    for round_ in range(ROUNDS):
        url = await _fresh(database_url, round_)
        results = _race(url)
        failures = [stderr[-1500:] for code, stderr in results if code != 0]
        assert not failures, f"round {round_}: a replica failed:\n" + "\n".join(failures)
        assert await _versions(url) == expected
