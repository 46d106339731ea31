"""History's schema under Alembic, on SQLite and PostgreSQL: an empty database is built
to head (matching the ``Table``s, recorded once in ``history_alembic_version``); one the
old runner migrated (``schema_migrations``) is stamped at its step's revision and
upgraded, its rows kept, ending exactly like a fresh one; revision 0004 flags existing
rows as not voided; replicas upgrading at once (two real processes) both succeed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, select, text
from sqlalchemy.engine import Connection

from kalaro.sql import Migration, create_engine, migrate
from services.history import stats, store
from services.history.schema import (
    VERSION_TABLE,
    head_revision,
    metadata,
    migrate_history,
    player_hands,
)
from tests.integration.history.history_helpers import stored

ROOT = Path(__file__).resolve().parents[3]

# History's steps as the release before Alembic shipped them (kalaro.sql.migrate).
OLD_STEPS = (
    Migration(
        1,
        "hands and hands by player",
        (
            "CREATE TABLE history_hands ("
            " hand_id VARCHAR(64) NOT NULL PRIMARY KEY,"
            " game VARCHAR(32) NOT NULL,"
            " table_id VARCHAR(64) NOT NULL,"
            " practice BOOLEAN NOT NULL,"
            " finished_ms BIGINT NOT NULL,"
            " record TEXT NOT NULL)",
            "CREATE TABLE history_player_hands ("
            " user_id VARCHAR(128) NOT NULL,"
            " hand_id VARCHAR(64) NOT NULL,"
            " game VARCHAR(32) NOT NULL,"
            " finished_ms BIGINT NOT NULL,"
            " PRIMARY KEY (user_id, hand_id))",
            "CREATE INDEX history_player_hands_newest"
            " ON history_player_hands (user_id, finished_ms, hand_id)",
            "CREATE INDEX history_player_hands_game_newest"
            " ON history_player_hands (user_id, game, finished_ms, hand_id)",
        ),
    ),
    Migration(
        2,
        "each player's outcome of a hand, for stats",
        (
            "ALTER TABLE history_player_hands ADD COLUMN won BOOLEAN NOT NULL DEFAULT FALSE",
            "ALTER TABLE history_player_hands ADD COLUMN net BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE history_player_hands ADD COLUMN practice BOOLEAN NOT NULL DEFAULT FALSE",
            "ALTER TABLE history_player_hands ADD COLUMN derived BOOLEAN NOT NULL DEFAULT FALSE",
            "CREATE INDEX history_player_hands_stats"
            " ON history_player_hands (user_id, game, practice, won, net)",
            "CREATE INDEX history_player_hands_underived ON history_player_hands (derived)",
        ),
    ),
    Migration(
        3,
        "indexes for pruning and day exports",
        (
            "CREATE INDEX history_hands_finished ON history_hands (finished_ms, hand_id)",
            "CREATE INDEX history_player_hands_hand ON history_player_hands (hand_id)",
        ),
    ),
)

# Waits for the go line on stdin, then migrates history, as a starting replica does.
REPLICA = """
import asyncio, logging, sys
from kalaro.sql import create_engine
from services.history.schema import migrate_history

async def main(url):
    engine = create_engine(url)
    try:
        print(await migrate_history(engine), flush=True)
    finally:
        await engine.dispose()

logging.basicConfig(level=logging.INFO)  # Alembic's "Running upgrade" lines
print("ready", flush=True)
sys.stdin.readline()
asyncio.run(main(sys.argv[1]))
"""


async def _fresh(url: str, name: str) -> str:
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


def _shape(conn: Connection) -> dict[str, Any]:
    """Every history table's columns (type, null, default), key and indexes, as reflected."""
    found = inspect(conn)
    return {
        table: (
            [
                (c["name"], str(c["type"]), c["nullable"], str(c.get("default")))
                for c in found.get_columns(table)
            ],
            found.get_pk_constraint(table)["constrained_columns"],
            sorted((i["name"], tuple(i["column_names"])) for i in found.get_indexes(table)),
        )
        for table in sorted(found.get_table_names())
        if table.startswith("history_")
    }


def _differences(conn: Connection) -> list[Any]:
    """What Alembic's autogenerate finds between the database and the ``Table``s."""

    def ours(name: str | None, kind: str, _parent: Any) -> bool:
        # Not the version table, nor other components' tables (schema_migrations).
        return kind != "table" or name in metadata.tables

    context = MigrationContext.configure(conn, opts={"include_name": ours})
    return list(compare_metadata(context, metadata))


async def _state(url: str) -> tuple[list[str], dict[str, Any], list[Any]]:
    """(recorded revisions, the schema's shape, differences from the ``Table``s)."""
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            versions = list(await conn.scalars(text(f"SELECT version_num FROM {VERSION_TABLE}")))
            shape = await conn.run_sync(_shape)
            diffs = await conn.run_sync(_differences)
        return versions, shape, diffs
    finally:
        await engine.dispose()


async def _old_database(url: str, steps: int, unique: str) -> None:
    """A database the old runner migrated to ``steps``, holding hand ``<unique>.0`` as
    that release stored it."""
    engine = create_engine(url)
    try:
        assert await migrate(engine, "history", OLD_STEPS[:steps]) == steps
        item = stored(unique, 0)
        r = item.record
        async with engine.begin() as conn:
            await conn.execute(
                text("INSERT INTO history_hands VALUES (:h, :g, :t, :p, :f, :r)"),
                {"h": r.hand_id, "g": r.game, "t": r.table_id, "p": item.practice,
                 "f": item.finished_ms, "r": msgspec.json.encode(r).decode()},
            )  # fmt: skip
            await conn.execute(
                text(
                    "INSERT INTO history_player_hands (user_id, hand_id, game, finished_ms)"
                    " VALUES (:u, :h, :g, :f)"
                ),
                {"u": f"{unique}-a", "h": r.hand_id, "g": r.game, "f": item.finished_ms},
            )
    finally:
        await engine.dispose()


async def test_an_empty_database_is_built_to_head_once(database_url: str) -> None:
    head = head_revision()
    engine = create_engine(database_url)
    try:
        assert await migrate_history(engine) == head
        assert await migrate_history(engine) == head  # again: nothing to do
        async with engine.connect() as conn:
            assert not await conn.run_sync(lambda c: inspect(c).has_table("schema_migrations"))
    finally:
        await engine.dispose()
    versions, _, diffs = await _state(database_url)
    assert versions == [head]
    assert diffs == []


@pytest.mark.parametrize("steps", [3, 2])
async def test_a_database_the_old_runner_migrated_is_stamped_not_recreated(
    database_url: str, steps: int, unique: str
) -> None:
    head = head_revision()
    fresh = await _fresh(database_url, "fresh")
    engine = create_engine(fresh)
    try:
        await migrate_history(engine)
    finally:
        await engine.dispose()
    _, fresh_shape, _ = await _state(fresh)

    url = await _fresh(database_url, "old")
    await _old_database(url, steps, unique)
    engine = create_engine(url)
    try:
        # Without the stamp, revision 0001 would fail: its tables exist.
        assert await migrate_history(engine) == head
        assert await store.load_hand(engine, f"{unique}.0") == stored(unique, 0).record
        page = await store.player_page(
            engine, f"{unique}-a", game=None, before_ms=None, before_id=None, limit=5
        )
        assert [h.hand_id for h in page] == [f"{unique}.0"]
        async with engine.connect() as conn:
            kept = await conn.scalars(
                text("SELECT version FROM schema_migrations WHERE component = 'history'")
            )
            assert sorted(kept) == list(range(1, steps + 1))  # the old runner's, as they were
            flags = await conn.execute(select(player_hands.c.voided, player_hands.c.derived))
            assert [tuple(row) for row in flags] == [(False, False)]  # the backfill's to fill
    finally:
        await engine.dispose()
    versions, shape, diffs = await _state(url)
    assert versions == [head]
    assert shape == fresh_shape
    assert diffs == []


async def test_revision_0004_keeps_the_stored_hands_counted(database_url: str, unique: str) -> None:
    url = await _fresh(database_url, "at-0003")
    at_0003 = create_engine(url)
    try:
        assert await migrate_history(at_0003, "0003") == "0003"
        item = stored(unique, 0)  # seat 0 won: 20 credits
        r = item.record
        async with at_0003.begin() as conn:
            await conn.execute(
                text(
                    "INSERT INTO history_hands"
                    " (hand_id, game, table_id, practice, finished_ms, record)"
                    " VALUES (:h, :g, :t, :p, :f, :r)"
                ),
                {"h": r.hand_id, "g": r.game, "t": r.table_id, "p": item.practice,
                 "f": item.finished_ms, "r": msgspec.json.encode(r).decode()},
            )  # fmt: skip
            await conn.execute(
                text(
                    "INSERT INTO history_player_hands"
                    " (user_id, hand_id, game, finished_ms, won, net, practice, derived)"
                    " VALUES (:u, :h, :g, :f, TRUE, 20, FALSE, TRUE)"
                ),
                {"u": f"{unique}-a", "h": r.hand_id, "g": r.game, "f": item.finished_ms},
            )
        assert await migrate_history(at_0003) == head_revision()
        figures = await stats.player_stats(at_0003, f"{unique}-a")
        assert [(g.hands, g.won, g.net) for g in figures.games] == [(1, 1, 20)]
        async with at_0003.connect() as conn:
            assert await conn.scalar(text("SELECT voided FROM history_hands")) in (False, 0)
    finally:
        await at_0003.dispose()


def _race(url: str) -> list[tuple[int, str, str]]:
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
        stdout, stderr = replica.communicate(timeout=90)
        results.append((replica.returncode, stdout.strip(), stderr))
    return results


async def test_two_replicas_upgrading_at_once_both_succeed(database_url: str, unique: str) -> None:
    """Each round starts two processes together: on an empty database, then on one the
    old runner left (so the stamp races too). One migrates, the other waits and finds
    nothing to do; a second stamp or CREATE would fail one of them or record twice."""
    head = head_revision()
    for round_ in range(4):
        url = await _fresh(database_url, f"race-{round_}")
        if round_ % 2:
            await _old_database(url, 3, unique)
        results = _race(url)
        failures = [stderr[-1500:] for code, _, stderr in results if code != 0]
        assert not failures, f"round {round_}: a replica failed:\n" + "\n".join(failures)
        assert [out for _, out, _ in results] == [head, head]
        versions, _, diffs = await _state(url)
        assert versions == [head], round_
        assert diffs == [], round_
        ran = sum(stderr.count("Running upgrade 0003 -> 0004") for _, _, stderr in results)
        assert ran == 1, f"round {round_}: revision 0004 ran {ran} times"
