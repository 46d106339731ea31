"""The wallet service: a double-entry credit ledger in SQL, served over NATS.

:mod:`~services.wallet.ledger` holds the operations as plain async functions (the
money rules they apply are pure, in :mod:`~services.wallet.rules` and
:mod:`~services.wallet.outcomes`; their SQL is in :mod:`~services.wallet.store` and
:mod:`~services.wallet.hand_store`),
:mod:`~services.wallet.schema` the tables and migrations,
:mod:`~services.wallet.handlers` the request handlers (bound to their subjects in
:mod:`~services.wallet.bootstrap`) and :mod:`~services.wallet.service` the JetStream
consumers. Run it with ``python -m services.wallet``. The package imports nothing
itself, so a pure rule imports without the database or the bus.
"""
