"""Ranked's schema under Alembic, on SQLite and PostgreSQL: an empty database is built
to head, recorded once in ``ranked_alembic_version``, matches the service's ``Table``s
(Alembic's autogenerate finds nothing to change), and a second run changes nothing."""

from __future__ import annotations

from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text
from sqlalchemy.engine import Connection

from kalaro.sql import create_engine
from services.ranked.schema import SCHEMA, migrate_ranked


def _differences(conn: Connection) -> list[Any]:
    def ours(name: str | None, kind: str, _parent: Any) -> bool:
        return kind != "table" or name in SCHEMA.metadata.tables

    context = MigrationContext.configure(conn, opts={"include_name": ours})
    found = list(compare_metadata(context, SCHEMA.metadata))
    if conn.dialect.name == "sqlite":
        # SQLite reads a primary key column back as nullable: not a difference.
        tables = SCHEMA.metadata.tables
        found = [
            d
            for d in found
            if not (
                isinstance(d, list)
                and all(c[0] == "modify_nullable" and tables[c[2]].c[c[3]].primary_key for c in d)
            )
        ]
    return found


async def test_an_empty_database_is_built_to_head_once_and_matches_the_tables(
    database_url: str,
) -> None:
    engine = create_engine(database_url)
    try:
        assert await migrate_ranked(engine) == SCHEMA.head() == "0001"
        assert await migrate_ranked(engine) == "0001"
        async with engine.connect() as conn:
            versions = list(
                await conn.scalars(text("SELECT version_num FROM ranked_alembic_version"))
            )
            assert versions == ["0001"]
            assert await conn.run_sync(_differences) == []
        async with engine.begin() as conn:  # the audit's key is assigned by the database
            for n in range(2):
                await conn.execute(
                    text(
                        "INSERT INTO ranked_audit (user_id, action, reason, admin_id, at_ms)"
                        " VALUES ('u', 'warn', :r, 'a', 1)"
                    ),
                    {"r": f"r{n}"},
                )
            ids = list(await conn.scalars(text("SELECT id FROM ranked_audit ORDER BY id")))
        assert len(set(ids)) == 2
    finally:
        await engine.dispose()
