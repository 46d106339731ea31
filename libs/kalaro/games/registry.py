"""The games the platform can deal, each behind the contract of :mod:`kalaro.games.contract`.

:func:`rules_for` gives a :class:`Game`: one game package (a
:class:`~kalaro.games.contract.GameModule`) with the helpers every caller needs, so the
lobby, the engine worker, the verifier and the bots handle any game the same way and
nothing special-cases a game by name. Adding a game is a new package plus one line in
:data:`_PACKAGES`; mypy checks each package against the protocol (the ``TYPE_CHECKING``
block at the bottom).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, Generic

import msgspec

from kalaro.games.contract import (
    A,
    Board,
    E,
    GameModule,
    O,
    R_co,
    S,
    SeatBoard,
    Secrets,
    V_co,
    replay,
    replay_steps,
)

__all__ = [
    "Board",
    "Game",
    "GameRules",
    "SeatBoard",
    "Secrets",
    "UnknownGame",
    "game_names",
    "rules_for",
]

# game name -> the package that is its GameModule (imported on first use)
_PACKAGES: dict[str, str] = {
    "tongits": "kalaro.games.tongits",
    "mahjong": "kalaro.games.mahjong",
    "kawuxing": "kalaro.games.kawuxing",
}


class UnknownGame(ValueError):
    pass


class Game(Generic[S, A, O, V_co, R_co, E]):
    """One registered game: its package's contract, typed by it, plus shared helpers.

    The package's functions are bound as they are (``game.apply(state, seat, action)``),
    typed by :class:`~kalaro.games.contract.GameModule`; a game looked up by name
    (:func:`rules_for`) is ``Game[Any, ...]``, one imported directly keeps its types.
    """

    def __init__(
        self,
        module: GameModule[S, A, O, V_co, R_co, E],
        action_type: Any,
        result_type: type[Any],
    ) -> None:
        self.module = module
        self.name = module.NAME
        self.seats = module.SEATS
        self.options_type = module.Options
        self.state_type = module.State
        self.action_type = action_type  # the tagged union of the game's actions
        self.view_type = module.View
        self.result_type = result_type
        self.rulesets = module.RULESETS
        # The pure functions, straight from the package (typed by the protocol).
        self.options_for = module.options_for
        self.max_loss_units = module.max_loss_units
        self.new_hand = module.new_hand
        self.legal_actions = module.legal_actions
        self.apply = module.apply
        self.view = module.view
        self.result = module.result
        self.to_act = module.to_act
        self.pending_timer = module.pending_timer
        self.is_over = module.is_over
        self.event_for = module.event_for
        self.away_seats = module.away_seats
        self.dealt = module.dealt  # each seat's deal, from new_hand (for the verifier)
        self.secrets = module.secrets
        self.board = module.board
        self.winners = module.winners
        self.time_out = module.TimeOut  # the game's TimeOut action
        self.decode_action: Callable[[bytes | str], A] = module.ACTION_JSON_DECODER.decode

    def __repr__(self) -> str:
        return f"Game({self.name!r})"

    def replay(
        self, options: O, seed: bytes, moves: Iterable[tuple[int, A]], dealer: int | None = None
    ) -> S:
        """The state after ``moves`` from the deal of ``seed`` (:func:`contract.replay`)."""
        return replay(self.module, options, seed, moves, dealer)

    def replay_steps(
        self, options: O, seed: bytes, moves: Iterable[tuple[int, A]], dealer: int | None = None
    ) -> Iterator[tuple[int | None, S, Sequence[E]]]:
        """Every state from the deal of ``seed`` on (:func:`contract.replay_steps`)."""
        return replay_steps(self.module, options, seed, moves, dealer)

    def options(self, options: dict[str, Any]) -> O:
        """Options from a table's stored dict: ``{"ruleset": ..., <house rules>...}``.

        Raises ``ValueError`` with a message for players on an unknown ruleset or option.
        """
        values = dict(options)
        ruleset = values.pop("ruleset", "kalaro")
        if not isinstance(ruleset, str):
            raise ValueError("ruleset must be a name")
        return self.options_for(ruleset, **values)

    def options_dict(self, options: O) -> dict[str, Any]:
        """The full options as plain data (what the lobby shows and stores)."""
        data: dict[str, Any] = msgspec.to_builtins(options)
        return data


AnyGame = Game[Any, Any, Any, Any, Any, Any]
# The old name; kept so existing imports read on.
GameRules = AnyGame


@cache
def rules_for(game: str) -> AnyGame:
    """The rules of ``game``; :class:`UnknownGame` for a name we do not deal."""
    try:
        package_name = _PACKAGES[game]
    except KeyError:
        raise UnknownGame(
            f"unknown game {game!r}; we deal {', '.join(sorted(_PACKAGES))}"
        ) from None
    package = importlib.import_module(package_name)
    module: GameModule[Any, Any, Any, Any, Any, Any] = package  # each checked below
    if game != module.NAME:
        raise RuntimeError(f"{package_name} calls itself {module.NAME!r}, not {game!r}")
    # A union alias and the Result (the protocol sees ``Result | None``) are read plainly.
    return Game(module, package.AnyAction, package.Result)


def game_names() -> tuple[str, ...]:
    return tuple(_PACKAGES)


if TYPE_CHECKING:  # mypy holds every package to the contract; nothing runs here
    import kalaro.games.kawuxing as _kawuxing
    import kalaro.games.mahjong as _mahjong
    import kalaro.games.tongits as _tongits

    _tongits_check: GameModule[
        _tongits.State,
        _tongits.AnyAction,
        _tongits.Options,
        _tongits.View,
        _tongits.Result | None,
        _tongits.Event,
    ] = _tongits
    _mahjong_check: GameModule[
        _mahjong.State,
        _mahjong.AnyAction,
        _mahjong.Options,
        _mahjong.View,
        _mahjong.Result | None,
        _mahjong.AnyEvent,
    ] = _mahjong
    _kawuxing_check: GameModule[
        _kawuxing.State,
        _kawuxing.AnyAction,
        _kawuxing.Options,
        _kawuxing.View,
        _kawuxing.Result | None,
        _kawuxing.AnyEvent,
    ] = _kawuxing
