"""The wallet's Alembic environment (``env.py``) and revisions (``versions/``), run by
:func:`services.wallet.schema.migrate_wallet`."""
