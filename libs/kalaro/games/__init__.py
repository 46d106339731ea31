"""Pure rules engines, one package per game.

Every game package exposes the same functions (see ``kalaro.games.base``):
``new_hand``, ``legal_actions``, ``apply``, ``view``, ``result`` — no I/O, no clock,
no global random. A hand replays from (options, seed, actions).
"""
