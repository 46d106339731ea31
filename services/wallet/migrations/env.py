"""Alembic's environment for the wallet: see :func:`kalaro.sql_migrations.run_env`.

A new revision is a copy of the latest file in ``versions/`` with the next number;
revisions are forward-only and frozen once shipped.
"""

from kalaro.sql_migrations import run_env

run_env()
