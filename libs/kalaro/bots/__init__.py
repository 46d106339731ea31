"""Bot brains: pure policies that pick a move from what one seat can see.

A policy gets the game's ``View`` for its seat (the same struct the worker sends over
the WebSocket, so the bots service can decode the socket's JSON into it with msgspec
and call the policy directly) and a ``random.Random``, and returns one of the view's
legal actions, or ``None`` when it has nothing to do. Policies only read the view,
never the hidden state, so a bot knows exactly what a person in that chair knows.
Given the same view and the same rng state a policy makes the same choice.

    policy = policy_for("tongits", "smart")
    action = policy.choose(view, rng)  # one of view.legal, or None

Names: ``"random"`` (uniform over the legal actions) and ``"smart"`` (see
:mod:`kalaro.bots.tongits`, :mod:`kalaro.bots.mahjong` and :mod:`kalaro.bots.kawuxing`).
``kalaro simulate`` (:mod:`kalaro.bots.simulate`) plays them against each other with the
pure engines.
"""

from __future__ import annotations

import importlib
import random
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


def legal_actions(game: str, view: Any) -> tuple[Any, ...]:
    """The legal actions ``view`` (a ``game`` View) offers its seat."""
    return tuple(view.legal)  # every game's View has the same envelope


@dataclass(frozen=True)
class RandomPolicy:
    """Uniform over the legal actions: the baseline every smarter policy must beat."""

    game: str
    name: str = "random"

    def choose(self, view: Any, rng: random.Random) -> Any | None:
        legal = legal_actions(self.game, view)
        return rng.choice(legal) if legal else None


# Each game's "smart" policy, by dotted path: imported only when asked for, so a
# tongits-only process never loads the mahjong bot, and back.
_SMART_POLICIES: dict[str, str] = {
    "tongits": "kalaro.bots.tongits.SmartTongits",
    "mahjong": "kalaro.bots.mahjong.SmartMahjong",
    "kawuxing": "kalaro.bots.kawuxing.SmartKaWuXing",
}


def policy_for(game: str, name: str) -> Policy:
    """The policy called ``name`` for ``game``.

    Raises :class:`~kalaro.games.registry.UnknownGame` or :class:`UnknownPolicy` with
    the names we do have.
    """
    if game not in game_names():
        raise UnknownGame(f"no bots for game {game!r}; we have {', '.join(game_names())}")
    if name == "random":
        return RandomPolicy(game)
    if name != "smart":
        raise UnknownPolicy(f"unknown policy {name!r}; choose from {', '.join(POLICY_NAMES)}")
    try:
        path = _SMART_POLICIES[game]
    except KeyError:  # a game newly registered, its bot not written yet
        raise UnknownPolicy(f"no smart policy for {game!r} yet; choose random") from None
    module_name, _, class_name = path.rpartition(".")
    policy: Policy = getattr(importlib.import_module(module_name), class_name)()
    return policy
