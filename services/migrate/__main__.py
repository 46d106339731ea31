"""``python -m services.migrate``: bring every SQL component's tables up to date, then exit.

The Kubernetes migration Job (deploy/k8s/migrate-job.yaml) runs it before a rollout.
Only missing steps run (auth's and wallet's are recorded in ``schema_migrations``,
history's Alembic revision in ``history_alembic_version``), so a second run changes
nothing; on PostgreSQL it holds the advisory lock the services take when they migrate
at start-up, so it is safe beside replicas that are starting. Exit 0 when the
schema is current, 1 when the database cannot be migrated, 2 on a settings problem.
"""

from __future__ import annotations

import asyncio
import logging
import sys

from sqlalchemy.exc import SQLAlchemyError

from kalaro.settings import load_settings, production_problem
from kalaro.sql import create_engine, migrate
from services.auth.schema import COMPONENT as AUTH
from services.auth.schema import MIGRATIONS as AUTH_MIGRATIONS
from services.history.schema import COMPONENT as HISTORY
from services.history.schema import migrate_history
from services.wallet.schema import COMPONENT as WALLET
from services.wallet.schema import migrate_wallet


async def migrate_all(database_url: str) -> dict[str, str]:
    """Each component's schema version (history: its Alembic revision) after migrating."""
    engine = create_engine(database_url)
    try:
        return {
            AUTH: f"version {await migrate(engine, AUTH, AUTH_MIGRATIONS)}",
            WALLET: f"version {await migrate_wallet(engine)}",
            HISTORY: f"revision {await migrate_history(engine)}",
        }
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
    for component, version in versions.items():
        print(f"{component}: schema {version}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
