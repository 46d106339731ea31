"""History's Alembic environment (``env.py``) and revisions (``versions/``), run by
:func:`services.history.schema.migrate_history`."""
