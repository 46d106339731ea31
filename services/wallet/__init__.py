"""The wallet service: a double-entry credit ledger in SQL, served over NATS.

:mod:`~services.wallet.ledger` holds the operations as plain async functions (the
money rules they apply are pure, in :mod:`~services.wallet.rules` and
:mod:`~services.wallet.outcomes`; their SQL is in :mod:`~services.wallet.store` and
:mod:`~services.wallet.hand_store`),
:mod:`~services.wallet.schema` the tables and migrations, and
:mod:`~services.wallet.handlers` are its request handlers, bound to their subjects in
:mod:`~services.wallet.bootstrap`, and :mod:`~services.wallet.service` its JetStream consumers.
Run it with ``python -m services.wallet``.
"""

from services.wallet.bootstrap import build_service
from services.wallet.schema import migrate_wallet
from services.wallet.service import ensure_streams, start_consumers

__all__ = ["build_service", "ensure_streams", "migrate_wallet", "start_consumers"]
