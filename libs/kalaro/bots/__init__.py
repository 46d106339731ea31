"""Bot brains: pure policies that pick a move from what one seat can see.

A policy gets the game's ``View`` for its seat (the same struct the worker sends over
the WebSocket, so the bots service can decode the socket's JSON into it with msgspec
and call the policy directly) and a ``random.Random``, and returns one of the view's
legal actions, or ``None`` when it has nothing to do. Policies only read the view,
never the hidden state, so a bot knows exactly what a person in that chair knows.
Given the same view and the same rng state a policy makes the same choice.

    policy = policy_for("tongits", "smart")
    action = policy.choose(view, rng)  # one of view.legal_actions, or None

Names: ``"random"`` (uniform over the legal actions) and ``"smart"`` (see
:mod:`kalaro.bots.tongits`, :mod:`kalaro.bots.mahjong` and :mod:`kalaro.bots.kawuxing`).
``kalaro simulate`` (:mod:`kalaro.bots.simulate`) plays them against each other with the
pure engines.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kalaro.games.registry import UnknownGame, game_names

__all__ = [
    "POLICY_NAMES",
    "Policy",
    "RandomPolicy",
    "UnknownPolicy",
    "legal_actions",
    "policy_for",
]

POLICY_NAMES: tuple[str, ...] = ("random", "smart")


class UnknownPolicy(ValueError):
    pass


class Policy(Protocol):
    """Chooses a move for one seat from that seat's view."""

    @property
    def name(self) -> str: ...

    def choose(self, view: Any, rng: random.Random) -> Any | None:
        """One of ``view``'s legal actions, or ``None`` when the seat has nothing to do."""
        ...


# Where each game's View lists the seat's legal actions (the two engines name it apart).
_LEGAL: dict[str, Callable[[Any], tuple[Any, ...]]] = {
    "tongits": lambda view: tuple(view.legal_actions),
    "mahjong": lambda view: tuple(view.legal),
    "kawuxing": lambda view: tuple(view.legal),
}


def legal_actions(game: str, view: Any) -> tuple[Any, ...]:
    """The legal actions ``view`` (a ``game`` View) offers its seat."""
    try:
        return _LEGAL[game](view)
    except KeyError:
        raise UnknownGame(f"no bots for game {game!r}; we have {', '.join(_LEGAL)}") from None


@dataclass(frozen=True)
class RandomPolicy:
    """Uniform over the legal actions: the baseline every smarter policy must beat."""

    game: str
    name: str = "random"

    def choose(self, view: Any, rng: random.Random) -> Any | None:
        legal = legal_actions(self.game, view)
        return rng.choice(legal) if legal else None


def policy_for(game: str, name: str) -> Policy:
    """The policy called ``name`` for ``game``.

    Raises :class:`~kalaro.games.registry.UnknownGame` or :class:`UnknownPolicy` with
    the names we do have.
    """
    if game not in game_names() or game not in _LEGAL:
        raise UnknownGame(f"no bots for game {game!r}; we have {', '.join(_LEGAL)}")
    if name == "random":
        return RandomPolicy(game)
    if name == "smart":
        # imported here so a tongits-only process never loads the mahjong bot, and back
        if game == "tongits":
            from kalaro.bots.tongits import SmartTongits

            return SmartTongits()
        if game == "kawuxing":
            from kalaro.bots.kawuxing import SmartKaWuXing

            return SmartKaWuXing()
        from kalaro.bots.mahjong import SmartMahjong

        return SmartMahjong()
    raise UnknownPolicy(f"unknown policy {name!r}; choose from {', '.join(POLICY_NAMES)}")
