"""Ranked's Alembic environment (``env.py``) and revisions (``versions/``), run by
:func:`services.ranked.schema.migrate_ranked`."""
