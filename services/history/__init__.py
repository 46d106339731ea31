"""The history service: every finished (or voided) hand's record, for good, in SQL.

Ingest from the RECORDS stream (durable consumer, batched, keyed by hand id), reads on
the bus (a player's hands, one record), and the Redis copies cut to an hour once a
hand is stored. The ingest is :mod:`services.history.service`, the reads
:mod:`services.history.handlers` over the :mod:`services.history.store` port, both
started by :mod:`services.history.bootstrap`; the tables and their Alembic migrations:
:mod:`services.history.schema`.
"""
