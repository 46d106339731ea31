"""The shapes the shared tile flow works on: sorted hands, a tile game's state, its Table.

The flow (:mod:`~kalaro.games.tilegame.flow`, :mod:`~kalaro.games.tilegame.calls`) is
written once over these protocols; each game's own ``State`` Structs have these fields
(same names, same meaning), and its :class:`Table` carries its classes and facts.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

import msgspec

from kalaro.games.tiles import sort_key

_T = TypeVar("_T")

#: Events are appended to the game's own list (``list[AnyEvent]``).
Events = list[Any]

# -- hands are sorted tuples ---------------------------------------------------------


def with_tiles(hand: tuple[str, ...], *tiles: str) -> tuple[str, ...]:
    """The hand with ``tiles`` added, still in sort order."""
    out = list(hand)
    for tile in tiles:
        insort(out, tile, key=sort_key)
    return tuple(out)


def without_tiles(hand: tuple[str, ...], *tiles: str) -> tuple[str, ...]:
    """The hand with one copy of each of ``tiles`` taken out (the caller checked they are there)."""
    out = list(hand)
    for tile in tiles:
        out.remove(tile)
    return tuple(out)


def replaced(items: tuple[_T, ...], index: int, item: _T) -> tuple[_T, ...]:
    """``items`` with the one at ``index`` swapped for ``item``."""
    return (*items[:index], item, *items[index + 1 :])


def safe_key(tile: str) -> int:
    """Sort key for tiles from clients: an unknown tile sorts last (and then fails a check)."""
    try:
        return sort_key(tile)
    except KeyError:
        return 1 << 20


def evolve(struct: _T, **changes: Any) -> _T:
    """``struct`` with ``changes``, of the game's own Struct type."""
    # ``msgspec.structs.replace`` keeps the game's own Struct type; the protocols below
    # cannot say "a Struct", hence the casts.
    return cast(_T, msgspec.structs.replace(cast(Any, struct), **changes))


# -- what every tile game's state has ------------------------------------------------


class ClaimLike(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def tiles(self) -> tuple[str, ...]: ...


class MeldLike(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def tiles(self) -> tuple[str, ...]: ...


class PlayerLike(Protocol):
    @property
    def hand(self) -> tuple[str, ...]: ...
    @property
    def melds(self) -> tuple[MeldLike, ...]: ...
    @property
    def discards(self) -> tuple[str, ...]: ...


class CallLike(Protocol):
    @property
    def tile(self) -> str: ...
    @property
    def discarder(self) -> int: ...
    @property
    def robbing(self) -> bool: ...
    @property
    def offers(self) -> tuple[tuple[ClaimLike, ...], ...]: ...
    @property
    def answered(self) -> tuple[bool, ...]: ...
    @property
    def claims(self) -> tuple[ClaimLike | None, ...]: ...
    @property
    def opened_at(self) -> int: ...


class OptionsLike(Protocol):
    @property
    def call_seconds(self) -> int: ...
    @property
    def turn_seconds(self) -> int | None: ...
    @property
    def away_after_timeouts(self) -> int: ...


class TileState(Protocol):
    """The fields of a hand every tile game's ``State`` has (same names, same meaning)."""

    @property
    def options(self) -> OptionsLike: ...
    @property
    def dealer(self) -> int: ...
    @property
    def players(self) -> tuple[PlayerLike, ...]: ...
    @property
    def wall(self) -> tuple[str, ...]: ...
    @property
    def turn(self) -> int: ...
    @property
    def phase(self) -> str: ...
    @property
    def drawn(self) -> str | None: ...
    @property
    def call(self) -> CallLike | None: ...
    @property
    def step(self) -> int: ...
    @property
    def turn_started(self) -> int: ...
    @property
    def away(self) -> tuple[bool, ...]: ...
    @property
    def timeouts(self) -> tuple[int, ...]: ...


# -- what the flow builds of the game's own classes ----------------------------------
# Keyword-only, as the classes are; a field typed by the game as a ``Literal`` or a
# union of its own Structs is ``Any`` here (a protocol's parameter cannot be narrower).


class MakeClaim(Protocol):
    def __call__(self, *, kind: Any, tiles: tuple[str, ...]) -> ClaimLike: ...


class MakeOutcome(Protocol):
    def __call__(self, *, ending: Any) -> object: ...


class MakeClaimsOffered(Protocol):
    def __call__(self, *, seat: int, tile: str, claims: Any, seconds: int) -> object: ...


class MakeCallAnswered(Protocol):
    def __call__(self, *, seat: int, claim: Any) -> object: ...


class MakeTileClaimed(Protocol):
    def __call__(self, *, seat: int, discarder: int, meld: Any) -> object: ...


@dataclass(frozen=True, kw_only=True)
class Table:
    """One tile game's facts for the shared flow: its seats, its claims, its Structs.

    The Struct and event fields are the game's own classes (they hold its ``Claim`` and
    ``Meld``); the flow builds them by keyword, with the same field names in every game.
    """

    #: The game's name in messages ("not a Mahjong action").
    game: str
    seats: int
    #: The game's word for four alike ("kang", "kong"): error codes and messages use it.
    kong: str
    #: The claim that wins on a discard; a time-out claims it when it is offered.
    win: ClaimLike
    #: Claim kinds by priority, higher first to be served.
    priority: Mapping[str, int]
    #: Several seats may win on one discard (else only the nearest after the discarder).
    several_winners: bool
    #: ``State`` fields that belong to one turn and are reset with ``drawn`` and ``call``.
    turn_fields: Mapping[str, Any] = field(default_factory=dict)
    # The game's Structs and events, built by keyword (they are ``kw_only``).
    claim: MakeClaim
    call_window: Callable[..., CallLike]  # plus the game's own window fields
    outcome: MakeOutcome
    claims_offered: MakeClaimsOffered
    call_answered: MakeCallAnswered
    tile_claimed: MakeTileClaimed
    #: The game's ``TimeOut`` class (a time-out counts towards away), and the classes of
    #: the actions that answer a call window (``Claim``, ``Pass``, ``TimeOut``: private).
    time_out: type
    answers: tuple[type, ...]


def set_player(state: TileState, seat: int, player: Any) -> tuple[Any, ...]:
    """``state.players`` with ``seat``'s replaced."""
    return replaced(state.players, seat, player)


def pending(call: CallLike) -> list[int]:
    """Seats the call window still waits on."""
    return [s for s in range(len(call.offers)) if call.offers[s] and not call.answered[s]]
