"""The games the platform can deal, behind one shape.

Every game package exposes the same pure functions (``new_hand``, ``legal_actions``,
``apply``, ``view``, ``result``, ``to_act``, ``pending_timer``, ``is_over``,
``event_for``, ``options_for``, ``max_loss_units``, ``away_seats``) and its own message
unions.
:class:`GameRules` gathers them so the lobby, the engine worker, the verifier and the
bots handle any game the same way. Adding a game is a new package plus one line in
:data:`_PACKAGES`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import msgspec

# game name -> (package, seats)
_PACKAGES: dict[str, tuple[str, int]] = {
    "tongits": ("kalaro.games.tongits", 3),
    "mahjong": ("kalaro.games.mahjong", 4),
    "kawuxing": ("kalaro.games.kawuxing", 3),
}


def _dealt_cards(state: Any) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(hand) for hand in state.hands)


def _dealt_tiles(state: Any) -> tuple[tuple[str, ...], ...]:
    # After the deal's flower replacements: the concealed tiles plus the flowers set aside.
    return tuple(tuple(p.hand) + tuple(p.flowers) for p in state.players)


# What each seat was dealt, read from a fresh hand's state (for the verifier).
_DEALT: dict[str, Callable[[Any], tuple[tuple[str, ...], ...]]] = {
    "tongits": _dealt_cards,
    "mahjong": _dealt_tiles,
    "kawuxing": lambda state: tuple(tuple(p.hand) for p in state.players),
}


class UnknownGame(ValueError):
    pass


@dataclass(frozen=True)
class GameRules:
    name: str
    seats: int
    options_type: type[Any]
    state_type: type[Any]
    action_type: Any  # the tagged union of the game's actions
    options_for: Callable[..., Any]
    max_loss_units: Callable[[Any], int]
    new_hand: Callable[..., Any]
    legal_actions: Callable[[Any, int], list[Any]]
    apply: Callable[[Any, int, Any], tuple[Any, list[Any]]]
    view: Callable[[Any, int | None], Any]
    result: Callable[[Any], Any]
    to_act: Callable[[Any], list[int]]
    pending_timer: Callable[[Any], Any]
    is_over: Callable[[Any], bool]
    event_for: Callable[[Any, int | None], Any]
    time_out: Callable[[], Any]  # the game's TimeOut action
    away_seats: Callable[[Any], tuple[int, ...]]  # seats marked away (they sit out next)
    decode_action: Callable[[bytes | str], Any]  # JSON; raises msgspec errors
    dealt: Callable[[Any], tuple[tuple[str, ...], ...]]  # each seat's deal, from new_hand

    def options(self, options: dict[str, Any]) -> Any:
        """Options from a table's stored dict: ``{"ruleset": ..., <house rules>...}``.

        Raises ``ValueError`` with a message for players on an unknown ruleset or option.
        """
        values = dict(options)
        ruleset = values.pop("ruleset", "kalaro")
        if not isinstance(ruleset, str):
            raise ValueError("ruleset must be a name")
        return self.options_for(ruleset, **values)

    def options_dict(self, options: Any) -> dict[str, Any]:
        """The full options as plain data (what the lobby shows and stores)."""
        data: dict[str, Any] = msgspec.to_builtins(options)
        return data


@cache
def rules_for(game: str) -> GameRules:
    """The rules of ``game``; :class:`UnknownGame` for a name we do not deal."""
    try:
        package_name, seats = _PACKAGES[game]
    except KeyError:
        raise UnknownGame(
            f"unknown game {game!r}; we deal {', '.join(sorted(_PACKAGES))}"
        ) from None
    package = importlib.import_module(package_name)
    return GameRules(
        name=game,
        seats=seats,
        options_type=package.Options,
        state_type=package.State,
        action_type=package.AnyAction,
        options_for=package.options_for,
        max_loss_units=package.max_loss_units,
        new_hand=package.new_hand,
        legal_actions=package.legal_actions,
        apply=package.apply,
        view=package.view,
        result=package.result,
        to_act=package.to_act,
        pending_timer=package.pending_timer,
        is_over=package.is_over,
        event_for=package.event_for,
        time_out=package.TimeOut,
        away_seats=package.away_seats,
        decode_action=package.ACTION_JSON_DECODER.decode,
        dealt=_DEALT[game],
    )


def game_names() -> tuple[str, ...]:
    return tuple(_PACKAGES)
