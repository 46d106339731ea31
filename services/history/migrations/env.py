"""Alembic's environment for the history service, online only.

:func:`services.history.schema.migrate_history` runs it with a connection already in
the transaction that holds the migration lock (``config.attributes["connection"]``):
every revision then runs inside that one transaction, and the version is recorded in
``history_alembic_version`` (not Alembic's default table: by default every service
shares one SQLite file). A new revision is a copy of the latest file in ``versions/``
with the next number; revisions are forward-only and frozen once shipped.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from services.history.schema import VERSION_TABLE, metadata

connection = context.config.attributes.get("connection")
if not isinstance(connection, Connection):
    raise RuntimeError(
        "history's migrations run from services.history.schema.migrate_history "
        "(python -m services.history or python -m services.migrate), not the alembic CLI"
    )
context.configure(connection=connection, version_table=VERSION_TABLE, target_metadata=metadata)
with context.begin_transaction():
    context.run_migrations()
