"""The call window shared by the tile games: who may claim a tile, their answers, who gets it.

After a discard (or a kong being added, which others may rob with a win) every seat
that may claim the tile is asked privately; the best claim is served (win, then kong,
then pong or chow; nearest after the discarder first) once nobody still deciding could
change what happens. Pure, like :mod:`~kalaro.games.tilegame.flow`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from kalaro.games import clock
from kalaro.games.base import IllegalAction
from kalaro.games.tilegame.events import CallsPassed, CallWindowOpened
from kalaro.games.tilegame.flow import check_turn_timeout, next_turn
from kalaro.games.tilegame.table import (
    CallLike,
    ClaimLike,
    Events,
    MeldLike,
    Table,
    TileState,
    evolve,
    pending,
    replaced,
    safe_key,
    with_tiles,
    without_tiles,
)

_S = TypeVar("_S", bound=TileState)

#: A game's ``_answer(state, seat, claim or None, events)``: record it, resolve if it can.
Answer = Callable[[_S, int, Any, Events], _S]


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
    events: Events,
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
    events: Events,
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
    state = evolve(state, phase="calls", call=call)
    settled: Events = []
    while state.phase == "calls":
        assert state.call is not None
        gone = [s for s in pending(state.call) if clock.is_away(state.away, s)]
        if not gone:
            break
        state = answer(state, gone[0], timed_out_answer(table, state, gone[0]), settled)
    # Out of sight, nobody learns that a window was passed.
    events.extend(e for e in settled if seen or not isinstance(e, CallsPassed))
    return state


def record_answer(
    table: Table,
    state: _S,
    seat: int,
    claim: ClaimLike | None,
    events: Events,
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
    call = evolve(
        call,
        answered=replaced(call.answered, seat, True),
        claims=replaced(call.claims, seat, claim),
    )
    events.append(table.call_answered(seat=seat, claim=claim))
    return evolve(state, call=call)


def timed_out_answer(table: Table, state: _S, seat: int) -> ClaimLike | None:
    """A call window's time-out answer: the win if it is offered, else a pass (None)."""
    assert state.call is not None
    if seat not in pending(state.call):
        raise IllegalAction("not_your_turn", "no answer is due from you")
    return table.win if table.win in state.call.offers[seat] else None


def _nearness(table: Table, call: CallLike, seat: int) -> int:
    return (seat - call.discarder) % table.seats


def _rank(table: Table, call: CallLike, seat: int, claim: ClaimLike) -> tuple[int, int]:
    """Higher is served first: the kind's priority, then nearness after the discarder."""
    return table.priority[claim.kind], -_nearness(table, call, seat)


def resolve(
    table: Table,
    state: _S,
    events: Events,
    *,
    win: Callable[[_S, tuple[int, ...], Events], _S],
    meld: Callable[[_S, int, Any, Events], _S],
    kong_stands: Callable[[_S, int, str, Events], _S],
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
        giver = evolve(giver, hand=without_tiles(giver.hand, call.tile))
    else:
        giver = evolve(giver, discards=giver.discards[:-1])
    players = replaced(state.players, call.discarder, giver)
    taker = players[to]
    return replaced(players, to, evolve(taker, hand=with_tiles(taker.hand, call.tile)))


def claim_meld(
    table: Table, state: _S, seat: int, tiles: tuple[str, ...], meld: MeldLike, events: Events
) -> _S:
    """``seat`` takes the discard with its ``tiles`` for ``meld``; its turn, to discard."""
    call = state.call
    assert call is not None
    giver = state.players[call.discarder]
    players = replaced(state.players, call.discarder, evolve(giver, discards=giver.discards[:-1]))
    taker = players[seat]
    taker = evolve(taker, hand=without_tiles(taker.hand, *tiles), melds=(*taker.melds, meld))
    events.append(table.tile_claimed(seat=seat, discarder=call.discarder, meld=meld))
    return evolve(
        state,
        players=replaced(players, seat, taker),
        turn=seat,
        phase="discard",
        drawn=None,
        call=None,
        turn_started=state.step + 1,
        **table.turn_fields,
    )


def time_out(
    table: Table,
    state: _S,
    seat: int,
    events: Events,
    *,
    answer: Answer[_S],
    draw: Callable[[_S, int, Events], _S],
    turn: Callable[[_S, int, Events], _S],
) -> _S:
    """Play for a seat whose timer ran out, conservatively.

    A call window: the win if it is offered, else a pass (``answer``). A turn: ``draw``
    if not drawn yet; unless that ended the turn (a win, the wall out, a shown hand's
    draw gone out), the game's ``turn`` plays the rest (a win, else a discard).
    """
    if state.phase == "calls":
        return answer(state, seat, timed_out_answer(table, state, seat), events)
    check_turn_timeout(state, seat)
    if state.phase == "draw":
        state = draw(state, seat, events)
        if state.phase != "discard":
            return state
    return turn(state, seat, events)
