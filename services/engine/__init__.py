"""The engine service: runs hands of one game type over NATS, state in Redis.

The worker itself is :mod:`kalaro.engine` (the gateway runs it too, for tables whose
every seat is connected to it). Run one program per game, as many replicas as needed:
``python -m services.engine --game tongits`` (or ``KALARO_GAME=tongits``).
"""
