"""Cluster chaos: the whole system, replicated, under kill -9 while bet hands are played.

``make chaos`` runs the long version (``KALARO_CHAOS=long``); a short one runs in
``make test``. See ``test_chaos.py`` for what is injected and what is checked.
"""
