"""The table flow of Filipino 16-tile Mahjong: deal, turns, claims, kangs, wins, tabla.

Pure functions over :class:`State`: ``apply`` returns a new state and the events of the
move, or raises ``IllegalAction`` and leaves nothing changed. Chance is the seed given to
``new_hand``; the call window (and, with ``turn_seconds``, the turn) ends on ``TimeOut``
actions sent by the worker. What makes a winning hand, and what a win is called, is in
:mod:`~kalaro.games.mahjong.hands`. This module is the moves; the deal and the draws
with their flowers are :mod:`~kalaro.games.mahjong.draws`, who may win or claim and the
win itself :mod:`~kalaro.games.mahjong.wins`.

The turn: the player to move taps Draw (front of the wall); flowers are set aside and
replaced from the back, repeatedly. Holding a kang, they may declare it and draw a
replacement (again from the back). A complete hand after their own draw wins (bunot);
otherwise they discard.

The call window: after a discard, every other seat that can claim it is told privately
what it may claim and answers ``Claim`` or ``Pass`` (``TimeOut`` = pass). Seats with
nothing to claim are not waited on. The window resolves as soon as no seat still
thinking could beat the best claim already made — priority Mahjong > Kang > Pong > Chow,
and between two Mahjongs the seat nearer after the discarder — or when every seat has
answered. A pong or chow claimer then discards; a kang claimer first draws a replacement.

The ``joker`` and ``pinoy`` options (``RULES.md``): after the deal the last non-flower
tile at the back of the wall is revealed and set aside; the other three of its kind are
jokers. Jokers are never claimed nor used to claim. A seat holding all three jokers
before the dealer's first discard wins at once (Bisaklat): checked for every seat when
the dealer's first draw is due, and for the dealer after each draw of that first turn.
A seat that passes a winning tile (or claims something else) cannot win on another's
tile until its next draw. An added kang may be robbed: a window where only Mahjong can
be claimed.

The clock (``turn_seconds``, on by default; the call window has ``call_seconds``): when
a timer runs out the worker sends ``TimeOut`` and the engine plays conservatively for
the seat. A turn: draw if not drawn yet; declare the win if the hand is complete
(self-draw or Bisaklat); else discard the drawn tile (after a claim: the rightmost tile
as shown). A call window: claim Mahjong if it is offered (robbing a kang included),
else pass. A time-out never declares a kang nor claims a chow, pong or kang. After
``away_after_timeouts`` turn time-outs in a row the seat is marked away and its turn
timer runs 0 s; a window is answered for it at once (and opened in sight only if a seat
not away may claim). Who may claim is private: a window always runs ``call_seconds``,
and its answers and time-out neither count nor clear (``tilegame.flow``). Any turn
move of its own, or ``Back`` (offered first to an away seat at any moment),
clears that.
"""

from __future__ import annotations

import msgspec

from kalaro.games.base import IllegalAction
from kalaro.games.mahjong.actions import (
    AnyAction,
    Back,
    Claim,
    DeclareKang,
    DeclareWin,
    Discard,
    Draw,
    Pass,
    TimeOut,
)
from kalaro.games.mahjong.draws import take_tile
from kalaro.games.mahjong.events import AnyEvent, KangDeclared, TileDiscarded
from kalaro.games.mahjong.hands import jokers_first
from kalaro.games.mahjong.state import SEATS, Meld, State
from kalaro.games.mahjong.table import TABLE
from kalaro.games.mahjong.wins import (
    TRIPLE,
    claim_offers,
    first_turn,
    jokers_held,
    pattern_on_claim,
    rob_offers,
    self_draw_pattern,
    win,
)
from kalaro.games.tilegame import calls
from kalaro.games.tilegame import flow as tilegame
from kalaro.games.tilegame.table import replaced, with_tiles

# -- what a seat may do -------------------------------------------------------------


def legal_actions(state: State, seat: int) -> list[AnyAction]:
    """Everything ``seat`` may do now, its private claims (Mahjong, kang, pong, chow) too."""
    return tilegame.legal_actions(
        state, seat, turn_moves=_turn_moves, back=Back(), pass_=Pass(), draw=Draw()
    )


def _turn_moves(state: State, seat: int) -> list[AnyAction]:
    """The turn's moves once its tile is held (drawn or claimed): win, kang, discard."""
    player = state.players[seat]
    actions: list[AnyAction] = []
    if state.drawn is not None and self_draw_pattern(state, seat):
        actions.append(DeclareWin())
    actions.extend(DeclareKang(t) for t in tilegame.kong_tiles(state, seat))
    actions.extend(Discard(t) for t in dict.fromkeys(player.hand))
    return actions


# -- moves --------------------------------------------------------------------------


def apply(state: State, seat: int, action: AnyAction) -> tuple[State, list[AnyEvent]]:
    """Play ``action`` for ``seat``: the new state and its events, or ``IllegalAction``."""
    return tilegame.play(TABLE, state, seat, action, _move)


def _move(state: State, seat: int, action: AnyAction, events: list[AnyEvent]) -> State:
    match action:
        case Draw():
            new = _draw(state, seat, events)
        case Discard(tile=tile):
            new = _discard(state, seat, tile, events)
        case DeclareKang(tile=tile):
            new = _declare_kang(state, seat, tile, events)
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
    if state.joker is not None and first_turn(state):
        # Bisaklat before the first draw: every seat, the dealer first.
        for holder in ((state.dealer + i) % SEATS for i in range(SEATS)):
            if jokers_held(state, holder) >= TRIPLE:
                return win(state, holder, tile=None, discarder=None, pattern=None, events=events)
    return take_tile(state, seat, replacement=False, events=events)


def _discard(state: State, seat: int, tile: str, events: list[AnyEvent]) -> State:
    tilegame.check_discard(state, seat, tile)
    state = tilegame.to_discards(TABLE, state, seat, tile, discarded=True)
    events.append(TileDiscarded(seat=seat, tile=tile))
    offers = claim_offers(state, seat, tile)
    return calls.offer(TABLE, state, seat, tile, offers, events, answer=_answer)


def _declare_kang(state: State, seat: int, tile: str, events: list[AnyEvent]) -> State:
    tilegame.check_discard(state, seat, tile)
    tilegame.check_kong(TABLE, state, "after claiming a discard you must discard")
    player = state.players[seat]
    if player.hand.count(tile) == 4:
        meld = Meld(kind="kang", tiles=(tile,) * 4, concealed=True)
        state = tilegame.concealed_kong(state, seat, tile, meld)
        secret = state.options.secret_kangs
        events.append(KangDeclared(seat=seat, meld=meld, added=False, secret=secret))
        return take_tile(state, seat, replacement=True, events=events)
    tilegame.pong_of(TABLE, player, tile)
    if state.options.robbing_the_kang:
        offers = rob_offers(state, seat, tile)
        if any(offers):
            return calls.open_window(
                TABLE, state, seat, tile, offers, robbing=True, events=events, answer=_answer
            )
    return _add_kang(state, seat, tile, events)


def _add_kang(state: State, seat: int, tile: str, events: list[AnyEvent]) -> State:
    """``seat`` puts ``tile`` on its pong of it (nobody robbed it) and draws a replacement."""
    pong = state.players[seat].melds[tilegame.pong_of(TABLE, state.players[seat], tile)]
    meld = msgspec.structs.replace(pong, kind="kang", tiles=(tile,) * 4)
    state = tilegame.extended_kong(state, seat, tile, meld)
    events.append(KangDeclared(seat=seat, meld=meld, added=True))
    return take_tile(state, seat, replacement=True, events=events)


def _declare_win(state: State, seat: int, events: list[AnyEvent]) -> State:
    tilegame.check_drawn(state, seat)
    if state.drawn is None:
        raise IllegalAction("cannot_win", "a claimed discard wins only by claiming Mahjong on it")
    pattern = self_draw_pattern(state, seat)
    if pattern is None:
        raise IllegalAction("hand_not_complete", "your hand is not complete")
    return win(state, seat, tile=state.drawn, pattern=pattern, events=events)


# -- the call window ----------------------------------------------------------------


def _answer(state: State, seat: int, claim: Claim | None, events: list[AnyEvent]) -> State:
    """Record ``seat``'s claim (or pass, for None) and resolve the window if it can."""
    state = calls.record_answer(TABLE, state, seat, claim, events, refuse=_refuse_claim)
    assert state.call is not None
    answer = state.call.claims[seat]
    if (
        state.options.passed_win_blocks
        and TABLE.win in state.call.offers[seat]
        and (answer is None or answer.kind != "mahjong")
    ):  # passed a winning tile
        state = msgspec.structs.replace(state, passed_win=replaced(state.passed_win, seat, True))
    return calls.resolve(
        TABLE, state, events, win=_win_on_tile, meld=_take_discard, kong_stands=_add_kang
    )


def _refuse_claim(state: State, seat: int, claim: Claim) -> None:
    """A seat with nothing to claim is told so about the tile itself."""
    assert state.call is not None
    if not state.call.offers[seat]:
        raise IllegalAction("cannot_claim", f"you cannot claim {state.call.tile}")


def _time_out(state: State, seat: int, events: list[AnyEvent]) -> State:
    """A time-out (:func:`~kalaro.games.tilegame.calls.time_out`): Mahjong if offered."""
    return calls.time_out(
        TABLE, state, seat, events, answer=_answer, draw=_draw, turn=_timed_out_turn
    )


def _timed_out_turn(state: State, seat: int, events: list[AnyEvent]) -> State:
    """Win with a complete hand (self-draw or Bisaklat), else :func:`_auto_discard`."""
    if state.drawn is not None and self_draw_pattern(state, seat):
        return _declare_win(state, seat, events)
    return _discard(state, seat, _auto_discard(state), events)


def _auto_discard(state: State) -> str:
    """The tile a timed-out turn discards: the drawn tile, else the rightmost as shown."""
    if state.drawn is not None:
        return state.drawn
    return jokers_first(state.players[state.turn].hand, state.joker)[-1]


def _win_on_tile(state: State, winners: tuple[int, ...], events: list[AnyEvent]) -> State:
    """The nearest winner after the discarder takes the tile (robbing the kang, perhaps)."""
    call = state.call
    assert call is not None
    seat = winners[0]
    state = msgspec.structs.replace(state, players=calls.give_tile(state, seat))
    pattern = pattern_on_claim(state, seat)
    return win(
        state,
        seat,
        tile=call.tile,
        pattern=pattern,
        discarder=call.discarder,
        robbed=call.robbing,
        events=events,
    )


def _take_discard(state: State, seat: int, claim: Claim, events: list[AnyEvent]) -> State:
    """``seat`` takes the discard for a chow, pong or kang; a kang draws a replacement."""
    call = state.call
    assert call is not None
    assert claim.kind != "mahjong", "a win goes to _win_on_tile"
    meld = Meld(
        kind=claim.kind,
        tiles=with_tiles(claim.tiles, call.tile),
        claimed=call.tile,
        from_seat=call.discarder,
    )
    state = calls.claim_meld(TABLE, state, seat, claim.tiles, meld, events)
    if claim.kind == "kang":
        return take_tile(state, seat, replacement=True, events=events)
    return state
