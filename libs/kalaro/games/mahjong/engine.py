"""The table flow of Filipino 16-tile Mahjong: deal, turns, claims, kangs, wins, tabla.

Pure functions over :class:`State`: ``apply`` returns a new state and the events of the
move, or raises ``IllegalAction`` and leaves nothing changed. Chance is the seed given to
``new_hand``; the call window (and, with ``turn_seconds``, the turn) ends on ``TimeOut``
actions sent by the worker. What makes a winning hand, and what a win is called, is in
:mod:`~kalaro.games.mahjong.hands`.

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

from collections.abc import Iterable
from typing import Never, NoReturn

import msgspec

from kalaro.games.base import IllegalAction, shuffled
from kalaro.games.mahjong.actions import (
    CLAIM_PRIORITY,
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
from kalaro.games.mahjong.events import (
    AnyEvent,
    CallAnswered,
    ClaimsOffered,
    FlowerReplaced,
    HandWon,
    KangDeclared,
    TileClaimed,
    TileDiscarded,
    TileDrawn,
)
from kalaro.games.mahjong.hands import (
    WINNING_SETS,
    Pattern,
    Source,
    category,
    claim_pattern,
    is_joker_eye,
    jokers_first,
    special_hands,
    winning_pattern,
)
from kalaro.games.mahjong.options import Options, check_options
from kalaro.games.mahjong.state import (
    SEATS,
    CallWindow,
    Meld,
    Outcome,
    Player,
    State,
)
from kalaro.games.tilegame import calls
from kalaro.games.tilegame import flow as tilegame
from kalaro.games.tilegame.table import Table, replaced, with_tiles, without_tiles
from kalaro.games.tiles import MAHJONG_144, chow_partners, is_complete, is_flower, sort_key

#: Tiles in a hand before the turn's draw; a winning hand is 5 sets + 1 pair.
HAND_SIZE = 16
#: A seat holding this many jokers before the dealer's first discard wins (Bisaklat).
_TRIPLE = 3
#: The deal goes round four times, four tiles each time, starting with the dealer.
_DEAL_ROUNDS = 4
_DEAL_BATCH = 4


_TABLE = Table(
    game="Mahjong",
    seats=SEATS,
    kong="kang",
    win=Claim(kind="mahjong"),
    priority=CLAIM_PRIORITY,
    several_winners=False,
    claim=Claim,
    call_window=CallWindow,
    outcome=Outcome,
    claims_offered=ClaimsOffered,
    call_answered=CallAnswered,
    tile_claimed=TileClaimed,
)


def _self_draw_pattern(state: State, seat: int) -> Pattern | None:
    """The pattern ``seat``'s hand makes now (after its own draw), or None."""
    player = state.players[seat]
    options = state.options
    if state.joker is None and not (options.seven_pairs or options.eskalera):
        # ``kalaro``'s hot path: 5 sets + 1 pair and nothing else.
        return "Regular" if is_complete(player.hand, WINNING_SETS - len(player.melds)) else None
    return winning_pattern(player.hand, player.melds, state.joker, options)


def _may_win_on(state: State, seat: int, tile: str) -> Pattern | None:
    """The pattern ``seat`` completes with another player's ``tile``, if it may win on it."""
    if state.options.passed_win_blocks and state.passed_win[seat]:
        return None
    player = state.players[seat]
    options = state.options
    if state.joker is None and not (options.seven_pairs or options.eskalera):
        complete = is_complete(with_tiles(player.hand, tile), WINNING_SETS - len(player.melds))
        return "Regular" if complete else None
    return claim_pattern(player.hand, tile, player.melds, state.joker, options)


def _jokers_held(state: State, seat: int) -> int:
    joker = state.joker
    return 0 if joker is None else state.players[seat].hand.count(joker)


class _Drawn(msgspec.Struct, frozen=True, kw_only=True):
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
        tile, wall = tilegame.wall_tile(wall, replacement)
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
    worker passes ``result(previous).next_dealer``. The dealer draws first. With
    jokers, the last non-flower tile of the wall is then revealed and set aside (the
    joker indicator). ``ValueError`` for options that cannot be played.
    """
    check_options(options)
    dealer = tilegame.choose_dealer(seed, dealer, SEATS)
    batches = [_DEAL_BATCH] * _DEAL_ROUNDS
    hands, wall = tilegame.deal(shuffled(MAHJONG_144, seed), dealer, SEATS, batches)
    order = tilegame.seats_from(dealer, SEATS)
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
    indicator = None
    if options.jokers:
        # Flowers are skipped (they stay in the wall, to be drawn and replaced as usual).
        back = max(i for i, tile in enumerate(wall) if not is_flower(tile))
        indicator, wall = wall[back], wall[:back] + wall[back + 1 :]
    players = tuple(
        Player(hand=tuple(sorted(hands[s], key=sort_key)), flowers=tuple(flowers[s]))
        for s in range(SEATS)
    )
    return State(
        options=options,
        dealer=dealer,
        players=players,
        wall=wall,
        turn=dealer,
        phase="draw",
        indicator=indicator,
    )


# -- what a seat may do -------------------------------------------------------------


def _claim_offers(state: State, discarder: int, tile: str) -> tuple[tuple[Claim, ...], ...]:
    """What each seat may claim on ``discarder``'s ``tile`` (nothing for the discarder)."""
    joker = state.joker
    offers: list[tuple[Claim, ...]] = []
    for seat, player in enumerate(state.players):
        if seat == discarder or tile == joker:  # a discarded joker is dead
            offers.append(())
            continue
        mine: list[Claim] = []
        hand = player.hand
        if _may_win_on(state, seat, tile):
            mine.append(Claim(kind="mahjong"))
        held = hand.count(tile)
        if held >= 3 and state.wall:  # a kang needs a replacement tile
            mine.append(Claim(kind="kang", tiles=(tile, tile, tile)))
        if held >= 2:
            mine.append(Claim(kind="pong", tiles=(tile, tile)))
        if seat == (discarder + 1) % SEATS:  # chow: only the next player
            mine.extend(
                Claim(kind="chow", tiles=(low, high))
                for low, high in chow_partners(tile)
                if low in hand and high in hand and joker not in (low, high)
            )
        offers.append(tuple(mine))
    return tuple(offers)


def _rob_offers(state: State, declarer: int, tile: str) -> tuple[tuple[Claim, ...], ...]:
    """Who may rob ``declarer``'s added kang of ``tile``: Mahjong only."""
    return tuple(
        (Claim(kind="mahjong"),) if seat != declarer and _may_win_on(state, seat, tile) else ()
        for seat in range(SEATS)
    )


def legal_actions(state: State, seat: int) -> list[AnyAction]:
    """Everything ``seat`` may do now (its private claim options included).

    A seat marked away is offered ``Back`` first, whether or not it is to move.
    """
    return tilegame.legal_actions(state, seat, _moves, Back())


def _moves(state: State, seat: int) -> list[AnyAction]:
    """What ``seat`` may play now (the hand is not over)."""
    if state.phase == "calls":
        return tilegame.call_moves(state, seat, Pass())
    if seat != state.turn:
        return []
    if state.phase == "draw":
        return [Draw()]
    player = state.players[seat]
    actions: list[AnyAction] = []
    if state.drawn is not None and _self_draw_pattern(state, seat):
        actions.append(DeclareWin())
    actions.extend(DeclareKang(t) for t in tilegame.kong_tiles(state, seat))
    actions.extend(Discard(t) for t in dict.fromkeys(player.hand))
    return actions


# -- moves --------------------------------------------------------------------------


def apply(state: State, seat: int, action: AnyAction) -> tuple[State, list[AnyEvent]]:
    """Play ``action`` for ``seat``: the new state and what happened.

    ``IllegalAction`` (with a stable ``code``) for anything the rules refuse; ``state``
    itself is never changed.
    """
    tilegame.check_move(_TABLE, state, seat)
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
        case Back():
            new = tilegame.back(_TABLE, state, seat, events)
        case _:
            _unhandled(action)
    timed_out = isinstance(action, TimeOut)
    answered = state.phase == "calls" and isinstance(action, Claim | Pass | TimeOut)
    new = tilegame.end_move(
        _TABLE, state, new, seat, timed_out=timed_out, answered=answered, events=events
    )
    return new, events


def _unhandled(action: Never) -> NoReturn:
    # Typed ``Never`` so that an action added to the union but not to ``apply`` is a
    # type error; at run time, something that is not an action at all.
    raise tilegame.unknown_action(_TABLE, action)


def _first_turn(state: State) -> bool:
    """The dealer's first turn, before anyone has discarded: Bisaklat may happen."""
    return state.turn == state.dealer and not state.discarded


def _draw(state: State, seat: int, events: list[AnyEvent]) -> State:
    tilegame.check_draw(state, seat)
    if state.joker is not None and _first_turn(state):
        # Bisaklat before the first draw: every seat, the dealer first.
        for holder in ((state.dealer + i) % SEATS for i in range(SEATS)):
            if _jokers_held(state, holder) >= _TRIPLE:
                return _win(state, holder, tile=None, discarder=None, pattern=None, events=events)
    return _take_tile(state, seat, replacement=False, events=events)


def _take_tile(state: State, seat: int, replacement: bool, events: list[AnyEvent]) -> State:
    """``seat`` draws (front or back) with its flower chain; tabla if the wall runs out.

    A draw lifts the seat's passed-win block. In the dealer's first turn, a dealer now
    holding all three jokers wins at once (Bisaklat; named by the hand's pattern if it
    is complete).
    """
    draw = _draw_from_wall(state.wall, seat, replacement, events)
    player = state.players[seat]
    player = msgspec.structs.replace(
        player,
        hand=player.hand if draw.tile is None else with_tiles(player.hand, draw.tile),
        flowers=player.flowers + draw.flowers,
    )
    state = msgspec.structs.replace(
        state,
        players=replaced(state.players, seat, player),
        wall=draw.wall,
        turn=seat,
        phase="discard",
        drawn=draw.tile,
        call=None,
        passed_win=replaced(state.passed_win, seat, False),
    )
    if draw.tile is None:
        return tilegame.wall_out(_TABLE, state, events)
    if _first_turn(state) and _jokers_held(state, seat) >= _TRIPLE:
        pattern = _self_draw_pattern(state, seat)
        return _win(
            state, seat, tile=draw.tile if pattern else None, pattern=pattern, events=events
        )
    return state


def _discard(state: State, seat: int, tile: str, events: list[AnyEvent]) -> State:
    tilegame.check_discard(state, seat, tile)
    state = tilegame.to_discards(_TABLE, state, seat, tile, discarded=True)
    events.append(TileDiscarded(seat=seat, tile=tile))
    offers = _claim_offers(state, seat, tile)
    return calls.offer(_TABLE, state, seat, tile, offers, events, answer=_answer)


def _declare_kang(state: State, seat: int, tile: str, events: list[AnyEvent]) -> State:
    tilegame.check_discard(state, seat, tile)
    tilegame.check_kong(_TABLE, state, "after claiming a discard you must discard")
    player = state.players[seat]
    if player.hand.count(tile) == 4:
        meld = Meld(kind="kang", tiles=(tile,) * 4, concealed=True)
        state = tilegame.concealed_kong(state, seat, tile, meld)
        secret = state.options.secret_kangs
        events.append(KangDeclared(seat=seat, meld=meld, added=False, secret=secret))
        return _take_tile(state, seat, replacement=True, events=events)
    tilegame.pong_of(_TABLE, player, tile)
    if state.options.robbing_the_kang:
        offers = _rob_offers(state, seat, tile)
        if any(offers):
            return calls.open_window(
                _TABLE, state, seat, tile, offers, robbing=True, events=events, answer=_answer
            )
    return _add_kang(state, seat, tile, events)


def _add_kang(state: State, seat: int, tile: str, events: list[AnyEvent]) -> State:
    """``seat`` puts ``tile`` on its pong of it (nobody robbed it) and draws a replacement."""
    pong = state.players[seat].melds[tilegame.pong_of(_TABLE, state.players[seat], tile)]
    meld = msgspec.structs.replace(pong, kind="kang", tiles=(tile,) * 4)
    state = tilegame.extended_kong(state, seat, tile, meld)
    events.append(KangDeclared(seat=seat, meld=meld, added=True))
    return _take_tile(state, seat, replacement=True, events=events)


def _declare_win(state: State, seat: int, events: list[AnyEvent]) -> State:
    tilegame.check_drawn(state, seat)
    if state.drawn is None:
        raise IllegalAction("cannot_win", "a claimed discard wins only by claiming Mahjong on it")
    pattern = _self_draw_pattern(state, seat)
    if pattern is None:
        raise IllegalAction("hand_not_complete", "your hand is not complete")
    return _win(state, seat, tile=state.drawn, pattern=pattern, events=events)


def _win(
    state: State,
    seat: int,
    *,
    tile: str | None,
    pattern: Pattern | None,
    events: list[AnyEvent],
    discarder: int | None = None,
    robbed: bool = False,
) -> State:
    """``seat`` wins: name the category (under a points table) and end the hand.

    ``tile`` is in ``seat``'s hand already (None: a Bisaklat triple-joker win, no tile
    and ``pattern`` None). ``discarder`` is None unless the tile was another player's.
    """
    player = state.players[seat]
    source: Source = "discard"
    if discarder is None:
        source = "bisaklat" if _first_turn(state) and seat == state.dealer else "draw"
    if pattern is None:
        source = "bisaklat"
    before_fifth = sum(len(p.discards) for p in state.players) < 5
    joker_eye = (
        source == "draw"
        and tile is not None
        and pattern is not None
        and is_joker_eye(without_tiles(player.hand, tile), player.melds, state.joker, pattern)
    )
    # ``kalaro`` payments do not depend on the category, and its results stay as they were.
    name = category(source, pattern, before_fifth, joker_eye) if state.options.points else None
    specials: tuple[str, ...] = ()
    if state.options.special_hands and pattern is not None:
        specials = special_hands(player.hand, player.melds, state.joker)
    events.append(
        HandWon(
            seat=seat,
            tile=tile,
            self_draw=discarder is None,
            discarder=discarder,
            category=name,
            robbed_kang=robbed,
        )
    )
    outcome = Outcome(
        ending="self_draw" if discarder is None else "discard",
        winner=seat,
        discarder=discarder,
        tile=tile,
        category=name,
        specials=specials,
        robbed_kang=robbed,
    )
    return msgspec.structs.replace(state, phase="over", call=None, outcome=outcome)


# -- the call window ----------------------------------------------------------------


def _answer(state: State, seat: int, claim: Claim | None, events: list[AnyEvent]) -> State:
    """Record ``seat``'s claim (or pass, for None) and resolve the window if it can."""
    state = calls.record_answer(_TABLE, state, seat, claim, events, refuse=_refuse_claim)
    assert state.call is not None
    answer = state.call.claims[seat]
    if (
        state.options.passed_win_blocks
        and _TABLE.win in state.call.offers[seat]
        and (answer is None or answer.kind != "mahjong")
    ):  # passed a winning tile
        state = msgspec.structs.replace(state, passed_win=replaced(state.passed_win, seat, True))
    return calls.resolve(
        _TABLE, state, events, win=_win_on_tile, meld=_take_discard, kong_stands=_add_kang
    )


def _refuse_claim(state: State, seat: int, claim: Claim) -> None:
    """A seat with nothing to claim is told so about the tile itself."""
    assert state.call is not None
    if not state.call.offers[seat]:
        raise IllegalAction("cannot_claim", f"you cannot claim {state.call.tile}")


def _time_out(state: State, seat: int, events: list[AnyEvent]) -> State:
    """Play for a seat whose timer ran out, conservatively.

    A call window: claim Mahjong if offered, else pass. A turn: draw if not drawn, win
    if the hand is complete, else discard (:func:`_auto_discard`).
    """
    if state.phase == "calls":
        return _answer(state, seat, calls.timed_out_answer(_TABLE, state, seat), events)
    tilegame.check_turn_timeout(state, seat)
    if state.phase == "draw":
        state = _draw(state, seat, events)
        if state.phase == "over":
            return state
    if state.drawn is not None and _self_draw_pattern(state, seat):
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
    pattern = _patternwith_tiles(state, seat)
    return _win(
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
    state = calls.claim_meld(_TABLE, state, seat, claim.tiles, meld, events)
    if claim.kind == "kang":
        return _take_tile(state, seat, replacement=True, events=events)
    return state


def _patternwith_tiles(state: State, seat: int) -> Pattern:
    """The pattern ``seat`` won with on another player's tile (now in its hand)."""
    player = state.players[seat]
    assert state.call is not None
    before = without_tiles(player.hand, state.call.tile)
    if state.joker is None and not (state.options.seven_pairs or state.options.eskalera):
        return "Regular"
    pattern = claim_pattern(before, state.call.tile, player.melds, state.joker, state.options)
    assert pattern is not None, "a Mahjong claim is offered only on a winning tile"
    return pattern


def tiles_in_play(state: State) -> Iterable[str]:
    """Every tile the state holds, wherever it is (for "all 144 accounted for" checks)."""
    if state.indicator is not None:
        yield state.indicator
    yield from state.wall
    for player in state.players:
        yield from player.hand
        yield from player.flowers
        yield from player.discards
        for meld in player.melds:
            yield from meld.tiles
