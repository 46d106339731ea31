"""The games the platform can deal, behind one typed contract.

Every game package is a :class:`GameModule`: it exports the same pure functions
(``new_hand``, ``legal_actions``, ``apply``, ``view``, ``result``, ``to_act``,
``pending_timer``, ``is_over``, ``event_for``, ``options_for``, ``max_loss_units``,
``away_seats``), its types (``State``, ``Options``, ``TimeOut``, the action decoder) and
its own facts (``NAME``, ``SEATS``, ``RULESETS``, ``dealt``, ``secrets``, ``winners``),
so nothing here or in the callers special-cases a game by name. Every game's ``View``
has the same envelope (:class:`ViewEnvelope`: ``seat``, ``to_act``, ``legal``) around
its own fields. mypy checks each package against the protocol (the ``TYPE_CHECKING``
block at the bottom).

:class:`Game` wraps one package for the lobby, the engine worker, the verifier and the
bots, which handle any game the same way. Adding a game is a new package plus one line
in :data:`_PACKAGES`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

import msgspec

# game name -> the package that is its GameModule (imported on first use)
_PACKAGES: dict[str, str] = {
    "tongits": "kalaro.games.tongits",
    "mahjong": "kalaro.games.mahjong",
    "kawuxing": "kalaro.games.kawuxing",
}

S = TypeVar("S")  # the State
A = TypeVar("A")  # an action (the package's action union or base)
O = TypeVar("O")  # noqa: E741 - the Options
E = TypeVar("E")  # an event
R_co = TypeVar("R_co", covariant=True)  # the Result, or None


class ViewEnvelope(Protocol):
    """What every game's View says the same way, whatever else it shows."""

    @property
    def seat(self) -> int | None: ...  # whose view (None: the audience)
    @property
    def to_act(self) -> tuple[int, ...]: ...  # seats the hand waits on, as far as it may know
    @property
    def legal(self) -> tuple[Any, ...]: ...  # the seat's legal actions (none for the audience)


V_co = TypeVar("V_co", covariant=True, bound=ViewEnvelope)  # the View


class SeatBoard(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's public part of the table: what a replay draws for it."""

    hand_size: int
    melds: tuple[tuple[str, ...], ...]  # each meld's cards or tiles (a hidden one: none)
    discards: tuple[str, ...] = ()  # its own discards (tile games)
    flowers: tuple[str, ...] = ()


class Board(msgspec.Struct, frozen=True, kw_only=True):
    """The table as one View shows it, in the same shape for every game (the replay)."""

    turn: int
    stock: int  # cards or tiles left to draw
    hand: tuple[str, ...]  # the viewer's concealed cards or tiles
    seats: tuple[SeatBoard, ...]
    pile: tuple[str, ...] = ()  # a shared discard pile (Tongits)


class Secrets(NamedTuple):
    """The names a state holds out of sight, for secrecy checks.

    ``seats[s]`` is what seat ``s`` holds concealed; ``hidden`` is what no seat sees (the
    stock or wall); ``face_up`` is what everyone sees. A name in ``face_up`` or in the
    viewer's own ``seats`` entry is not a secret to that viewer (Mahjong tiles come four of
    a kind, so a kind in sight anywhere is never checked by name). ``known[s]`` are other
    names seat ``s`` is told (a Ka Wu Xing seat's own waits name kinds, not tiles held).
    """

    seats: tuple[frozenset[str], ...]
    hidden: frozenset[str]
    face_up: frozenset[str]
    known: tuple[frozenset[str], ...] = ()

    def forbidden(self, viewer: int | None) -> frozenset[str]:
        """The names ``viewer`` (``None``: the audience) must not be shown."""
        others = frozenset().union(*(h for s, h in enumerate(self.seats) if s != viewer))
        own = self.seats[viewer] if viewer is not None else frozenset()
        if viewer is not None and self.known:
            own |= self.known[viewer]
        return (others | self.hidden) - self.face_up - own


class GameModule(Protocol[S, A, O, V_co, R_co, E]):
    """What a game package exports: the pure rules plus the facts about the game."""

    # Read-only (properties), so a module's constants and classes match covariantly.
    @property
    def NAME(self) -> str: ...
    @property
    def SEATS(self) -> int: ...
    @property
    def State(self) -> type[S]: ...
    @property
    def Options(self) -> type[O]: ...
    @property
    def View(self) -> type[V_co]: ...
    @property
    def RULESETS(self) -> Mapping[str, O]: ...
    @property
    def TimeOut(self) -> Callable[[], A]: ...
    @property
    def ACTION_JSON_DECODER(self) -> msgspec.json.Decoder[Any]: ...

    def options_for(self, ruleset: str, **overrides: Any) -> O: ...
    def max_loss_units(self, options: O) -> int: ...
    def new_hand(self, options: O, seed: bytes, dealer: int | None = None) -> S: ...
    def legal_actions(self, state: S, seat: int) -> list[A]: ...
    def apply(self, state: S, seat: int, action: A) -> tuple[S, list[E]]: ...
    def view(self, state: S, seat: int | None) -> V_co: ...
    def result(self, state: S) -> R_co: ...  # None until the hand is over
    def to_act(self, state: S) -> list[int]: ...
    def pending_timer(self, state: S) -> Any: ...
    def is_over(self, state: S) -> bool: ...
    def event_for(self, event: E, seat: int | None) -> E | None: ...
    def away_seats(self, state: S) -> tuple[int, ...]: ...
    def dealt(self, state: S) -> tuple[tuple[str, ...], ...]: ...
    def secrets(self, state: S) -> Secrets: ...
    def board(self, view: Any) -> Board: ...  # the table as ``view`` shows it
    def winners(self, result: Any) -> tuple[int, ...]: ...  # seats that won a Result


AnyGameModule = GameModule[Any, Any, Any, Any, Any, Any]


class UnknownGame(ValueError):
    pass


class Game:
    """One registered game: its package's contract, plus the helpers every caller needs."""

    def __init__(self, module: AnyGameModule, action_type: Any, result_type: type[Any]) -> None:
        self.module = module
        self.name = module.NAME
        self.seats = module.SEATS
        self.options_type: type[Any] = module.Options
        self.state_type: type[Any] = module.State
        self.action_type = action_type  # the tagged union of the game's actions
        self.view_type: type[Any] = module.View
        self.result_type = result_type
        self.rulesets: Mapping[str, Any] = module.RULESETS
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
        self.decode_action: Callable[[bytes | str], Any] = module.ACTION_JSON_DECODER.decode

    def __repr__(self) -> str:
        return f"Game({self.name!r})"

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


# The old name; kept so existing imports read on.
GameRules = Game


@cache
def rules_for(game: str) -> Game:
    """The rules of ``game``; :class:`UnknownGame` for a name we do not deal."""
    try:
        package_name = _PACKAGES[game]
    except KeyError:
        raise UnknownGame(
            f"unknown game {game!r}; we deal {', '.join(sorted(_PACKAGES))}"
        ) from None
    package = importlib.import_module(package_name)
    module: AnyGameModule = package  # each package is checked below
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
