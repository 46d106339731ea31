"""The engine service: runs hands of one game type over NATS, state in Redis.

The worker itself is :mod:`services.engine.worker`; every move of a game is applied
here (the gateway only forwards them). Run one program per game, as many replicas as
needed: ``python -m services.engine --game tongits`` (or ``KALARO_GAME=tongits``).
"""
