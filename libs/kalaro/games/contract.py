"""The contract every game package keeps: one typed protocol, the shared view shapes.

A game package (``kalaro.games.tongits``, ``.mahjong``, ``.kawuxing``) is a
:class:`GameModule`: pure functions over its own ``State`` — ``new_hand`` (the deal from
a seed), ``legal_actions``, ``apply`` (state and action in, new state and events out),
``view`` (what one seat, or the audience, may see), ``result`` — plus what the worker
needs (``to_act``, ``pending_timer``, ``is_over``, ``away_seats``, ``event_for``), its
types (``State``, ``Options``, ``View``, ``TimeOut``, the action decoder) and its facts
(``NAME``, ``SEATS``, ``RULESETS``, ``dealt``, ``secrets``, ``board``, ``winners``).
Every game's ``View`` has the same envelope (:class:`ViewEnvelope`) around its own
fields. Chance is the seed and a time-out is an action, so any hand replays from
(options, seed, dealer, actions): :func:`replay`.

mypy holds each package to the protocol (``kalaro.games.registry``); nothing here
imports a game, so every game may import this module.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, TypeVar

import msgspec

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


class TimerLike(Protocol):
    """The deadline a game asks the worker to run (each game has its own ``Timer``)."""

    @property
    def kind(self) -> str: ...  # "turn", or the game's window ("call", "fight_or_fold")
    @property
    def seats(self) -> tuple[int, ...]: ...  # seats still awaited (private to the server)
    @property
    def seconds(self) -> int: ...
    @property
    def opened_at(self) -> int: ...  # identifies the window: a new window, a new timer


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
    def ACTION_JSON_DECODER(self) -> msgspec.json.Decoder[A]: ...

    def options_for(self, ruleset: str, **overrides: Any) -> O: ...
    def max_loss_units(self, options: O) -> int: ...
    def new_hand(self, options: O, seed: bytes, dealer: int | None = None) -> S: ...
    def legal_actions(self, state: S, seat: int) -> list[A]: ...
    def apply(self, state: S, seat: int, action: A) -> tuple[S, list[E]]: ...
    def view(self, state: S, seat: int | None) -> V_co: ...
    def result(self, state: S) -> R_co: ...  # None until the hand is over
    def to_act(self, state: S) -> list[int]: ...
    def pending_timer(self, state: S) -> TimerLike | None: ...  # the deadline to run
    def is_over(self, state: S) -> bool: ...
    def event_for(self, event: E, seat: int | None) -> E | None: ...
    def away_seats(self, state: S) -> tuple[int, ...]: ...
    def dealt(self, state: S) -> tuple[tuple[str, ...], ...]: ...
    def secrets(self, state: S) -> Secrets: ...
    def board(self, view: Any) -> Board: ...  # the table as ``view`` shows it
    def winners(self, result: Any) -> tuple[int, ...]: ...  # seats that won a Result


AnyGameModule = GameModule[Any, Any, Any, Any, Any, Any]


def replay_steps(
    game: GameModule[S, A, O, Any, Any, E],
    options: O,
    seed: bytes,
    moves: Iterable[tuple[int, A]],
    dealer: int | None = None,
) -> Iterator[tuple[int | None, S, Sequence[E]]]:
    """Every state of a hand in order, as (seat, state, events): the deal of ``seed``
    (no seat, no events), then the state after each move (seat, action).

    ``IllegalAction`` for a move the rules refuse: a recorded hand replays exactly.
    This is the one replay: :func:`replay`, ``kalaro.replay`` (a hand record: the
    replay page, ``kalaro verify``) and the tests go through it.
    """
    state = game.new_hand(options, seed, dealer)
    yield None, state, ()
    for seat, action in moves:
        state, events = game.apply(state, seat, action)
        yield seat, state, events


def replay(
    game: GameModule[S, A, O, Any, Any, E],
    options: O,
    seed: bytes,
    moves: Iterable[tuple[int, A]],
    dealer: int | None = None,
) -> S:
    """The state after ``moves`` (seat, action), in order, from the deal of ``seed``."""
    _, state, _ = deque(replay_steps(game, options, seed, moves, dealer), maxlen=1)[0]
    return state
