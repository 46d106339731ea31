"""Auth's Alembic environment (``env.py``) and revisions (``versions/``), run by
:func:`services.auth.schema.migrate_auth`."""
