"""Every service's schema under Alembic (auth, wallet, history), on SQLite and PostgreSQL.

An empty database is built to head, recorded once in ``<service>_alembic_version``,
matching the service's ``Table``s; one the old runner migrated (``schema_migrations``),
with rows in it, is stamped at its step's revision and upgraded, its rows kept, ending
exactly like a fresh one; replicas upgrading at once (two real processes) both succeed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import UniqueConstraint, inspect, select, text
from sqlalchemy.engine import Connection

from kalaro.sql import create_engine
from kalaro.sql_migrations import AlembicSchema
from tests.integration.migrations.old_releases import CASES, Case, empty_database, old_database

ROOT = Path(__file__).resolve().parents[3]
SERVICES = sorted(CASES)

# Waits for the go line on stdin, then migrates the services named in argv at once (as
# replicas starting together, or the migrate Job beside them, do).
REPLICA = """
import asyncio, importlib, logging, sys
from kalaro.sql import create_engine

async def main(url, names):
    engine = create_engine(url)
    try:
        steps = [getattr(importlib.import_module(f"services.{n}.schema"), f"migrate_{n}")
                 for n in names]
        print(*await asyncio.gather(*(step(engine) for step in steps)), flush=True)
    finally:
        await engine.dispose()

logging.basicConfig(level=logging.INFO)  # Alembic's "Running upgrade" lines
print("ready", flush=True)
sys.stdin.readline()
asyncio.run(main(sys.argv[1], sys.argv[2:]))
"""


def _shape(conn: Connection, schema: AlembicSchema) -> dict[str, Any]:
    """The service's tables as reflected: columns (type, null, default), key, indexes,
    unique constraints, foreign keys and CHECKs."""
    found = inspect(conn)
    return {
        table: (
            [
                (c["name"], str(c["type"]), c["nullable"], str(c.get("default")))
                for c in found.get_columns(table)
            ],
            found.get_pk_constraint(table)["constrained_columns"],
            sorted((i["name"], tuple(i["column_names"])) for i in found.get_indexes(table)),
            sorted(str(u["column_names"]) for u in found.get_unique_constraints(table)),
            sorted(
                (str(k["constrained_columns"]), k["referred_table"], str(k["options"]))
                for k in found.get_foreign_keys(table)
            ),
            sorted(str(c["sqltext"]) for c in found.get_check_constraints(table)),
        )
        for table in sorted(found.get_table_names())
        if table in schema.metadata.tables
    }


def _sqlite_cannot_reflect(diff: Any, schema: AlembicSchema) -> bool:
    """Differences that come from SQLite's reflection, not the schema: a primary key
    column reads as nullable, and inline UNIQUE and ON DELETE are not read back."""
    if isinstance(diff, list):  # one column's changes
        tables = schema.metadata.tables
        return all(d[0] == "modify_nullable" and tables[d[2]].c[d[3]].primary_key for d in diff)
    if diff[0] in ("add_constraint", "remove_constraint"):
        return isinstance(diff[1], UniqueConstraint)
    return diff[0] in ("add_fk", "remove_fk")


def _differences(conn: Connection, schema: AlembicSchema) -> list[Any]:
    """What Alembic's autogenerate finds between the database and the ``Table``s."""

    def ours(name: str | None, kind: str, _parent: Any) -> bool:
        # Not the version table, nor other services' tables (schema_migrations).
        return kind != "table" or name in schema.metadata.tables

    context = MigrationContext.configure(conn, opts={"include_name": ours})
    found = compare_metadata(context, schema.metadata)
    if conn.dialect.name == "sqlite":
        return [d for d in found if not _sqlite_cannot_reflect(d, schema)]
    return list(found)


async def _state(url: str, schema: AlembicSchema) -> tuple[list[str], dict[str, Any], list[Any]]:
    """(recorded revisions, the schema's shape, differences from the ``Table``s)."""
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            table = schema.version_table
            versions = list(await conn.scalars(text(f"SELECT version_num FROM {table}")))
            shape = await conn.run_sync(_shape, schema)
            diffs = await conn.run_sync(_differences, schema)
        return versions, shape, diffs
    finally:
        await engine.dispose()


async def _rows(url: str, schema: AlembicSchema) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the service's tables, by table, in the columns the database has."""
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            names = await conn.run_sync(lambda c: inspect(c).get_table_names())
            found = {}
            for table in schema.metadata.sorted_tables:
                if table.name in names:
                    here = await conn.run_sync(lambda c, t=table.name: inspect(c).get_columns(t))
                    columns = [table.c[c["name"]] for c in here]
                    rows = await conn.execute(select(*columns).order_by(*columns))
                    found[table.name] = [tuple(row) for row in rows]
            return found
    finally:
        await engine.dispose()


@pytest.mark.parametrize("service", SERVICES)
async def test_an_empty_database_is_built_to_head_once(database_url: str, service: str) -> None:
    case = CASES[service]
    head = case.schema.head()
    engine = create_engine(database_url)
    try:
        assert await case.migrate(engine) == head
        assert await case.migrate(engine) == head  # again: nothing to do
        async with engine.connect() as conn:
            assert not await conn.run_sync(lambda c: inspect(c).has_table("schema_migrations"))
    finally:
        await engine.dispose()
    versions, _, diffs = await _state(database_url, case.schema)
    assert versions == [head]
    assert diffs == []


def _old_steps() -> list[tuple[str, int]]:
    """Each service at the old runner's first step and at its last."""
    return [(s, step) for s in SERVICES for step in sorted({1, max(CASES[s].schema.bridge)})]


@pytest.mark.parametrize(("service", "steps"), _old_steps())
async def test_a_database_the_old_runner_migrated_is_stamped_and_upgraded_with_its_rows(
    database_url: str, service: str, steps: int, unique: str
) -> None:
    case = CASES[service]
    head = case.schema.head()
    fresh = await empty_database(database_url, "fresh")
    engine = create_engine(fresh)
    try:
        await case.migrate(engine)
    finally:
        await engine.dispose()
    _, fresh_shape, _ = await _state(fresh, case.schema)

    url = await empty_database(database_url, "old")
    await old_database(url, case, steps, unique)
    before = await _rows(url, case.schema)
    assert any(before.values()), "the old database holds rows"
    engine = create_engine(url)
    try:
        # Without the stamp, revision 0001 would fail: its tables exist.
        assert await case.migrate(engine) == head
        async with engine.connect() as conn:
            kept = await conn.scalars(
                text("SELECT version FROM schema_migrations WHERE component = :c"),
                {"c": case.name},
            )
            assert sorted(kept) == list(range(1, steps + 1))  # the old runner's, as they were
        await case.check(engine, unique, steps)
    finally:
        await engine.dispose()
    after = await _rows(url, case.schema)
    for table, rows in before.items():  # the columns the old release had, unchanged
        width = len(rows[0]) if rows else 0
        assert [row[:width] for row in after[table]] == rows, table
    versions, shape, diffs = await _state(url, case.schema)
    assert versions == [head]
    assert shape == fresh_shape
    assert diffs == []


@pytest.mark.parametrize("service", SERVICES)
async def test_an_unknown_old_runner_step_is_refused(database_url: str, service: str) -> None:
    case = CASES[service]
    engine = create_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.execute(text("CREATE TABLE schema_migrations (component VARCHAR(64),"
                                    " version INTEGER, description VARCHAR(200))"))  # fmt: skip
            await conn.execute(
                text("INSERT INTO schema_migrations VALUES (:c, 99, 'from the future')"),
                {"c": case.name},
            )
        with pytest.raises(RuntimeError, match=f"{service} is at unknown .* version 99"):
            await case.migrate(engine)
        async with engine.connect() as conn:  # nothing was built
            names = await conn.run_sync(lambda c: inspect(c).get_table_names())
        assert names == ["schema_migrations"]
    finally:
        await engine.dispose()


def _race(url: str, names: list[str]) -> list[tuple[int, str, str]]:
    replicas = [
        subprocess.Popen(
            [sys.executable, "-c", REPLICA, url, *names],
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


@pytest.mark.parametrize("services", [[s] for s in SERVICES] + [SERVICES], ids=" + ".join)
async def test_two_replicas_upgrading_at_once_both_succeed(
    database_url: str, services: list[str], unique: str
) -> None:
    """Each round starts two processes together: on an empty database, then on one the
    old runner left at step 1 (so the stamp races too). One migrates, the other waits
    and finds nothing to do; a second stamp or CREATE would fail one of them or record
    twice. The last case upgrades all three services at once in each process."""
    cases: list[Case] = [CASES[s] for s in services]
    heads = [case.schema.head() for case in cases]
    for round_ in range(4 if len(cases) == 1 else 2):
        url = await empty_database(database_url, f"race-{round_}")
        if round_ % 2:
            for case in cases:
                await old_database(url, case, 1, unique)
        results = _race(url, services)
        failures = [stderr[-1500:] for code, _, stderr in results if code != 0]
        assert not failures, f"round {round_}: a replica failed:\n" + "\n".join(failures)
        assert [out for _, out, _ in results] == [" ".join(heads)] * 2
        for case, head in zip(cases, heads, strict=True):
            versions, _, diffs = await _state(url, case.schema)
            assert versions == [head], (case.name, round_)
            assert diffs == [], (case.name, round_)
            last = ScriptDirectory(str(case.schema.directory)).get_revision(head)
            step = f"Running upgrade {last.down_revision} -> {head}, {last.doc}"
            ran = sum(stderr.count(step) for _, _, stderr in results)
            assert ran == 1, f"round {round_}: {case.name}'s last revision ran {ran} times"
