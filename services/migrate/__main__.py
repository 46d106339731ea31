"""``python -m services.migrate``: bring every SQL component's tables up to date, then exit.

The Kubernetes migration Job (deploy/kustomize/base/migrate-job.yaml) runs it before a rollout.
Each service's Alembic revisions (auth, wallet, history) run up to head, the revision
recorded in ``<service>_alembic_version``, so a second run changes nothing. Each upgrade
holds the lock the services take when they migrate at start-up (see
:func:`kalaro.sql_migrations.upgrade`), so it is safe beside replicas that are starting.
Exit 0 when the schema is current, 1 when the database cannot be migrated, 2 on a
settings problem.
"""

from __future__ import annotations

import asyncio
import logging
import sys

from sqlalchemy.exc import SQLAlchemyError

from kalaro.settings import load_settings, production_problem
from kalaro.sql import create_engine
from kalaro.sql_migrations import AlembicSchema, upgrade
from services.auth.schema import SCHEMA as AUTH
from services.history.schema import SCHEMA as HISTORY
from services.wallet.schema import SCHEMA as WALLET

SCHEMAS: tuple[AlembicSchema, ...] = (AUTH, WALLET, HISTORY)


async def migrate_all(database_url: str) -> dict[str, str]:
    """Each service's Alembic revision after upgrading it to head."""
    engine = create_engine(database_url)
    try:
        return {schema.component: await upgrade(engine, schema) for schema in SCHEMAS}
    finally:
        await engine.dispose()


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    settings = load_settings()
    problem = production_problem(settings)
    if problem is not None:
        print(f"migrate: {problem}", file=sys.stderr)
        return 2
    try:
        versions = asyncio.run(migrate_all(settings.database_url))
    except (OSError, SQLAlchemyError) as exc:
        # Not the URL: it carries the database password.
        print(f"migrate: the database could not be migrated: {exc}", file=sys.stderr)
        return 1
    for component, revision in versions.items():
        print(f"{component}: schema revision {revision}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
