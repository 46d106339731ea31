"""The table flow of Filipino 16-tile Mahjong: deal, turns, claims, kangs, wins, tabla.

Pure functions over :class:`State`: ``apply`` returns a new state and the events of the
move, or raises ``IllegalAction`` and leaves nothing changed. Chance is the seed given to
``new_hand``; the call window closes on ``TimeOut`` actions sent by the worker.

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
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterable
from typing import Never, NoReturn, TypeVar

import msgspec

from kalaro.games.base import IllegalAction, pick, shuffled
from kalaro.games.mahjong.actions import (
    CLAIM_PRIORITY,
    AnyAction,
    Claim,
    DeclareKang,
    DeclareWin,
    Discard,
    Draw,
    Pass,
    TimeOut,
)
from kalaro.games.mahjong.events import (
    AnyEvent,
    CallAnswered,
    CallsPassed,
    CallWindowOpened,
    ClaimsOffered,
    FlowerReplaced,
    HandWon,
    KangDeclared,
    TileClaimed,
    TileDiscarded,
    TileDrawn,
    WallExhausted,
)
from kalaro.games.mahjong.options import Options, check_supported
from kalaro.games.mahjong.state import (
    SEATS,
    CallWindow,
    Meld,
    Outcome,
    Player,
    State,
    Timer,
)
from kalaro.games.tiles import MAHJONG_144, chow_partners, is_complete, is_flower, sort_key

#: Tiles in a hand before the turn's draw; a winning hand is 5 sets + 1 pair.
HAND_SIZE = 16
WINNING_SETS = 5
#: The deal goes round four times, four tiles each time, starting with the dealer.
_DEAL_ROUNDS = 4
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


def _set_player(players: tuple[Player, ...], seat: int, player: Player) -> tuple[Player, ...]:
    return _replaced(players, seat, player)


def _is_winning(hand: tuple[str, ...], melds: tuple[Meld, ...], options: Options) -> bool:
    """Whether concealed ``hand`` plus exposed ``melds`` is a winning hand.

    The one place winning patterns are decided: ``kalaro`` knows only 5 sets + 1 pair;
    jokers (as ``wild``), seven pairs and eskalera belong here when their options land.
    """
    return is_complete(hand, sets=WINNING_SETS - len(melds))


class _Drawn(msgspec.Struct, frozen=True):
    """A draw with its flower chain: the tile kept (None if the wall ran out)."""

    tile: str | None
    wall: tuple[str, ...]
    flowers: tuple[str, ...]


def _draw_from_wall(
    wall: tuple[str, ...], seat: int, replacement: bool, events: list[AnyEvent]
) -> _Drawn:
    """Draw from the front (or the back, for a replacement), replacing flowers from the back."""
    flowers: list[str] = []
    while wall:
        if replacement:
            tile, wall = wall[-1], wall[:-1]
        else:
            tile, wall = wall[0], wall[1:]
        events.append(TileDrawn(seat=seat, tile=tile, replacement=replacement))
        if not is_flower(tile):
            return _Drawn(tile=tile, wall=wall, flowers=tuple(flowers))
        flowers.append(tile)
        events.append(FlowerReplaced(seat=seat, flower=tile))
        replacement = True
    return _Drawn(tile=None, wall=wall, flowers=tuple(flowers))


# -- the deal -----------------------------------------------------------------------


def new_hand(options: Options, seed: bytes, dealer: int | None = None) -> State:
    """Shuffle the 144 tiles with ``seed``, deal 16 to each seat, replace flowers.

    The first dealer is drawn from the seed when ``dealer`` is None; afterwards the
    worker passes ``result(previous).next_dealer``. The dealer draws first.
    ``ValueError`` for options this engine cannot play yet.
    """
    check_supported(options)
    if dealer is None:
        dealer = pick(seed, "dealer", SEATS)
    if not 0 <= dealer < SEATS:
        raise ValueError(f"dealer must be a seat 0-{SEATS - 1}, not {dealer}")
    tiles = shuffled(MAHJONG_144, seed)
    order = [(dealer + i) % SEATS for i in range(SEATS)]
    hands: list[list[str]] = [[] for _ in range(SEATS)]
    front = 0
    for _ in range(_DEAL_ROUNDS):
        for seat in order:
            hands[seat].extend(tiles[front : front + _DEAL_BATCH])
            front += _DEAL_BATCH
    wall = tuple(tiles[front:])
    flowers: list[list[str]] = [[] for _ in range(SEATS)]
    # Flowers go aside seat by seat from the dealer; a replacement that is itself a
    # flower is replaced in turn. Only 8 flowers exist, so the wall cannot run out here.
    for seat in order:
        while found := [t for t in hands[seat] if is_flower(t)]:
            for flower in found:
                hands[seat].remove(flower)
                flowers[seat].append(flower)
                hands[seat].append(wall[-1])
                wall = wall[:-1]
    players = tuple(
        Player(hand=tuple(sorted(hands[s], key=sort_key)), flowers=tuple(flowers[s]))
        for s in range(SEATS)
    )
    return State(
        options=options, dealer=dealer, players=players, wall=wall, turn=dealer, phase="draw"
    )


# -- what a seat may do -------------------------------------------------------------


def _claim_offers(state: State, discarder: int, tile: str) -> tuple[tuple[Claim, ...], ...]:
    """What each seat may claim on ``discarder``'s ``tile`` (nothing for the discarder)."""
    offers: list[tuple[Claim, ...]] = []
    for seat, player in enumerate(state.players):
        if seat == discarder:
            offers.append(())
            continue
        mine: list[Claim] = []
        hand = player.hand
        if _is_winning(_with(hand, tile), player.melds, state.options):
            mine.append(Claim("mahjong"))
        held = hand.count(tile)
        if held >= 3 and state.wall:  # a kang needs a replacement tile
            mine.append(Claim("kang", (tile, tile, tile)))
        if held >= 2:
            mine.append(Claim("pong", (tile, tile)))
        if seat == (discarder + 1) % SEATS:  # chow: only the next player
            mine.extend(
                Claim("chow", (low, high))
                for low, high in chow_partners(tile)
                if low in hand and high in hand
            )
        offers.append(tuple(mine))
    return tuple(offers)


def _kang_tiles(state: State, seat: int) -> list[str]:
    """Tiles ``seat`` may declare a kang of now: four in hand, or the fourth of a pong."""
    player = state.players[seat]
    if state.drawn is None or not state.wall:
        return []
    concealed = [t for t in dict.fromkeys(player.hand) if player.hand.count(t) == 4]
    added = [m.tiles[0] for m in player.melds if m.kind == "pong" and m.tiles[0] in player.hand]
    return sorted(concealed + added, key=sort_key)


def _pending(call: CallWindow) -> list[int]:
    """Seats the window still waits on."""
    return [s for s in range(SEATS) if call.offers[s] and not call.answered[s]]


def legal_actions(state: State, seat: int) -> list[AnyAction]:
    """Everything ``seat`` may do now (its private claim options included)."""
    if state.phase == "over":
        return []
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
    if state.drawn is not None and _is_winning(player.hand, player.melds, state.options):
        actions.append(DeclareWin())
    actions.extend(DeclareKang(t) for t in _kang_tiles(state, seat))
    actions.extend(Discard(t) for t in dict.fromkeys(player.hand))
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
    """The deadline the worker must run now, if any (``kalaro``: only the call window)."""
    if state.phase != "calls":
        return None
    assert state.call is not None
    return Timer(
        kind="call",
        seats=tuple(_pending(state.call)),
        seconds=state.options.call_seconds,
        opened_at=state.call.opened_at,
    )


def is_over(state: State) -> bool:
    """Whether the hand has ended (won or tabla); ``result`` then has the payments."""
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
        case _:
            _unhandled(action)
    return msgspec.structs.replace(new, step=state.step + 1), events


def _unhandled(action: Never) -> NoReturn:
    # Typed ``Never`` so that an action added to the union but not to ``apply`` is a
    # type error; at run time, something that is not an action at all.
    raise IllegalAction("unknown_action", f"not a Mahjong action: {action!r}")


def _check_turn(state: State, seat: int) -> None:
    """The player to move, and not while a discard may still be claimed."""
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
    """``seat`` draws (front or back) with its flower chain; tabla if the wall runs out."""
    draw = _draw_from_wall(state.wall, seat, replacement, events)
    player = state.players[seat]
    player = msgspec.structs.replace(
        player,
        hand=player.hand if draw.tile is None else _with(player.hand, draw.tile),
        flowers=player.flowers + draw.flowers,
    )
    state = msgspec.structs.replace(
        state,
        players=_set_player(state.players, seat, player),
        wall=draw.wall,
        turn=seat,
        phase="discard",
        drawn=draw.tile,
        call=None,
    )
    if draw.tile is None:
        return _wall_out(state, events)
    return state


def _wall_out(state: State, events: list[AnyEvent]) -> State:
    events.append(WallExhausted())
    return msgspec.structs.replace(
        state, phase="over", drawn=None, call=None, outcome=Outcome(ending="wall_out")
    )


def _discard(state: State, seat: int, tile: str, events: list[AnyEvent]) -> State:
    _check_drawn(state, seat)
    player = state.players[seat]
    if tile not in player.hand:
        raise IllegalAction("tile_not_in_hand", f"{tile} is not in your hand")
    player = msgspec.structs.replace(
        player, hand=_without(player.hand, tile), discards=(*player.discards, tile)
    )
    state = msgspec.structs.replace(
        state, players=_set_player(state.players, seat, player), drawn=None
    )
    events.append(TileDiscarded(seat=seat, tile=tile))
    offers = _claim_offers(state, seat, tile)
    if not any(offers):
        return _next_turn(state, seat, events)
    seconds = state.options.call_seconds
    events.append(CallWindowOpened(discarder=seat, tile=tile, seconds=seconds))
    events.extend(
        ClaimsOffered(seat=s, tile=tile, claims=offers[s], seconds=seconds)
        for s in range(SEATS)
        if offers[s]
    )
    call = CallWindow(
        tile=tile,
        discarder=seat,
        offers=offers,
        answered=(False,) * SEATS,
        claims=(None,) * SEATS,
        opened_at=state.step + 1,
    )
    return msgspec.structs.replace(state, phase="calls", call=call)


def _next_turn(state: State, discarder: int, events: list[AnyEvent]) -> State:
    """The discard stands: the next seat draws, or it is tabla if nothing is left."""
    state = msgspec.structs.replace(state, call=None, drawn=None)
    if not state.wall:
        return _wall_out(state, events)
    return msgspec.structs.replace(state, turn=(discarder + 1) % SEATS, phase="draw")


def _declare_kang(state: State, seat: int, tile: str, events: list[AnyEvent]) -> State:
    _check_drawn(state, seat)
    player = state.players[seat]
    if tile not in player.hand:
        raise IllegalAction("tile_not_in_hand", f"{tile} is not in your hand")
    if state.drawn is None:
        raise IllegalAction("cannot_kang", "after claiming a discard you must discard")
    if not state.wall:
        raise IllegalAction("cannot_kang", "no tile is left for the replacement")
    if player.hand.count(tile) == 4:
        meld = Meld(kind="kang", tiles=(tile,) * 4, concealed=True)
        melds = (*player.melds, meld)
        added = False
    else:
        index = next(
            (i for i, m in enumerate(player.melds) if m.kind == "pong" and m.tiles[0] == tile),
            None,
        )
        if index is None:
            raise IllegalAction("cannot_kang", f"you hold neither four {tile} nor a pong of it")
        pong = player.melds[index]
        meld = msgspec.structs.replace(pong, kind="kang", tiles=(tile,) * 4)
        melds = _replaced(player.melds, index, meld)
        added = True
    kept = 3 if added else 0  # an added kang takes one tile from hand, a concealed one four
    player = msgspec.structs.replace(
        player, hand=_without(player.hand, *(tile,) * (4 - kept)), melds=melds
    )
    state = msgspec.structs.replace(state, players=_set_player(state.players, seat, player))
    events.append(KangDeclared(seat=seat, meld=meld, added=added))
    return _take_tile(state, seat, replacement=True, events=events)


def _declare_win(state: State, seat: int, events: list[AnyEvent]) -> State:
    _check_drawn(state, seat)
    player = state.players[seat]
    if state.drawn is None:
        raise IllegalAction("cannot_win", "a claimed discard wins only by claiming Mahjong on it")
    if not _is_winning(player.hand, player.melds, state.options):
        raise IllegalAction("hand_not_complete", "your hand is not complete")
    events.append(HandWon(seat=seat, tile=state.drawn, self_draw=True))
    outcome = Outcome(ending="self_draw", winner=seat, tile=state.drawn)
    return msgspec.structs.replace(state, phase="over", outcome=outcome)


# -- the call window ----------------------------------------------------------------


def _answer(state: State, seat: int, claim: Claim | None, events: list[AnyEvent]) -> State:
    """Record ``seat``'s claim (or pass, for None) and resolve the window if it can."""
    call = state.call
    if call is None:
        if claim is not None:
            raise IllegalAction("cannot_claim", "there is no discard to claim")
        raise IllegalAction("not_your_turn", "there is no discard to answer")
    if not call.offers[seat]:
        if claim is not None:
            raise IllegalAction("cannot_claim", f"you cannot claim {call.tile}")
        raise IllegalAction("not_your_turn", "you have nothing to claim")
    if call.answered[seat]:
        raise IllegalAction("already_answered", "you have answered this discard already")
    if claim is not None:
        claim = Claim(claim.kind, tuple(sorted(claim.tiles, key=_safe_key)))
        if claim not in call.offers[seat]:
            raise IllegalAction(
                "cannot_claim", f"you cannot claim {claim.kind} on {call.tile} with those tiles"
            )
    call = msgspec.structs.replace(
        call,
        answered=_replaced(call.answered, seat, True),
        claims=_replaced(call.claims, seat, claim),
    )
    events.append(CallAnswered(seat=seat, claim=claim))
    return _resolve(msgspec.structs.replace(state, call=call), events)


def _safe_key(tile: str) -> int:
    # Claims come from clients: an unknown tile sorts last and then fails the offer check.
    try:
        return sort_key(tile)
    except KeyError:
        return 1 << 20


def _time_out(state: State, seat: int, events: list[AnyEvent]) -> State:
    if state.phase == "calls":
        assert state.call is not None
        if seat not in _pending(state.call):
            raise IllegalAction("not_your_turn", "no answer is due from you")
        return _answer(state, seat, None, events)
    # Turn timers (auto-draw, auto-discard) belong to the ``pinoy`` options.
    raise IllegalAction("no_timer", "no timer is running for this seat")


def _claim_rank(call: CallWindow, seat: int, claim: Claim) -> tuple[int, int]:
    """Higher wins: the kind's priority, then nearness after the discarder."""
    return CLAIM_PRIORITY[claim.kind], -((seat - call.discarder) % SEATS)


def _resolve(state: State, events: list[AnyEvent]) -> State:
    """Close the window once no seat still to answer could beat the best claim so far."""
    call = state.call
    assert call is not None
    made = [(s, c) for s, c in enumerate(call.claims) if c is not None]
    best = max(made, key=lambda sc: _claim_rank(call, *sc), default=None)
    for seat in _pending(call):
        could = max(_claim_rank(call, seat, c) for c in call.offers[seat])
        if best is None or could > _claim_rank(call, *best):
            return state
    if best is None:
        events.append(CallsPassed(discarder=call.discarder, tile=call.tile))
        return _next_turn(state, call.discarder, events)
    return _take_discard(state, *best, events)


def _take_discard(state: State, seat: int, claim: Claim, events: list[AnyEvent]) -> State:
    """``seat`` takes the discard for ``claim``: mahjong ends the hand, else a meld."""
    call = state.call
    assert call is not None
    tile, discarder = call.tile, call.discarder
    players = state.players
    giver = players[discarder]
    players = _set_player(
        players, discarder, msgspec.structs.replace(giver, discards=giver.discards[:-1])
    )
    taker = players[seat]
    if claim.kind == "mahjong":
        taker = msgspec.structs.replace(taker, hand=_with(taker.hand, tile))
        events.append(HandWon(seat=seat, tile=tile, self_draw=False, discarder=discarder))
        return msgspec.structs.replace(
            state,
            players=_set_player(players, seat, taker),
            phase="over",
            call=None,
            outcome=Outcome(ending="discard", winner=seat, discarder=discarder, tile=tile),
        )
    meld = Meld(
        kind=claim.kind,
        tiles=_with(claim.tiles, tile),
        claimed=tile,
        from_seat=discarder,
    )
    taker = msgspec.structs.replace(
        taker, hand=_without(taker.hand, *claim.tiles), melds=(*taker.melds, meld)
    )
    events.append(TileClaimed(seat=seat, discarder=discarder, meld=meld))
    state = msgspec.structs.replace(
        state,
        players=_set_player(players, seat, taker),
        turn=seat,
        phase="discard",
        drawn=None,
        call=None,
    )
    if claim.kind == "kang":
        return _take_tile(state, seat, replacement=True, events=events)
    return state


def tiles_in_play(state: State) -> Iterable[str]:
    """Every tile the state holds, wherever it is (for "all 144 accounted for" checks)."""
    yield from state.wall
    for player in state.players:
        yield from player.hand
        yield from player.flowers
        yield from player.discards
        for meld in player.melds:
            yield from meld.tiles
