"""The engine service: runs hands of one game type over NATS, state in Redis.

Every move of a game is applied here (the gateway only forwards them and fans out the
frames this service publishes). The pure step (:mod:`services.engine.step`) turns a
hand and a move into the next hand and each seat's frame; the worker
(:mod:`services.engine.worker`) wraps it with the Redis slot store, the timer loop and
outcome publishing. Run one program per game, as many replicas as needed:
``python -m services.engine --game tongits`` (or ``KALARO_GAME=tongits``).
"""
