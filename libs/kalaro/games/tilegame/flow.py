"""The table flow shared by the tile games: turns, the call window, kongs, wall out.

Pure functions over a game's own ``State`` Struct (anything with the fields of
:class:`TileState`): each takes the state and a list to append events to, and returns
the new state, or raises ``IllegalAction`` before anything changed. What differs between
games comes in as a :class:`Table` (the game's Structs and events, its winning claim,
its seat count) or as a hook function passed to the one step that needs it.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

import msgspec

from kalaro.games import clock
from kalaro.games.base import IllegalAction, pick
from kalaro.games.tilegame.events import (
    CallsPassed,
    CallWindowOpened,
    Returned,
    TimedOut,
    WallExhausted,
)
from kalaro.games.tiles import sort_key

_T = TypeVar("_T")

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


def _replace(struct: _T, **changes: Any) -> _T:
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


_S = TypeVar("_S", bound=TileState)
_A = TypeVar("_A")

#: _Events are appended to the game's own list (``list[AnyEvent]``).
_Events = list[Any]


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
    win: Any
    #: Claim kinds by priority, higher first to be served.
    priority: Mapping[str, int]
    #: Several seats may win on one discard (else only the nearest after the discarder).
    several_winners: bool
    #: ``State`` fields that belong to one turn and are reset with ``drawn`` and ``call``.
    turn_fields: Mapping[str, Any] = field(default_factory=dict)
    # The game's Structs.
    claim: Callable[..., Any]
    call_window: Callable[..., Any]
    outcome: Callable[..., Any]
    # The game's events that hold its own ``Claim`` or ``Meld``.
    claims_offered: Callable[..., Any]
    call_answered: Callable[..., Any]
    tile_claimed: Callable[..., Any]


def _set_player(state: _S, seat: int, player: Any) -> tuple[Any, ...]:
    """``state.players`` with ``seat``'s replaced."""
    return replaced(state.players, seat, player)


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


# -- who is to act -------------------------------------------------------------------


def pending(call: CallLike) -> list[int]:
    """Seats the call window still waits on."""
    return [s for s in range(len(call.offers)) if call.offers[s] and not call.answered[s]]


def legal_actions(state: _S, seat: int, moves: Callable[[_S, int], list[_A]], back: _A) -> list[_A]:
    """Everything ``seat`` may do now: ``moves`` (the game's), after ``back`` if away."""
    if state.phase == "over":
        return []
    if clock.is_away(state.away, seat):
        return [back, *moves(state, seat)]
    return moves(state, seat)


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


def pending_timer(state: _S, timer: Callable[..., _T]) -> _T | None:
    """The deadline the worker must run now, if any: the call window, or the turn.

    The turn timer runs only with ``turn_seconds``; it covers the whole turn (0 s for a
    seat marked away). A call window always runs ``call_seconds``, even when it waits
    only on seats marked away: who may claim is private, and a deadline that depended on
    it (in a view's clock or a frame's ``deadline_ms``) would tell every seat that only
    away seats can claim. ``timer`` is the game's ``Timer``.
    """
    if state.phase == "calls":
        assert state.call is not None
        return timer(
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
    return timer(kind="turn", seats=(state.turn,), seconds=seconds, opened_at=state.turn_started)


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
    events: _Events,
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
        return _replace(after, step=before.step + 1)
    if timed_out:
        away, timeouts = clock.timed_out(
            before.away, before.timeouts, seat, table.seats, before.options.away_after_timeouts
        )
        events.insert(0, TimedOut(seat=seat, away=away[seat]))
    else:
        away, timeouts = clock.acted(before.away, before.timeouts, seat, table.seats)
    return _replace(after, step=before.step + 1, away=away, timeouts=timeouts)


def back(table: Table, state: _S, seat: int, events: _Events) -> _S:
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


def wall_tile(wall: tuple[str, ...], replacement: bool) -> tuple[str, tuple[str, ...]]:
    """The tile drawn (front of the wall, or back for a replacement) and the wall left."""
    return (wall[-1], wall[:-1]) if replacement else (wall[0], wall[1:])


def wall_out(table: Table, state: _S, events: _Events) -> _S:
    """No tile left to draw: the hand ends with nobody winning."""
    events.append(WallExhausted())
    return _replace(
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
    player = _replace(
        player, hand=without_tiles(player.hand, tile), discards=(*player.discards, tile)
    )
    return _replace(
        state,
        players=_set_player(state, seat, player),
        drawn=None,
        **table.turn_fields,
        **changes,
    )


#: A game's ``_answer(state, seat, claim or None, events)``: record it, resolve if it can.
Answer = Callable[[_S, int, Any, _Events], _S]


def in_sight(state: _S, offers: tuple[tuple[ClaimLike, ...], ...]) -> bool:
    """Whether a window on ``offers`` opens for all to see: a seat not away may claim.

    Seats marked away are answered for at once (:func:`open_window`); a window only they
    could claim is settled out of sight, so that nobody learns they could.
    """
    return any(o and not clock.is_away(state.away, s) for s, o in enumerate(offers))


def offer(
    table: Table,
    state: _S,
    seat: int,
    tile: str,
    offers: tuple[tuple[ClaimLike, ...], ...],
    events: _Events,
    *,
    answer: Answer[_S],
    **window: Any,
) -> _S:
    """After ``seat``'s discard: a call window if anyone may claim it, else the next turn."""
    if not any(offers):
        return next_turn(table, state, seat, events)
    return open_window(
        table, state, seat, tile, offers, robbing=False, events=events, answer=answer, **window
    )


def open_window(
    table: Table,
    state: _S,
    seat: int,
    tile: str,
    offers: tuple[tuple[ClaimLike, ...], ...],
    *,
    robbing: bool,
    events: _Events,
    answer: Answer[_S],
    **window: Any,
) -> _S:
    """Ask the seats with ``offers`` about ``seat``'s ``tile`` (a discard, or a kong's).

    A seat marked away is answered for at once, as its time-out would (``answer``: the
    win if it is offered, else a pass), so the table never waits on it and the window's
    deadline is the same whoever may claim. The window is opened in sight (the public
    ``CallWindowOpened``) only if a seat not away may claim (:func:`in_sight`); otherwise
    it is settled at once, with no public trace but its outcome. ``window``: the game's
    own ``CallWindow`` fields.
    """
    seconds = state.options.call_seconds
    seen = in_sight(state, offers)
    if seen:
        events.append(CallWindowOpened(discarder=seat, tile=tile, seconds=seconds, robbing=robbing))
    events.extend(  # each to its own seat (``event_for``)
        table.claims_offered(seat=s, tile=tile, claims=offers[s], seconds=seconds)
        for s in range(table.seats)
        if offers[s]
    )
    call = table.call_window(
        tile=tile,
        discarder=seat,
        robbing=robbing,
        offers=offers,
        answered=(False,) * table.seats,
        claims=(None,) * table.seats,
        opened_at=state.step + 1,
        **window,
    )
    state = _replace(state, phase="calls", call=call)
    settled: _Events = []
    while state.phase == "calls":
        assert state.call is not None
        gone = [s for s in pending(state.call) if clock.is_away(state.away, s)]
        if not gone:
            break
        state = answer(state, gone[0], timed_out_answer(table, state, gone[0]), settled)
    # Out of sight, nobody learns that a window was passed.
    events.extend(e for e in settled if seen or not isinstance(e, CallsPassed))
    return state


def next_turn(table: Table, state: _S, discarder: int, events: _Events) -> _S:
    """The discard stands: the next seat draws, or the wall is out if nothing is left."""
    state = _replace(state, call=None, drawn=None, **table.turn_fields)
    if not state.wall:
        return wall_out(table, state, events)
    return _replace(
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


def concealed_kong(state: _S, seat: int, tile: str, meld: Any) -> _S:
    """``seat`` lays down its four ``tile`` as ``meld``."""
    player = state.players[seat]
    player = _replace(
        player, hand=without_tiles(player.hand, *(tile,) * 4), melds=(*player.melds, meld)
    )
    return _replace(state, players=_set_player(state, seat, player))


def extended_kong(state: _S, seat: int, tile: str, meld: Any) -> _S:
    """``seat`` adds ``tile`` to its pong, which becomes ``meld`` (nobody robbed it)."""
    player = state.players[seat]
    index = next(i for i, m in enumerate(player.melds) if m.kind == "pong" and m.tiles[0] == tile)
    player = _replace(
        player, hand=without_tiles(player.hand, tile), melds=replaced(player.melds, index, meld)
    )
    return _replace(state, players=_set_player(state, seat, player), call=None, phase="discard")


# -- the call window -----------------------------------------------------------------


def record_answer(
    table: Table,
    state: _S,
    seat: int,
    claim: ClaimLike | None,
    events: _Events,
    *,
    refuse: Callable[[_S, int, Any], None] | None = None,
) -> _S:
    """Record ``seat``'s claim (or pass, for None); the caller then resolves the window.

    ``refuse`` may raise a better reason than "you cannot claim" for a claim not offered.
    """
    call = state.call
    if call is None:
        if claim is not None:
            raise IllegalAction("cannot_claim", "there is no discard to claim")
        raise IllegalAction("not_your_turn", "there is no discard to answer")
    if call.answered[seat]:
        raise IllegalAction("already_answered", "you have answered this discard already")
    if claim is not None:
        claim = table.claim(kind=claim.kind, tiles=tuple(sorted(claim.tiles, key=safe_key)))
        assert claim is not None
        if claim not in call.offers[seat]:
            if refuse is not None:
                refuse(state, seat, claim)
            raise IllegalAction(
                "cannot_claim", f"you cannot claim {claim.kind} on {call.tile} with those tiles"
            )
    elif not call.offers[seat]:
        raise IllegalAction("not_your_turn", "you have nothing to claim")
    call = _replace(
        call,
        answered=replaced(call.answered, seat, True),
        claims=replaced(call.claims, seat, claim),
    )
    events.append(table.call_answered(seat=seat, claim=claim))
    return _replace(state, call=call)


def timed_out_answer(table: Table, state: _S, seat: int) -> Any:
    """A call window's time-out answer: the win if it is offered, else a pass (None)."""
    assert state.call is not None
    if seat not in pending(state.call):
        raise IllegalAction("not_your_turn", "no answer is due from you")
    return table.win if table.win in state.call.offers[seat] else None


def check_turn_timeout(state: _S, seat: int) -> None:
    """A turn's time-out: only with a turn clock, and only for the player to move."""
    if state.options.turn_seconds is None:
        raise IllegalAction("no_timer", "no timer is running for this seat")
    if seat != state.turn:
        raise IllegalAction("not_your_turn", f"it is seat {state.turn}'s turn")


def _nearness(table: Table, call: CallLike, seat: int) -> int:
    return (seat - call.discarder) % table.seats


def _rank(table: Table, call: CallLike, seat: int, claim: ClaimLike) -> tuple[int, int]:
    """Higher is served first: the kind's priority, then nearness after the discarder."""
    return table.priority[claim.kind], -_nearness(table, call, seat)


def resolve(
    table: Table,
    state: _S,
    events: _Events,
    *,
    win: Callable[[_S, tuple[int, ...], _Events], _S],
    meld: Callable[[_S, int, Any, _Events], _S],
    kong_stands: Callable[[_S, int, str, _Events], _S],
) -> _S:
    """Close the window once no seat still to answer could change what happens.

    A seat still deciding is waited for if it could outrank the best claim so far, or
    (``several_winners``) if it could win too. Then: ``win`` for the winners (nearest
    after the discarder first), else ``meld`` for the best claim, else the tile stands
    (a discard: next turn; a kong being added: ``kong_stands``).
    """
    call = state.call
    assert call is not None
    made = [(s, c) for s, c in enumerate(call.claims) if c is not None]
    best = max(made, key=lambda sc: _rank(table, call, *sc), default=None)
    for seat in pending(call):
        if table.several_winners and table.win in call.offers[seat]:
            return state
        could = max(_rank(table, call, seat, c) for c in call.offers[seat])
        if best is None or could > _rank(table, call, *best):
            return state
    winners = sorted(
        (s for s, c in made if c.kind == table.win.kind),
        key=lambda s: _nearness(table, call, s),
    )
    if winners:
        return win(state, tuple(winners if table.several_winners else winners[:1]), events)
    if best is not None:
        return meld(state, *best, events)
    events.append(CallsPassed(discarder=call.discarder, tile=call.tile))
    if call.robbing:
        return kong_stands(state, call.discarder, call.tile, events)
    return next_turn(table, state, call.discarder, events)


def give_tile(state: _S, to: int) -> tuple[Any, ...]:
    """The players once the window's tile went to seat ``to``'s hand.

    It leaves its discarder's row, or (a robbed kong) the declarer's hand.
    """
    call = state.call
    assert call is not None
    giver = state.players[call.discarder]
    if call.robbing:
        giver = _replace(giver, hand=without_tiles(giver.hand, call.tile))
    else:
        giver = _replace(giver, discards=giver.discards[:-1])
    players = replaced(state.players, call.discarder, giver)
    taker = players[to]
    return replaced(players, to, _replace(taker, hand=with_tiles(taker.hand, call.tile)))


def claim_meld(
    table: Table, state: _S, seat: int, tiles: tuple[str, ...], meld: Any, events: _Events
) -> _S:
    """``seat`` takes the discard with its ``tiles`` for ``meld``; its turn, to discard."""
    call = state.call
    assert call is not None
    giver = state.players[call.discarder]
    players = replaced(state.players, call.discarder, _replace(giver, discards=giver.discards[:-1]))
    taker = players[seat]
    taker = _replace(taker, hand=without_tiles(taker.hand, *tiles), melds=(*taker.melds, meld))
    events.append(table.tile_claimed(seat=seat, discarder=call.discarder, meld=meld))
    return _replace(
        state,
        players=replaced(players, seat, taker),
        turn=seat,
        phase="discard",
        drawn=None,
        call=None,
        turn_started=state.step + 1,
        **table.turn_fields,
    )
