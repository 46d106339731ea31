"""Building blocks for the Ka Wu Xing tests: rigged hands, playing scripts, simple bots.

``rig`` builds a legal state from chosen hands and wall ends, so scenario tests read
like the table; every tile not placed by the test goes to the middle of the wall (or,
when the wall is cut short, to the discard rows), so all 84 are always accounted for.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence

from kalaro.games import kawuxing as kw
from kalaro.games.kawuxing import (
    AnyAction,
    AnyEvent,
    Claim,
    DeclareKong,
    DeclareWin,
    Discard,
    Meld,
    Options,
    Player,
    ShowHand,
    State,
    TimeOut,
)
from kalaro.games.kawuxing.state import Phase
from kalaro.games.tiles import sort_key
from tests.unit import tile_helpers
from tests.unit.tile_helpers import check_sizes, keep_score, lay_out_rest, take, tiles

DEFAULT = kw.options_for("kawuxing")
FULL_SET = Counter(kw.TILES_84)


def pong(tile: str, from_seat: int = 1) -> Meld:
    """An exposed pong of ``tile`` claimed from ``from_seat``."""
    return Meld(kind="pong", tiles=(tile,) * 3, claimed=tile, from_seat=from_seat)


def kong(tile: str, how: kw.state.KongKind = "concealed", from_seat: int | None = None) -> Meld:
    """A kong of ``tile`` made ``how``."""
    claimed = tile if how != "concealed" else None
    return Meld(kind="kong", tiles=(tile,) * 4, claimed=claimed, from_seat=from_seat, kong=how)


# Filler hands take single tiles in this order (ranks three apart, so no runs form):
# thirteen different kinds can claim nothing and, checked below, wait for nothing.
_FILL_ORDER = tiles("147p 147s 5z 258p 258s 6z 369p 369s 7z")


def _filler(pool: Counter[str], start: int) -> tuple[str, ...]:
    """Thirteen single tiles from ``pool`` that neither claim nor wait (``pool`` is taken from)."""
    for shift in range(len(_FILL_ORDER)):
        order = _FILL_ORDER[(start + shift) % len(_FILL_ORDER) :] + _FILL_ORDER
        hand = tuple(dict.fromkeys(k for k in order if pool[k] > 0))[: kw.HAND_SIZE]
        if len(hand) == kw.HAND_SIZE and not kw.waits(hand, ()):
            for tile in hand:
                pool[tile] -= 1
            return tuple(sorted(hand, key=sort_key))
    raise AssertionError("rig: no filler hand fits what is left")


def rig(
    hands: Sequence[str | None],
    *,
    front: str = "",
    back: str = "",
    melds: dict[int, Sequence[Meld]] | None = None,
    shown: Iterable[int] = (),
    wall_size: int | None = None,
    dealer: int = 0,
    turn: int | None = None,
    phase: Phase = "draw",
    drawn: str | None = None,
    options: Options = DEFAULT,
) -> State:
    """A state with these concealed hands; ``front`` is drawn first, ``back`` replaces first.

    A hand given as None (for a seat without melds) is a filler: thirteen single tiles
    that can claim nothing and wait for nothing, taken after everything the test places.
    Without ``wall_size`` every other tile sits in the middle of the wall; with it, the
    wall keeps that many tiles and the rest are spread over the discard rows.
    """
    pool = Counter(kw.TILES_84)
    melds = melds or {}
    shown = set(shown)
    assert len(hands) == kw.SEATS
    concealed = [
        () if h is None else tuple(sorted(take(pool, tiles(h)), key=sort_key)) for h in hands
    ]
    for seat_melds in melds.values():
        for meld in seat_melds:
            take(pool, meld.tiles)
    mover = dealer if turn is None else turn
    head, tail = take(pool, tiles(front)), take(pool, tiles(back))
    for seat, given in enumerate(hands):
        if given is None:
            concealed[seat] = _filler(pool, 7 * seat)
    check_sizes(concealed, melds, kw.HAND_SIZE, mover, phase)
    middle, discards = lay_out_rest(pool, kw.TILES_84, kw.SEATS, wall_size, len(head) + len(tail))
    players = tuple(
        Player(
            hand=concealed[s],
            melds=tuple(melds.get(s, ())),
            discards=tuple(discards[s]),
            shown=s in shown,
        )
        for s in range(kw.SEATS)
    )
    return State(
        options=options,
        dealer=dealer,
        players=players,
        wall=head + tuple(middle) + tuple(reversed(tail)),
        turn=mover,
        phase=phase,
        drawn=drawn,
    )


def play(state: State, moves: Iterable[tuple[int, AnyAction]]) -> tuple[State, list[AnyEvent]]:
    """Apply ``(seat, action)`` moves in order; all the events, in order."""
    return tile_helpers.play(kw.apply, state, moves)


def accounted(state: State) -> bool:
    """Whether the state holds exactly the 84 tiles of the set."""
    return Counter(kw.tiles_in_play(state)) == FULL_SET


def play_out(state: State) -> State:
    """Finish the hand without anyone winning: draw, discard the drawn tile, pass claims."""
    while not kw.is_over(state):
        if state.phase == "calls":
            state, _ = kw.apply(state, kw.to_act(state)[0], kw.Pass())
        elif state.phase == "draw":
            state, _ = kw.apply(state, state.turn, kw.Draw())
        else:
            tile = state.drawn or state.players[state.turn].hand[-1]
            state, _ = kw.apply(state, state.turn, Discard(tile))
    return state


def result(state: State) -> kw.Result:
    """The result of a finished hand (fails the test if the hand is not over)."""
    out = kw.result(state)
    assert out is not None, "the hand is not over"
    return out


# -- bots ---------------------------------------------------------------------------


def choose(state: State, seat: int, rng: random.Random, greedy: bool) -> AnyAction:
    """A bot's move: ``greedy`` takes wins, often shows its hand and keeps connected
    tiles; otherwise uniform over the legal actions."""
    actions = kw.legal_actions(state, seat)
    if not greedy:
        return rng.choice(actions)
    for action in actions:
        if isinstance(action, DeclareWin) or (isinstance(action, Claim) and action.kind == "win"):
            return action
    melding = [a for a in actions if isinstance(a, Claim | DeclareKong)]
    if melding and rng.random() < 0.8:
        return rng.choice(melding)
    shows = [a for a in actions if isinstance(a, ShowHand)]
    if shows and rng.random() < 0.5:
        return rng.choice(shows)
    discards = [a for a in actions if isinstance(a, Discard)]
    if discards:
        hand = state.players[seat].hand
        return min(discards, key=lambda d: keep_score(hand, d.tile, rng))
    return next(a for a in actions if not isinstance(a, Claim | DeclareKong))


def bot_move(state: State, rng: random.Random, greedy: bool) -> tuple[int, AnyAction]:
    """Who moves and what: a seat waited on, its bot's choice (sometimes a time-out: 10%
    of answers to a call window and, with the turn clock, 3% of turns)."""
    seat = rng.choice(kw.to_act(state))
    if state.phase == "calls":
        if rng.random() < 0.1:
            return seat, TimeOut()  # the call window ran out for this seat
    elif state.options.turn_seconds is not None and rng.random() < 0.03:
        return seat, TimeOut()  # the turn clock ran out
    return seat, choose(state, seat, rng, greedy)


def random_hand(
    seed: bytes, rng: random.Random, greedy: bool, options: Options = DEFAULT
) -> tuple[State, list[tuple[int, AnyAction]]]:
    """Play one hand to the end with bots; the final state and every (seat, action)."""
    state = kw.new_hand(options, seed)
    moves: list[tuple[int, AnyAction]] = []
    while not kw.is_over(state):
        seat, action = bot_move(state, rng, greedy)
        state, _ = kw.apply(state, seat, action)
        moves.append((seat, action))
    return state, moves
