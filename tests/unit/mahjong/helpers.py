"""Building blocks for the Mahjong tests: rigged hands, playing scripts, simple bots.

``rig`` builds a legal state from chosen hands and wall ends, so scenario tests read
like the table; every tile not placed by the test goes to the middle of the wall (or,
when the wall is cut short, to the discard rows), so all 144 are always accounted for.
With ``indicator`` the state has that joker indicator set aside (the other three tiles
of its kind are the jokers).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence

from kalaro.games import mahjong as mj
from kalaro.games.mahjong import (
    AnyAction,
    AnyEvent,
    Claim,
    DeclareKang,
    DeclareWin,
    Discard,
    Meld,
    Options,
    Player,
    State,
    TimeOut,
)
from kalaro.games.mahjong.state import Phase
from kalaro.games.tiles import FLOWERS, MAHJONG_144, sort_key
from tests.unit import tile_helpers
from tests.unit.tile_helpers import check_sizes, keep_score, lay_out_rest, take, tiles

KALARO = mj.options_for("kalaro")
JOKER = mj.options_for("joker")
PINOY = mj.options_for("pinoy")
RULESET_OPTIONS = {"kalaro": KALARO, "joker": JOKER, "pinoy": PINOY}
FULL_SET = Counter(MAHJONG_144)


def rig(
    hands: Sequence[str],
    *,
    front: str = "",
    back: str = "",
    melds: dict[int, Sequence[Meld]] | None = None,
    wall_size: int | None = None,
    dealer: int = 0,
    turn: int | None = None,
    phase: Phase = "draw",
    drawn: str | None = None,
    options: Options = KALARO,
    indicator: str | None = None,
    discarded: bool | None = None,
    passed_win: tuple[bool, ...] = (False,) * 4,
) -> State:
    """A state with these concealed hands; ``front`` is drawn first, ``back`` replaces first.

    Flowers not placed by the test are set aside in seat 0's flower row. Without
    ``wall_size`` every other tile sits in the middle of the wall; with it, the wall
    keeps that many tiles and the rest are spread over the discard rows. ``discarded``
    (has anyone discarded yet: Bisaklat is over) defaults to "the rows hold discards".
    """
    pool = Counter(MAHJONG_144)
    melds = melds or {}
    concealed = [tuple(sorted(take(pool, tiles(h)), key=sort_key)) for h in hands]
    assert len(concealed) == 4
    for seat_melds in melds.values():
        for meld in seat_melds:
            take(pool, meld.tiles)
    check_sizes(concealed, melds, mj.HAND_SIZE, dealer if turn is None else turn, phase)
    head, tail = take(pool, tiles(front)), take(pool, tiles(back))
    if indicator is not None:
        take(pool, [indicator])
    spare_flowers = [f for f in FLOWERS if pool[f]]
    take(pool, spare_flowers)
    middle, discards = lay_out_rest(pool, MAHJONG_144, 4, wall_size, len(head) + len(tail))
    players = tuple(
        Player(
            hand=concealed[s],
            melds=tuple(melds.get(s, ())),
            flowers=tuple(spare_flowers) if s == 0 else (),
            discards=tuple(discards[s]),
        )
        for s in range(4)
    )
    return State(
        options=options,
        dealer=dealer,
        players=players,
        wall=head + tuple(middle) + tuple(reversed(tail)),
        turn=dealer if turn is None else turn,
        phase=phase,
        drawn=drawn,
        indicator=indicator,
        discarded=any(discards) if discarded is None else discarded,
        passed_win=passed_win,
    )


def play(state: State, moves: Iterable[tuple[int, AnyAction]]) -> tuple[State, list[AnyEvent]]:
    """Apply ``(seat, action)`` moves in order; all the events, in order."""
    return tile_helpers.play(mj.apply, state, moves)


def accounted(state: State) -> bool:
    """Whether the state holds exactly the 144 tiles of the set."""
    return Counter(mj.tiles_in_play(state)) == FULL_SET


# -- bots ---------------------------------------------------------------------------


def choose(state: State, seat: int, rng: random.Random, greedy: bool) -> AnyAction:
    """A bot's move: ``greedy`` takes wins and keeps connected tiles; otherwise uniform."""
    actions = mj.legal_actions(state, seat)
    if not greedy:
        return rng.choice(actions)
    for action in actions:
        if isinstance(action, DeclareWin) or (
            isinstance(action, Claim) and action.kind == "mahjong"
        ):
            return action
    melding = [a for a in actions if isinstance(a, Claim | DeclareKang)]
    if melding and rng.random() < 0.7:
        return rng.choice(melding)
    discards = [a for a in actions if isinstance(a, Discard)]
    if discards:
        hand = state.players[seat].hand
        return min(discards, key=lambda d: keep_score(hand, d.tile, rng, state.joker))
    return next(a for a in actions if not isinstance(a, Claim | DeclareKang))


def timed_out(state: State, rng: random.Random) -> bool:
    """Whether a bot's move is a time-out this time: 10% of answers to a call window, and
    (with turn timers) 5% of turns."""
    if state.phase == "calls":
        return rng.random() < 0.1
    return state.options.turn_seconds is not None and rng.random() < 0.05


def random_hand(
    seed: bytes, rng: random.Random, greedy: bool, options: Options = KALARO
) -> tuple[State, list[tuple[int, AnyAction]]]:
    """Play one hand to the end with bots; the final state and every (seat, action)."""
    state = mj.new_hand(options, seed)
    moves: list[tuple[int, AnyAction]] = []
    while not mj.is_over(state):
        seat = rng.choice(mj.to_act(state))
        if timed_out(state, rng):
            action: AnyAction = TimeOut()  # the seat's timer ran out
        else:
            action = choose(state, seat, rng, greedy)
        state, _ = mj.apply(state, seat, action)
        moves.append((seat, action))
    return state, moves
