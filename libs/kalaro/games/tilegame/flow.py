"""The turn flow shared by the tile games: the deal, whose move it is, draws, kongs, wall out.

Pure functions over a game's own ``State`` Struct (anything with the fields of
:class:`~kalaro.games.tilegame.table.TileState`): each takes the state and a list to
append events to, and returns the new state, or raises ``IllegalAction`` before
anything changed. What differs between games comes in as a
:class:`~kalaro.games.tilegame.table.Table` or as a hook function passed to the one step
that needs it. The call window after a discard is :mod:`~kalaro.games.tilegame.calls`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Never, NoReturn, TypeVar

from kalaro.games import clock
from kalaro.games.base import IllegalAction, pick
from kalaro.games.tilegame.events import Returned, TimedOut, WallExhausted
from kalaro.games.tilegame.state import Timer
from kalaro.games.tilegame.table import (
    Events,
    MeldLike,
    PlayerLike,
    Table,
    TileState,
    evolve,
    pending,
    replaced,
    set_player,
    without_tiles,
)
from kalaro.games.tiles import sort_key

_S = TypeVar("_S", bound=TileState)
_A = TypeVar("_A")

# -- the deal -----------------------------------------------------------------------


def choose_dealer(seed: bytes, dealer: int | None, seats: int) -> int:
    """``dealer``, or (None: the first hand) a seat drawn from ``seed``; ``ValueError`` if
    it is not a seat."""
    if dealer is None:
        dealer = pick(seed, "dealer", seats)
    if not 0 <= dealer < seats:
        raise ValueError(f"dealer must be a seat 0-{seats - 1}, not {dealer}")
    return dealer


def seats_from(dealer: int, seats: int) -> list[int]:
    """Every seat, the dealer first, in playing order."""
    return [(dealer + i) % seats for i in range(seats)]


def deal(
    tiles: Sequence[str], dealer: int, seats: int, batches: Iterable[int]
) -> tuple[list[list[str]], tuple[str, ...]]:
    """Deal from the front of ``tiles``: each batch size to every seat in turn from the
    dealer. The hands (by seat) and the wall left."""
    hands: list[list[str]] = [[] for _ in range(seats)]
    front = 0
    for batch in batches:
        for seat in seats_from(dealer, seats):
            hands[seat].extend(tiles[front : front + batch])
            front += batch
    return hands, tuple(tiles[front:])


def dealt_hand(
    state: Callable[..., _S],
    options: object,
    dealer: int,
    players: tuple[Any, ...],
    wall: tuple[str, ...],
    **fields: Any,
) -> _S:
    """A hand just dealt, as the game's ``State`` (plus its own ``fields``): the dealer
    is to draw first."""
    return state(
        options=options,
        dealer=dealer,
        players=players,
        wall=wall,
        turn=dealer,
        phase="draw",
        **fields,
    )


# -- who is to act -------------------------------------------------------------------


def legal_actions(
    state: _S,
    seat: int,
    *,
    turn_moves: Callable[[_S, int], list[_A]],
    back: _A,
    pass_: _A,
    draw: _A,
) -> list[_A]:
    """Everything ``seat`` may do now: in a call window its private offers and ``pass_``;
    on its turn ``draw``, then the game's ``turn_moves``; ``back`` first if it is away
    (whether or not it is to move)."""
    if state.phase == "over":
        return []
    moves: list[_A] = []
    if state.phase == "calls":
        moves = call_moves(state, seat, pass_)
    elif seat == state.turn:
        moves = [draw] if state.phase == "draw" else turn_moves(state, seat)
    return [back, *moves] if clock.is_away(state.away, seat) else moves


def call_moves(state: _S, seat: int, pass_: _A) -> list[Any]:
    """A seat's moves while a call window is open: its offers and ``pass_``, if awaited."""
    assert state.call is not None
    if seat in pending(state.call):
        return [*state.call.offers[seat], pass_]
    return []


def to_act(state: _S) -> list[int]:
    """Seats whose input the hand waits for: the player to move, or the seats that may claim."""
    if state.phase == "over":
        return []
    if state.phase == "calls":
        assert state.call is not None
        return pending(state.call)
    return [state.turn]


def pending_timer(state: TileState) -> Timer | None:
    """The deadline the worker must run now, if any: the call window, or the turn.

    The turn timer runs only with ``turn_seconds``; it covers the whole turn (0 s for a
    seat marked away). A call window always runs ``call_seconds``, even when it waits
    only on seats marked away: who may claim is private, and a deadline that depended on
    it (in a view's clock or a frame's ``deadline_ms``) would tell every seat that only
    away seats can claim.
    """
    if state.phase == "calls":
        assert state.call is not None
        return Timer(
            kind="call",
            seats=tuple(pending(state.call)),
            seconds=state.options.call_seconds,
            opened_at=state.call.opened_at,
        )
    seconds = state.options.turn_seconds
    if state.phase == "over" or seconds is None:
        return None
    if clock.is_away(state.away, state.turn):
        seconds = 0
    return Timer(kind="turn", seats=(state.turn,), seconds=seconds, opened_at=state.turn_started)


def away_seats(state: TileState) -> tuple[int, ...]:
    """The seats marked away now (at the hand's end: to sit out the next deal)."""
    return clock.away_seats(state.away)


def is_over(state: TileState) -> bool:
    """Whether the hand has ended (won or wall out); ``result`` then has the payments."""
    return state.phase == "over"


# -- every move ----------------------------------------------------------------------


def check_move(table: Table, state: _S, seat: int) -> None:
    """A real seat, and a hand still being played."""
    if not isinstance(seat, int) or not 0 <= seat < table.seats:
        raise IllegalAction("bad_seat", f"seat must be 0-{table.seats - 1}")
    if state.phase == "over":
        raise IllegalAction("hand_over", "the hand is over")


def end_move(
    table: Table,
    before: _S,
    after: _S,
    seat: int,
    *,
    timed_out: bool,
    events: Events,
    answered: bool = False,
) -> _S:
    """Count the step and keep the away marks: a time-out counts towards away, a move clears.

    ``answered``: the move answered a call window (a claim, a pass, or its time-out).
    Who may claim is private, and the away marks are public, so such a move touches
    neither mark, and its time-out is told only to the seat (``TimedOut.call``).
    """
    if answered:
        if timed_out:
            events.insert(0, TimedOut(seat=seat, away=clock.is_away(before.away, seat), call=True))
        return evolve(after, step=before.step + 1)
    if timed_out:
        away, timeouts = clock.timed_out(
            before.away, before.timeouts, seat, table.seats, before.options.away_after_timeouts
        )
        events.insert(0, TimedOut(seat=seat, away=away[seat]))
    else:
        away, timeouts = clock.acted(before.away, before.timeouts, seat, table.seats)
    return evolve(after, step=before.step + 1, away=away, timeouts=timeouts)


def play(
    table: Table, state: _S, seat: int, action: _A, move: Callable[[_S, int, _A, Events], _S]
) -> tuple[_S, Events]:
    """Play ``action`` for ``seat`` with the game's ``move`` (its ``match`` on the action).

    The seat and the hand are checked first; then the step is counted and the away marks
    kept (:func:`end_move`): a time-out counts towards away, a turn move clears it, an
    answer to a call window touches neither. ``state`` itself is never changed.
    """
    check_move(table, state, seat)
    events: Events = []
    after = move(state, seat, action, events)
    timed_out = isinstance(action, table.time_out)
    answered = state.phase == "calls" and isinstance(action, table.answers)
    return end_move(
        table, state, after, seat, timed_out=timed_out, answered=answered, events=events
    ), events


def unhandled(table: Table, action: Never) -> NoReturn:
    """The ``case _`` of a game's ``match`` on its actions.

    Typed ``Never`` so that an action added to the union but not to the ``match`` is a
    type error; at run time, something that is not an action at all.
    """
    raise unknown_action(table, action)


def back(table: Table, state: _S, seat: int, events: Events) -> _S:
    """An away seat is back; nothing else changes (``end_move`` clears the mark)."""
    if not clock.is_away(state.away, seat):
        raise IllegalAction("not_away", "you are not marked away")
    events.append(Returned(seat=seat))
    return state


def unknown_action(table: Table, action: object) -> IllegalAction:
    """The error for something that is not one of the game's actions."""
    return IllegalAction("unknown_action", f"not a {table.game} action: {action!r}")


# -- the turn ------------------------------------------------------------------------


def check_turn(state: _S, seat: int) -> None:
    """The player to move, and not while a tile may still be claimed."""
    if state.phase == "calls":
        assert state.call is not None
        raise IllegalAction("not_your_turn", f"waiting for claims on {state.call.tile}")
    if seat != state.turn:
        raise IllegalAction("not_your_turn", f"it is seat {state.turn}'s turn")


def check_drawn(state: _S, seat: int) -> None:
    """The player to move, past the draw."""
    check_turn(state, seat)
    if state.phase == "draw":
        raise IllegalAction("must_draw_first", "draw a tile first")


def check_draw(state: _S, seat: int) -> None:
    """The player to move, before the draw."""
    check_turn(state, seat)
    if state.phase != "draw":
        raise IllegalAction("already_drawn", "you have drawn already; discard a tile")


def check_discard(state: _S, seat: int, tile: str) -> None:
    """The player to move, past the draw, holding ``tile``."""
    check_drawn(state, seat)
    if tile not in state.players[seat].hand:
        raise IllegalAction("tile_not_in_hand", f"{tile} is not in your hand")


def check_turn_timeout(state: _S, seat: int) -> None:
    """A turn's time-out: only with a turn clock, and only for the player to move."""
    if state.options.turn_seconds is None:
        raise IllegalAction("no_timer", "no timer is running for this seat")
    if seat != state.turn:
        raise IllegalAction("not_your_turn", f"it is seat {state.turn}'s turn")


def wall_tile(wall: tuple[str, ...], replacement: bool) -> tuple[str, tuple[str, ...]]:
    """The tile drawn (front of the wall, or back for a replacement) and the wall left."""
    return (wall[-1], wall[:-1]) if replacement else (wall[0], wall[1:])


def wall_out(table: Table, state: _S, events: Events) -> _S:
    """No tile left to draw: the hand ends with nobody winning."""
    events.append(WallExhausted())
    return evolve(
        state,
        phase="over",
        drawn=None,
        call=None,
        outcome=table.outcome(ending="wall_out"),
        **table.turn_fields,
    )


def to_discards(table: Table, state: _S, seat: int, tile: str, **changes: Any) -> _S:
    """``seat``'s ``tile`` leaves its hand for its discard row; the turn's draw is spent."""
    player = state.players[seat]
    player = evolve(
        player, hand=without_tiles(player.hand, tile), discards=(*player.discards, tile)
    )
    return evolve(
        state,
        players=set_player(state, seat, player),
        drawn=None,
        **table.turn_fields,
        **changes,
    )


def next_turn(table: Table, state: _S, discarder: int, events: Events) -> _S:
    """The discard stands: the next seat draws, or the wall is out if nothing is left."""
    state = evolve(state, call=None, drawn=None, **table.turn_fields)
    if not state.wall:
        return wall_out(table, state, events)
    return evolve(
        state, turn=(discarder + 1) % table.seats, phase="draw", turn_started=state.step + 1
    )


# -- kongs ---------------------------------------------------------------------------


def kong_tiles(state: _S, seat: int) -> list[str]:
    """Tiles ``seat`` may declare a kong of now: four in hand, or the fourth of a pong."""
    player = state.players[seat]
    if state.drawn is None or not state.wall:
        return []
    concealed = [t for t in dict.fromkeys(player.hand) if player.hand.count(t) == 4]
    added = [m.tiles[0] for m in player.melds if m.kind == "pong" and m.tiles[0] in player.hand]
    return sorted(concealed + added, key=sort_key)


def check_kong(table: Table, state: _S, after_claim: str) -> None:
    """A kong needs the turn's own draw and a replacement tile in the wall.

    ``after_claim``: the message for a turn that began with a claim.
    """
    code = f"cannot_{table.kong}"
    if state.drawn is None:
        raise IllegalAction(code, after_claim)
    if not state.wall:
        raise IllegalAction(code, "no tile is left for the replacement")


def pong_of(table: Table, player: PlayerLike, tile: str) -> int:
    """The index of ``player``'s pong of ``tile`` (to add the fourth to)."""
    for index, meld in enumerate(player.melds):
        if meld.kind == "pong" and meld.tiles[0] == tile:
            return index
    raise IllegalAction(f"cannot_{table.kong}", f"you hold neither four {tile} nor a pong of it")


def concealed_kong(state: _S, seat: int, tile: str, meld: MeldLike) -> _S:
    """``seat`` lays down its four ``tile`` as ``meld``."""
    player = state.players[seat]
    player = evolve(
        player, hand=without_tiles(player.hand, *(tile,) * 4), melds=(*player.melds, meld)
    )
    return evolve(state, players=set_player(state, seat, player))


def extended_kong(state: _S, seat: int, tile: str, meld: MeldLike) -> _S:
    """``seat`` adds ``tile`` to its pong, which becomes ``meld`` (nobody robbed it)."""
    player = state.players[seat]
    index = next(i for i, m in enumerate(player.melds) if m.kind == "pong" and m.tiles[0] == tile)
    player = evolve(
        player, hand=without_tiles(player.hand, tile), melds=replaced(player.melds, index, meld)
    )
    return evolve(state, players=set_player(state, seat, player), call=None, phase="discard")
