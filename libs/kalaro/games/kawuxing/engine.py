"""The table flow of Ka Wu Xing: deal, turns, claims, kongs, Show Hand, wins, wall out.

Pure functions over :class:`State`: ``apply`` returns a new state and the events of the
move, or raises ``IllegalAction`` and leaves nothing changed. Chance is the seed given to
``new_hand``; call windows and (with ``turn_seconds``) turns end on ``TimeOut`` actions
sent by the worker.

The turn: the player to move taps Draw (front of the wall). Holding four alike, or the
fourth tile of an own pong, they may declare a kong and draw a replacement from the
back. A complete hand after their own draw wins by self-draw; otherwise they discard —
or Show Hand: discard and lay the rest open, which must be waiting. A shown hand is
locked: its draws that do not win are discarded by the engine in the same move.

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
marked away and its timers run 0 s; any move of its own, or ``Back`` (offered first to
an away seat at any moment), clears that.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterable
from typing import Never, NoReturn, TypeVar

import msgspec

from kalaro.games import clock
from kalaro.games.base import IllegalAction, pick, shuffled
from kalaro.games.kawuxing.actions import (
    CLAIM_PRIORITY,
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
    CallAnswered,
    CallsPassed,
    CallWindowOpened,
    ClaimsOffered,
    HandShown,
    HandWon,
    KongDeclared,
    KongOffered,
    Returned,
    TileClaimed,
    TileDiscarded,
    TileDrawn,
    TimedOut,
    WallExhausted,
)
from kalaro.games.kawuxing.hands import (
    HAND_SIZE,
    TILES_84,
    is_winning,
    score_win,
    waiting_discards,
    waits,
)
from kalaro.games.kawuxing.options import Options
from kalaro.games.kawuxing.state import (
    SEATS,
    CallWindow,
    Meld,
    Outcome,
    Player,
    State,
    Timer,
)
from kalaro.games.tiles import sort_key

#: The deal: three rounds of four tiles from the dealer, then one more each (13).
_DEAL_ROUNDS = 3
_DEAL_BATCH = 4


# -- helpers on tiles ---------------------------------------------------------------


def _with(hand: tuple[str, ...], *tiles: str) -> tuple[str, ...]:
    """The hand with ``tiles`` added, still in sort order."""
    out = list(hand)
    for tile in tiles:
        insort(out, tile, key=sort_key)
    return tuple(out)


def _without(hand: tuple[str, ...], *tiles: str) -> tuple[str, ...]:
    """The hand with one copy of each of ``tiles`` taken out (the caller checked they are there)."""
    out = list(hand)
    for tile in tiles:
        out.remove(tile)
    return tuple(out)


_T = TypeVar("_T")


def _replaced(items: tuple[_T, ...], index: int, item: _T) -> tuple[_T, ...]:
    """``items`` with the one at ``index`` swapped for ``item``."""
    return (*items[:index], item, *items[index + 1 :])


def _set_player(state: State, seat: int, player: Player) -> tuple[Player, ...]:
    return _replaced(state.players, seat, player)


# -- the deal -----------------------------------------------------------------------


def new_hand(options: Options, seed: bytes, dealer: int | None = None) -> State:
    """Shuffle the 84 tiles with ``seed`` and deal 13 to each seat; the dealer draws first.

    The first host is drawn from the seed when ``dealer`` is None; afterwards the worker
    passes ``result(previous).next_dealer``.
    """
    if dealer is None:
        dealer = pick(seed, "dealer", SEATS)
    if not 0 <= dealer < SEATS:
        raise ValueError(f"dealer must be a seat 0-{SEATS - 1}, not {dealer}")
    tiles = shuffled(TILES_84, seed)
    order = [(dealer + i) % SEATS for i in range(SEATS)]
    hands: list[list[str]] = [[] for _ in range(SEATS)]
    front = 0
    for batch in [_DEAL_BATCH] * _DEAL_ROUNDS + [1]:
        for seat in order:
            hands[seat].extend(tiles[front : front + batch])
            front += batch
    players = tuple(Player(hand=tuple(sorted(hands[s], key=sort_key))) for s in range(SEATS))
    return State(
        options=options,
        dealer=dealer,
        players=players,
        wall=tuple(tiles[front:]),
        turn=dealer,
        phase="draw",
    )


# -- what a seat may do -------------------------------------------------------------


def can_win_on(
    state: State, seat: int, tile: str, *, robbing: bool, after_kong: bool
) -> tuple[bool, bool]:
    """Whether ``tile`` from another player completes ``seat``'s hand, and whether it
    may win with it: a chicken hand wins only by self-draw, unless it is shown."""
    player = state.players[seat]
    hand = _with(player.hand, tile)
    if not is_winning(hand, player.melds):
        return False, False
    if player.shown:
        return True, True
    score = score_win(
        hand,
        player.melds,
        tile,
        source="robbed_kong" if robbing else "discard",
        after_kong=after_kong,
        cap=state.options.cap,
    )
    return True, score is not None and not score.chicken


def _claim_offers(
    state: State, discarder: int, tile: str, *, robbing: bool, after_kong: bool
) -> tuple[tuple[Claim, ...], ...]:
    """What each seat may claim on ``discarder``'s ``tile`` (nothing for the discarder)."""
    offers: list[tuple[Claim, ...]] = []
    for seat, player in enumerate(state.players):
        mine: list[Claim] = []
        if seat != discarder:
            _, may_win = can_win_on(state, seat, tile, robbing=robbing, after_kong=after_kong)
            if may_win:
                mine.append(Claim("win"))
            # A shown hand is locked; a robbed kong's tile can only be won on.
            if not player.shown and not robbing:
                held = player.hand.count(tile)
                if held >= 3 and state.wall:  # a kong needs a replacement tile
                    mine.append(Claim("kong", (tile, tile, tile)))
                if held >= 2:
                    mine.append(Claim("pong", (tile, tile)))
        offers.append(tuple(mine))
    return tuple(offers)


def _kong_tiles(state: State, seat: int) -> list[str]:
    """Tiles ``seat`` may declare a kong of now: four in hand, or the fourth of a pong."""
    player = state.players[seat]
    if state.drawn is None or not state.wall or player.shown:
        return []
    concealed = [t for t in dict.fromkeys(player.hand) if player.hand.count(t) == 4]
    extended = [m.tiles[0] for m in player.melds if m.kind == "pong" and m.tiles[0] in player.hand]
    return sorted(concealed + extended, key=sort_key)


def _show_tiles(player: Player) -> list[str]:
    """The discards after which the rest of the hand is waiting (Show Hand options)."""
    if player.shown:
        return []
    return list(waiting_discards(player.hand, player.melds))


def _pending(call: CallWindow) -> list[int]:
    """Seats the window still waits on."""
    return [s for s in range(SEATS) if call.offers[s] and not call.answered[s]]


def legal_actions(state: State, seat: int) -> list[AnyAction]:
    """Everything ``seat`` may do now (its private claim options included).

    A seat marked away is offered ``Back`` first, whether or not it is to move.
    """
    if state.phase == "over":
        return []
    if clock.is_away(state.away, seat):
        return [Back(), *_moves(state, seat)]
    return _moves(state, seat)


def _moves(state: State, seat: int) -> list[AnyAction]:
    """What ``seat`` may play now (the hand is not over)."""
    if state.phase == "calls":
        assert state.call is not None
        if seat in _pending(state.call):
            return [*state.call.offers[seat], Pass()]
        return []
    if seat != state.turn:
        return []
    if state.phase == "draw":
        return [Draw()]
    player = state.players[seat]
    actions: list[AnyAction] = []
    if state.drawn is not None and is_winning(player.hand, player.melds):
        actions.append(DeclareWin())
    if player.shown:
        # Only a winning draw waits for its owner; the hand may still let it go.
        assert state.drawn is not None
        return [*actions, Discard(state.drawn)]
    actions.extend(DeclareKong(t) for t in _kong_tiles(state, seat))
    actions.extend(Discard(t) for t in dict.fromkeys(player.hand))
    actions.extend(ShowHand(t) for t in _show_tiles(player))
    return actions


def to_act(state: State) -> list[int]:
    """Seats whose input the hand waits for: the player to move, or the seats that may claim."""
    if state.phase == "over":
        return []
    if state.phase == "calls":
        assert state.call is not None
        return _pending(state.call)
    return [state.turn]


def pending_timer(state: State) -> Timer | None:
    """The deadline the worker must run now, if any: the call window, or the turn.

    The turn timer runs only with ``turn_seconds``; it covers the whole turn. A window
    that waits only on seats marked away runs 0 s.
    """
    if state.phase == "calls":
        assert state.call is not None
        seats = tuple(_pending(state.call))
        gone = bool(seats) and all(clock.is_away(state.away, s) for s in seats)
        return Timer(
            kind="call",
            seats=seats,
            seconds=0 if gone else state.options.call_seconds,
            opened_at=state.call.opened_at,
        )
    seconds = state.options.turn_seconds
    if state.phase == "over" or seconds is None:
        return None
    if clock.is_away(state.away, state.turn):
        seconds = 0
    return Timer(kind="turn", seats=(state.turn,), seconds=seconds, opened_at=state.turn_started)


def away_seats(state: State) -> tuple[int, ...]:
    """The seats marked away now (at the hand's end: to sit out the next deal)."""
    return clock.away_seats(state.away)


def is_over(state: State) -> bool:
    """Whether the hand has ended (won or wall out); ``result`` then has the payments."""
    return state.phase == "over"


# -- moves --------------------------------------------------------------------------


def apply(state: State, seat: int, action: AnyAction) -> tuple[State, list[AnyEvent]]:
    """Play ``action`` for ``seat``: the new state and what happened.

    ``IllegalAction`` (with a stable ``code``) for anything the rules refuse; ``state``
    itself is never changed.
    """
    if not isinstance(seat, int) or not 0 <= seat < SEATS:
        raise IllegalAction("bad_seat", f"seat must be 0-{SEATS - 1}")
    if state.phase == "over":
        raise IllegalAction("hand_over", "the hand is over")
    events: list[AnyEvent] = []
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
            new = _back(state, seat, events)
        case _:
            _unhandled(action)
    if isinstance(action, TimeOut):
        away, timeouts = clock.timed_out(
            state.away, state.timeouts, seat, SEATS, state.options.away_after_timeouts
        )
        events.insert(0, TimedOut(seat=seat, away=away[seat]))
    else:
        away, timeouts = clock.acted(state.away, state.timeouts, seat, SEATS)
    return msgspec.structs.replace(new, step=state.step + 1, away=away, timeouts=timeouts), events


def _back(state: State, seat: int, events: list[AnyEvent]) -> State:
    """An away seat is back; nothing else changes (``apply`` clears the mark)."""
    if not clock.is_away(state.away, seat):
        raise IllegalAction("not_away", "you are not marked away")
    events.append(Returned(seat=seat))
    return state


def _unhandled(action: Never) -> NoReturn:
    # Typed ``Never`` so that an action added to the union but not to ``apply`` is a
    # type error; at run time, something that is not an action at all.
    raise IllegalAction("unknown_action", f"not a Ka Wu Xing action: {action!r}")


def _check_turn(state: State, seat: int) -> None:
    """The player to move, and not while a tile may still be claimed."""
    if state.phase == "calls":
        assert state.call is not None
        raise IllegalAction("not_your_turn", f"waiting for claims on {state.call.tile}")
    if seat != state.turn:
        raise IllegalAction("not_your_turn", f"it is seat {state.turn}'s turn")


def _check_drawn(state: State, seat: int) -> None:
    _check_turn(state, seat)
    if state.phase == "draw":
        raise IllegalAction("must_draw_first", "draw a tile first")


def _draw(state: State, seat: int, events: list[AnyEvent]) -> State:
    _check_turn(state, seat)
    if state.phase != "draw":
        raise IllegalAction("already_drawn", "you have drawn already; discard a tile")
    return _take_tile(state, seat, replacement=False, events=events)


def _take_tile(state: State, seat: int, replacement: bool, events: list[AnyEvent]) -> State:
    """``seat`` draws from the front (or the back, for a kong's replacement).

    Callers make sure the wall is not empty. A shown hand's draw that does not win is
    discarded at once: the hand is locked, so there is nothing to decide.
    """
    wall = state.wall
    tile, wall = (wall[-1], wall[:-1]) if replacement else (wall[0], wall[1:])
    player = state.players[seat]
    events.append(TileDrawn(seat=seat, tile=tile, replacement=replacement, shown=player.shown))
    player = msgspec.structs.replace(player, hand=_with(player.hand, tile))
    state = msgspec.structs.replace(
        state,
        players=_set_player(state, seat, player),
        wall=wall,
        turn=seat,
        phase="discard",
        drawn=tile,
        replacement=replacement,
        call=None,
    )
    if player.shown and not is_winning(player.hand, player.melds):
        return _put_down(state, seat, tile, events, auto=True)
    return state


def _wall_out(state: State, events: list[AnyEvent]) -> State:
    events.append(WallExhausted())
    return msgspec.structs.replace(
        state,
        phase="over",
        drawn=None,
        replacement=False,
        call=None,
        outcome=Outcome(ending="wall_out"),
    )


def _discard(state: State, seat: int, tile: str, show: bool, events: list[AnyEvent]) -> State:
    _check_drawn(state, seat)
    player = state.players[seat]
    if tile not in player.hand:
        raise IllegalAction("tile_not_in_hand", f"{tile} is not in your hand")
    if player.shown and tile != state.drawn:
        raise IllegalAction("hand_shown", "a shown hand cannot change: discard the drawn tile")
    if show:
        if player.shown:
            raise IllegalAction("already_shown", "your hand is shown already")
        rest = _without(player.hand, tile)
        waiting = waits(rest, player.melds)
        if not waiting:
            raise IllegalAction("not_waiting", f"after discarding {tile} your hand is not waiting")
        state = msgspec.structs.replace(
            state,
            players=_set_player(state, seat, msgspec.structs.replace(player, shown=True)),
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
    player = state.players[seat]
    player = msgspec.structs.replace(
        player, hand=_without(player.hand, tile), discards=(*player.discards, tile)
    )
    after_kong = state.replacement
    state = msgspec.structs.replace(
        state, players=_set_player(state, seat, player), drawn=None, replacement=False
    )
    events.append(TileDiscarded(seat=seat, tile=tile, auto=auto))
    if shown is not None:
        events.append(HandShown(seat=seat, hand=shown[0], waits=shown[1]))
    offers = _claim_offers(state, seat, tile, robbing=False, after_kong=after_kong)
    if not any(offers):
        return _next_turn(state, seat, events)
    return _open_window(
        state, seat, tile, offers, robbing=False, after_kong=after_kong, events=events
    )


def _open_window(
    state: State,
    seat: int,
    tile: str,
    offers: tuple[tuple[Claim, ...], ...],
    *,
    robbing: bool,
    after_kong: bool,
    events: list[AnyEvent],
) -> State:
    seconds = state.options.call_seconds
    events.append(CallWindowOpened(discarder=seat, tile=tile, seconds=seconds, robbing=robbing))
    events.extend(
        ClaimsOffered(seat=s, tile=tile, claims=offers[s], seconds=seconds)
        for s in range(SEATS)
        if offers[s]
    )
    call = CallWindow(
        tile=tile,
        discarder=seat,
        robbing=robbing,
        after_kong=after_kong,
        offers=offers,
        answered=(False,) * SEATS,
        claims=(None,) * SEATS,
        opened_at=state.step + 1,
    )
    return msgspec.structs.replace(state, phase="calls", call=call)


def _next_turn(state: State, discarder: int, events: list[AnyEvent]) -> State:
    """The discard stands: the next seat draws, or the hand is a draw if nothing is left."""
    state = msgspec.structs.replace(state, call=None, drawn=None, replacement=False)
    if not state.wall:
        return _wall_out(state, events)
    return msgspec.structs.replace(
        state, turn=(discarder + 1) % SEATS, phase="draw", turn_started=state.step + 1
    )


def _declare_kong(state: State, seat: int, tile: str, events: list[AnyEvent]) -> State:
    _check_drawn(state, seat)
    player = state.players[seat]
    if tile not in player.hand:
        raise IllegalAction("tile_not_in_hand", f"{tile} is not in your hand")
    if player.shown:
        raise IllegalAction("hand_shown", "a shown hand cannot change")
    if state.drawn is None:
        raise IllegalAction("cannot_kong", "after claiming a pong you must discard")
    if not state.wall:
        raise IllegalAction("cannot_kong", "no tile is left for the replacement")
    if player.hand.count(tile) == 4:
        meld = Meld(kind="kong", tiles=(tile,) * 4, kong="concealed", on_kong=state.replacement)
        player = msgspec.structs.replace(
            player, hand=_without(player.hand, *(tile,) * 4), melds=(*player.melds, meld)
        )
        state = msgspec.structs.replace(state, players=_set_player(state, seat, player))
        events.append(KongDeclared(seat=seat, kong="concealed", tile=tile, on_kong=meld.on_kong))
        return _take_tile(state, seat, replacement=True, events=events)
    if not any(m.kind == "pong" and m.tiles[0] == tile for m in player.melds):
        raise IllegalAction("cannot_kong", f"you hold neither four {tile} nor a pong of it")
    # The tile added to a pong may be won on by the others (Rob a Kong) before it counts.
    offers = _claim_offers(state, seat, tile, robbing=True, after_kong=False)
    if any(offers):
        events.append(KongOffered(seat=seat, tile=tile))
        return _open_window(
            state, seat, tile, offers, robbing=True, after_kong=False, events=events
        )
    return _extend_pong(state, seat, tile, events)


def _extend_pong(state: State, seat: int, tile: str, events: list[AnyEvent]) -> State:
    """Nobody robbed it: the pong becomes an extended kong; a replacement follows."""
    player = state.players[seat]
    index = next(i for i, m in enumerate(player.melds) if m.kind == "pong" and m.tiles[0] == tile)
    meld = msgspec.structs.replace(
        player.melds[index],
        kind="kong",
        tiles=(tile,) * 4,
        kong="extended",
        on_kong=state.replacement,
    )
    player = msgspec.structs.replace(
        player, hand=_without(player.hand, tile), melds=_replaced(player.melds, index, meld)
    )
    state = msgspec.structs.replace(
        state, players=_set_player(state, seat, player), phase="discard", call=None
    )
    events.append(KongDeclared(seat=seat, kong="extended", tile=tile, on_kong=meld.on_kong))
    return _take_tile(state, seat, replacement=True, events=events)


def _declare_win(state: State, seat: int, events: list[AnyEvent]) -> State:
    _check_drawn(state, seat)
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
        after_kong=state.replacement,
        last_tile=not state.wall,
    )
    return msgspec.structs.replace(state, phase="over", outcome=outcome)


# -- the call window ----------------------------------------------------------------


def _answer(state: State, seat: int, claim: Claim | None, events: list[AnyEvent]) -> State:
    """Record ``seat``'s claim (or pass, for None) and resolve the window if it can."""
    call = state.call
    if call is None:
        if claim is not None:
            raise IllegalAction("cannot_claim", "there is no discard to claim")
        raise IllegalAction("not_your_turn", "there is no discard to answer")
    if call.answered[seat] and call.offers[seat]:
        raise IllegalAction("already_answered", "you have answered this discard already")
    if claim is not None:
        claim = Claim(claim.kind, tuple(sorted(claim.tiles, key=_safe_key)))
        if claim not in call.offers[seat]:
            _refuse_claim(state, seat, claim)
    elif not call.offers[seat]:
        raise IllegalAction("not_your_turn", "you have nothing to claim")
    call = msgspec.structs.replace(
        call,
        answered=_replaced(call.answered, seat, True),
        claims=_replaced(call.claims, seat, claim),
    )
    events.append(CallAnswered(seat=seat, claim=claim))
    return _resolve(msgspec.structs.replace(state, call=call), events)


def _refuse_claim(state: State, seat: int, claim: Claim) -> NoReturn:
    """Say why a claim is not offered; a chicken hand's win gets its own code."""
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
    raise IllegalAction(
        "cannot_claim", f"you cannot claim {claim.kind} on {call.tile} with those tiles"
    )


def _safe_key(tile: str) -> int:
    # Claims come from clients: an unknown tile sorts last and then fails the offer check.
    try:
        return sort_key(tile)
    except KeyError:
        return 1 << 20


def _time_out(state: State, seat: int, events: list[AnyEvent]) -> State:
    """Play for a seat whose timer ran out, conservatively.

    A call window: claim the win if offered, else pass. A turn: draw if not drawn, win
    if the hand is complete, else discard the drawn tile (after a pong: the rightmost).
    """
    if state.phase == "calls":
        assert state.call is not None
        if seat not in _pending(state.call):
            raise IllegalAction("not_your_turn", "no answer is due from you")
        win = Claim("win")
        return _answer(state, seat, win if win in state.call.offers[seat] else None, events)
    if state.options.turn_seconds is None:
        raise IllegalAction("no_timer", "no timer is running for this seat")
    if seat != state.turn:
        raise IllegalAction("not_your_turn", f"it is seat {state.turn}'s turn")
    if state.phase == "draw":
        state = _draw(state, seat, events)
        if state.phase != "discard":  # a shown hand's draw went out at once (or wall out)
            return state
    player = state.players[seat]
    if state.drawn is not None and is_winning(player.hand, player.melds):
        return _declare_win(state, seat, events)
    tile = state.drawn if state.drawn is not None else player.hand[-1]
    return _discard(state, seat, tile, False, events)


def _nearness(call: CallWindow, seat: int) -> int:
    return (seat - call.discarder) % SEATS


def _resolve(state: State, events: list[AnyEvent]) -> State:
    """Close the window once no seat still to answer could change what happens.

    Any seat that may still win is waited for (it could win alone, or as a second
    winner); a kong or pong goes ahead once nobody still deciding could outrank it.
    """
    call = state.call
    assert call is not None
    made = [(s, c) for s, c in enumerate(call.claims) if c is not None]
    winners = sorted((s for s, c in made if c.kind == "win"), key=lambda s: _nearness(call, s))
    best = max(made, key=lambda sc: CLAIM_PRIORITY[sc[1].kind], default=None)
    for seat in _pending(call):
        could = max(CLAIM_PRIORITY[c.kind] for c in call.offers[seat])
        if could == CLAIM_PRIORITY["win"] or best is None or could > CLAIM_PRIORITY[best[1].kind]:
            return state
    if winners:
        return _win_on_tile(state, tuple(winners), events)
    if best is not None:
        return _take_discard(state, *best, events)
    events.append(CallsPassed(discarder=call.discarder, tile=call.tile))
    if call.robbing:
        return _extend_pong(state, call.discarder, call.tile, events)
    return _next_turn(state, call.discarder, events)


def _win_on_tile(state: State, winners: tuple[int, ...], events: list[AnyEvent]) -> State:
    """The winners take the tile: it physically goes to the first, all are scored with it."""
    call = state.call
    assert call is not None
    tile, giver_seat = call.tile, call.discarder
    giver = state.players[giver_seat]
    if call.robbing:
        giver = msgspec.structs.replace(giver, hand=_without(giver.hand, tile))
    else:
        giver = msgspec.structs.replace(giver, discards=giver.discards[:-1])
    players = _replaced(state.players, giver_seat, giver)
    first = players[winners[0]]
    players = _replaced(
        players, winners[0], msgspec.structs.replace(first, hand=_with(first.hand, tile))
    )
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
    giver = state.players[discarder]
    players = _replaced(
        state.players, discarder, msgspec.structs.replace(giver, discards=giver.discards[:-1])
    )
    meld = Meld(
        kind="kong" if claim.kind == "kong" else "pong",
        tiles=_with(claim.tiles, tile),
        claimed=tile,
        from_seat=discarder,
        kong="exposed" if claim.kind == "kong" else None,
    )
    taker = players[seat]
    taker = msgspec.structs.replace(
        taker, hand=_without(taker.hand, *claim.tiles), melds=(*taker.melds, meld)
    )
    events.append(TileClaimed(seat=seat, discarder=discarder, meld=meld))
    state = msgspec.structs.replace(
        state,
        players=_replaced(players, seat, taker),
        turn=seat,
        phase="discard",
        drawn=None,
        replacement=False,
        call=None,
        turn_started=state.step + 1,
    )
    if claim.kind == "kong":
        return _take_tile(state, seat, replacement=True, events=events)
    return state


def tiles_in_play(state: State) -> Iterable[str]:
    """Every tile the state holds, wherever it is (for "all 84 accounted for" checks)."""
    yield from state.wall
    for player in state.players:
        yield from player.hand
        yield from player.discards
        for meld in player.melds:
            yield from meld.tiles


def hand_size_ok(state: State) -> bool:
    """Each seat holds 13 tiles, counting 3 per meld, the turn's player one more after drawing."""
    for seat, player in enumerate(state.players):
        held = len(player.hand) + 3 * len(player.melds)
        # The player to move holds the drawn tile, also while others may rob its kong.
        robbing = state.call is not None and state.call.robbing
        extra = seat == state.turn and (state.phase == "discard" or robbing)
        # The first winner on a discard holds the winning tile too.
        won = state.outcome is not None and seat in state.outcome.winners[:1]
        if held != HAND_SIZE + (extra or won):
            return False
    return True
