"""The table flow of Ka Wu Xing: deal, turns, claims, kongs, Show Hand, wins, wall out.

Pure functions over :class:`State`: ``apply`` returns a new state and the events of the
move, or raises ``IllegalAction`` and leaves nothing changed. Chance is the seed given to
``new_hand``; call windows and (with ``turn_seconds``) turns end on ``TimeOut`` actions
sent by the worker. This module is the moves; the deal is :mod:`~kalaro.games.kawuxing.deal`,
who may win or claim a tile :mod:`~kalaro.games.kawuxing.offers`.

The turn: the player to move taps Draw (front of the wall). Holding four alike, or the
fourth tile of an own pong, they may declare a kong and draw a replacement from the
back. A complete hand after their own draw wins by self-draw; otherwise they discard —
or Show Hand: discard and lay the rest open, which must be waiting. A shown hand is
locked: its draws that do not win are discarded by the engine in the same move.
Win on Kong (self-draw on the replacement) and Fire on Kong (a win on the discard after
it) follow only a visible kong, claimed from a discard or extended onto a pong; after a
concealed kong neither applies, so a chicken hand still cannot win on that discard.

The call window: after a discard, every other seat that can claim it is told privately
what it may claim and answers ``Claim`` or ``Pass``. Win beats
Kong beats Pong; no chow. Both other players may win on the same discard, so the window
waits for every seat that could win before it gives the tile to a kong or pong. A
chicken hand (no score item) is not offered a win on a discard: it wins only by
self-draw — unless it is shown. The tile added to a pong for an extended kong opens the
same kind of window, for wins only (Rob a Kong).

The clock (``turn_seconds``, on by default; call windows have ``call_seconds``): when a
timer runs out the worker sends ``TimeOut`` and the engine plays conservatively for the
seat. A turn: draw if not drawn yet (a shown hand's draw that does not win goes out at
once, as always); declare the win if the hand is complete; else discard the drawn tile
(after a pong: the rightmost tile). A call window: claim the win if it is offered
(robbing a kong included), else pass. A time-out never declares a kong, claims a pong
or kong, nor shows the hand. After ``away_after_timeouts`` time-outs in a row the seat is
marked away (turn time-outs only) and its turn timer runs 0 s; a window is answered for
it at once (and opened in sight only if a seat not away may claim). Who may claim is
private: a window always runs ``call_seconds``, and its answers and time-out neither
count nor clear (``tilegame.flow``). Any turn move of its own, or ``Back`` (offered
first to an away seat at any moment), clears that.
"""

from __future__ import annotations

import msgspec

from kalaro.games.base import IllegalAction
from kalaro.games.kawuxing.actions import (
    AnyAction,
    Back,
    Claim,
    DeclareKong,
    DeclareWin,
    Discard,
    Draw,
    Pass,
    ShowHand,
    TimeOut,
)
from kalaro.games.kawuxing.events import (
    AnyEvent,
    HandShown,
    HandWon,
    KongDeclared,
    KongOffered,
    TileDiscarded,
    TileDrawn,
)
from kalaro.games.kawuxing.hands import is_winning, waits
from kalaro.games.kawuxing.offers import can_win_on, claim_offers, kong_tiles, show_tiles
from kalaro.games.kawuxing.state import Meld, Outcome, State
from kalaro.games.kawuxing.table import TABLE
from kalaro.games.tilegame import calls
from kalaro.games.tilegame import flow as tilegame
from kalaro.games.tilegame.table import replaced, with_tiles, without_tiles

# -- what a seat may do -------------------------------------------------------------


def legal_actions(state: State, seat: int) -> list[AnyAction]:
    """What ``seat`` may do now; a shown hand is locked, a chicken hand never offered a win."""
    return tilegame.legal_actions(
        state, seat, turn_moves=_turn_moves, back=Back(), pass_=Pass(), draw=Draw()
    )


def _turn_moves(state: State, seat: int) -> list[AnyAction]:
    """The turn's moves once its tile is held: win, kong, discard, Show Hand."""
    player = state.players[seat]
    actions: list[AnyAction] = []
    if state.drawn is not None and is_winning(player.hand, player.melds):
        actions.append(DeclareWin())
    if player.shown:
        # Only a winning draw waits for its owner; the hand may still let it go.
        assert state.drawn is not None
        return [*actions, Discard(state.drawn)]
    actions.extend(DeclareKong(t) for t in kong_tiles(state, seat))
    actions.extend(Discard(t) for t in dict.fromkeys(player.hand))
    actions.extend(ShowHand(t) for t in show_tiles(player))
    return actions


# -- moves --------------------------------------------------------------------------


def apply(state: State, seat: int, action: AnyAction) -> tuple[State, list[AnyEvent]]:
    """The new state and what happened when ``seat`` plays ``action`` (or ``IllegalAction``)."""
    return tilegame.play(TABLE, state, seat, action, _move)


def _move(state: State, seat: int, action: AnyAction, events: list[AnyEvent]) -> State:
    match action:
        case Draw():
            new = _draw(state, seat, events)
        case Discard(tile=tile):
            new = _discard(state, seat, tile, False, events)
        case ShowHand(tile=tile):
            new = _discard(state, seat, tile, True, events)
        case DeclareKong(tile=tile):
            new = _declare_kong(state, seat, tile, events)
        case DeclareWin():
            new = _declare_win(state, seat, events)
        case Claim():
            new = _answer(state, seat, action, events)
        case Pass():
            new = _answer(state, seat, None, events)
        case TimeOut():
            new = _time_out(state, seat, events)
        case Back():
            new = tilegame.back(TABLE, state, seat, events)
        case _:
            tilegame.unhandled(TABLE, action)
    return new


def _draw(state: State, seat: int, events: list[AnyEvent]) -> State:
    tilegame.check_draw(state, seat)
    return _take_tile(state, seat, replacement=False, events=events)


def _take_tile(
    state: State, seat: int, replacement: bool, events: list[AnyEvent], *, visible: bool = False
) -> State:
    """``seat`` draws from the front (or the back, for a kong's replacement; ``visible``
    for an exposed or extended kong's, which alone earns Win / Fire on Kong).

    Callers make sure the wall is not empty. A shown hand's draw that does not win is
    discarded at once: the hand is locked, so there is nothing to decide.
    """
    tile, wall = tilegame.wall_tile(state.wall, replacement)
    player = state.players[seat]
    events.append(TileDrawn(seat=seat, tile=tile, replacement=replacement, shown=player.shown))
    player = msgspec.structs.replace(player, hand=with_tiles(player.hand, tile))
    state = msgspec.structs.replace(
        state,
        players=replaced(state.players, seat, player),
        wall=wall,
        turn=seat,
        phase="discard",
        drawn=tile,
        replacement=replacement,
        visible_kong=replacement and visible,
        call=None,
    )
    if player.shown and not is_winning(player.hand, player.melds):
        return _put_down(state, seat, tile, events, auto=True)
    return state


def _discard(state: State, seat: int, tile: str, show: bool, events: list[AnyEvent]) -> State:
    tilegame.check_discard(state, seat, tile)
    player = state.players[seat]
    if player.shown and tile != state.drawn:
        raise IllegalAction("hand_shown", "a shown hand cannot change: discard the drawn tile")
    if show:
        if player.shown:
            raise IllegalAction("already_shown", "your hand is shown already")
        rest = without_tiles(player.hand, tile)
        waiting = waits(rest, player.melds)
        if not waiting:
            raise IllegalAction("not_waiting", f"after discarding {tile} your hand is not waiting")
        state = msgspec.structs.replace(
            state,
            players=replaced(state.players, seat, msgspec.structs.replace(player, shown=True)),
        )
        return _put_down(state, seat, tile, events, shown=(rest, tuple(waiting)))
    return _put_down(state, seat, tile, events)


def _put_down(
    state: State,
    seat: int,
    tile: str,
    events: list[AnyEvent],
    *,
    auto: bool = False,
    shown: tuple[tuple[str, ...], tuple[str, ...]] | None = None,
) -> State:
    """``seat`` discards ``tile``: open the call window, or pass the turn on."""
    after_kong = state.after_visible_kong  # Fire on Kong: never after a concealed kong
    state = tilegame.to_discards(TABLE, state, seat, tile)
    events.append(TileDiscarded(seat=seat, tile=tile, auto=auto))
    if shown is not None:
        events.append(HandShown(seat=seat, hand=shown[0], waits=shown[1]))
    offers = claim_offers(state, seat, tile, robbing=False, after_kong=after_kong)
    return calls.offer(
        TABLE, state, seat, tile, offers, events, answer=_answer, after_kong=after_kong
    )


def _declare_kong(state: State, seat: int, tile: str, events: list[AnyEvent]) -> State:
    tilegame.check_discard(state, seat, tile)
    player = state.players[seat]
    if player.shown:
        raise IllegalAction("hand_shown", "a shown hand cannot change")
    tilegame.check_kong(TABLE, state, "after claiming a pong you must discard")
    if player.hand.count(tile) == 4:
        meld = Meld(kind="kong", tiles=(tile,) * 4, kong="concealed", on_kong=state.replacement)
        state = tilegame.concealed_kong(state, seat, tile, meld)
        events.append(KongDeclared(seat=seat, kong="concealed", tile=tile, on_kong=meld.on_kong))
        return _take_tile(state, seat, replacement=True, events=events)
    tilegame.pong_of(TABLE, player, tile)
    # The tile added to a pong may be won on by the others (Rob a Kong) before it counts.
    offers = claim_offers(state, seat, tile, robbing=True, after_kong=False)
    if any(offers):
        if calls.in_sight(state, offers):  # else only away seats could: out of sight
            events.append(KongOffered(seat=seat, tile=tile))
        return calls.open_window(
            TABLE,
            state,
            seat,
            tile,
            offers,
            robbing=True,
            events=events,
            answer=_answer,
            after_kong=False,
        )
    return _extend_pong(state, seat, tile, events)


def _extend_pong(state: State, seat: int, tile: str, events: list[AnyEvent]) -> State:
    """Nobody robbed it: the pong becomes an extended kong; a replacement follows."""
    pong = state.players[seat].melds[tilegame.pong_of(TABLE, state.players[seat], tile)]
    meld = msgspec.structs.replace(
        pong, kind="kong", tiles=(tile,) * 4, kong="extended", on_kong=state.replacement
    )
    state = tilegame.extended_kong(state, seat, tile, meld)
    events.append(KongDeclared(seat=seat, kong="extended", tile=tile, on_kong=meld.on_kong))
    return _take_tile(state, seat, replacement=True, events=events, visible=True)


def _declare_win(state: State, seat: int, events: list[AnyEvent]) -> State:
    tilegame.check_drawn(state, seat)
    player = state.players[seat]
    if state.drawn is None:
        raise IllegalAction(
            "cannot_win", "a claimed pong does not win; win by claiming the discard"
        )
    if not is_winning(player.hand, player.melds):
        raise IllegalAction("hand_not_complete", "your hand is not complete")
    events.append(HandWon(seat=seat, tile=state.drawn, self_draw=True))
    outcome = Outcome(
        ending="self_draw",
        winners=(seat,),
        tile=state.drawn,
        after_kong=state.after_visible_kong,  # Win on Kong: never after a concealed kong
        last_tile=not state.wall,
    )
    return msgspec.structs.replace(state, phase="over", outcome=outcome)


# -- the call window ----------------------------------------------------------------


def _answer(state: State, seat: int, claim: Claim | None, events: list[AnyEvent]) -> State:
    """Record ``seat``'s claim (or pass, for None) and resolve the window if it can.

    Any seat that may still win is waited for (it could win alone, or as a second
    winner); a kong or pong goes ahead once nobody still deciding could outrank it.
    """
    state = calls.record_answer(TABLE, state, seat, claim, events, refuse=_refuse_claim)
    return calls.resolve(
        TABLE, state, events, win=_win_on_tile, meld=_take_discard, kong_stands=_extend_pong
    )


def _refuse_claim(state: State, seat: int, claim: Claim) -> None:
    """A chicken hand's win is refused with its own code (``chicken_hand``)."""
    call = state.call
    assert call is not None
    if claim.kind == "win" and seat != call.discarder:
        completes, may_win = can_win_on(
            state, seat, call.tile, robbing=call.robbing, after_kong=call.after_kong
        )
        if completes and not may_win:
            raise IllegalAction(
                "chicken_hand",
                f"{call.tile} completes your hand, but with no score item (a chicken hand) "
                "it wins only by self-draw",
            )


def _time_out(state: State, seat: int, events: list[AnyEvent]) -> State:
    """A time-out (:func:`~kalaro.games.tilegame.calls.time_out`); it never shows the hand."""
    return calls.time_out(
        TABLE, state, seat, events, answer=_answer, draw=_draw, turn=_timed_out_turn
    )


def _timed_out_turn(state: State, seat: int, events: list[AnyEvent]) -> State:
    """Win with a complete hand, else discard the drawn tile (after a pong: the rightmost)."""
    player = state.players[seat]
    if state.drawn is not None and is_winning(player.hand, player.melds):
        return _declare_win(state, seat, events)
    tile = state.drawn if state.drawn is not None else player.hand[-1]
    return _discard(state, seat, tile, False, events)


def _win_on_tile(state: State, winners: tuple[int, ...], events: list[AnyEvent]) -> State:
    """The winners take the tile: it physically goes to the first, all are scored with it."""
    call = state.call
    assert call is not None
    tile, giver_seat = call.tile, call.discarder
    players = calls.give_tile(state, winners[0])
    events.extend(
        HandWon(seat=s, tile=tile, self_draw=False, discarder=giver_seat, robbed_kong=call.robbing)
        for s in winners
    )
    outcome = Outcome(
        ending="robbed_kong" if call.robbing else "discard",
        winners=winners,
        discarder=giver_seat,
        tile=tile,
        after_kong=call.after_kong,
    )
    return msgspec.structs.replace(
        state, players=players, phase="over", call=None, drawn=None, outcome=outcome
    )


def _take_discard(state: State, seat: int, claim: Claim, events: list[AnyEvent]) -> State:
    """``seat`` takes the discard for a pong or an exposed kong."""
    call = state.call
    assert call is not None
    tile, discarder = call.tile, call.discarder
    meld = Meld(
        kind="kong" if claim.kind == "kong" else "pong",
        tiles=with_tiles(claim.tiles, tile),
        claimed=tile,
        from_seat=discarder,
        kong="exposed" if claim.kind == "kong" else None,
    )
    state = calls.claim_meld(TABLE, state, seat, claim.tiles, meld, events)
    if claim.kind == "kong":
        return _take_tile(state, seat, replacement=True, events=events, visible=True)
    return state
