"""A game's hands on Redis: the per-table hand slot (:mod:`~kalaro.engine.slots`) and the
worker that applies moves, runs timers and publishes outcomes (:mod:`~kalaro.engine.worker`).

The engine service runs it (``python -m services.engine``: every request, timer and
outcome of a game; the gateway only forwards moves to it). Redis is the only truth: a
move is written by compare-and-set on the hand's version.
"""

from kalaro.engine.slots import Slot, SlotStore, hand_record
from kalaro.engine.worker import EngineWorker

__all__ = ["EngineWorker", "Slot", "SlotStore", "hand_record"]
