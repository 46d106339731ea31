"""A game's hands on Redis: the per-table hand slot (:mod:`~kalaro.engine.slots`) and the
worker that applies moves, runs timers and publishes outcomes (:mod:`~kalaro.engine.worker`).

Two programs run it: the engine service (``python -m services.engine``: every request,
timer and outcome of a game) and the gateway, which applies moves itself for tables
whose every seat is connected to it (``services/gateway/local_moves.py``). Redis is the
only truth for both: a move is written by compare-and-set on the hand's version.
"""

from kalaro.engine.slots import Slot, SlotStore, hand_record
from kalaro.engine.worker import EngineWorker

__all__ = ["EngineWorker", "Slot", "SlotStore", "hand_record"]
