"""The engine worker service: runs hands of one game type over NATS, state in Redis.

:mod:`~services.engine.slots` holds the per-table hand slot and its Redis scripts,
:mod:`~services.engine.worker` the request handlers, timers and outcome sweeper.
Run one program per game, as many replicas as needed:
``python -m services.engine --game tongits`` (or ``KALARO_GAME=tongits``).
"""

from services.engine.slots import Slot, SlotStore, hand_record
from services.engine.worker import EngineWorker

__all__ = ["EngineWorker", "Slot", "SlotStore", "hand_record"]
