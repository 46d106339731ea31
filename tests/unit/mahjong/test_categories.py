"""Every win category of the seed (single-player-filipino-mahjong.txt), one rigged hand
each, under the ``joker`` ruleset: the category named in the result and the event, and
what every seat pays under the default points table.

The joker indicator is a North wind (``4z``): the other three ``4z`` are the jokers.
Seat 0 deals. The winner waits on (or pairs a joker with) a ``5z``.
"""

from __future__ import annotations

import msgspec
import pytest

from kalaro.games import mahjong as mj
from kalaro.games.mahjong import DeclareWin, Discard, Draw, HandWon, State
from tests.unit.mahjong.helpers import JOKER, accounted, play, rig

INDICATOR = "4z"
# The winner's 16 tiles.
REGULAR = "123m 456m 789p 123s 456s 5z"  # waits on 5z for the pair
ESKALERA = "123456789s 234p 678p 5z"
SEVEN_PAIRS = "11m 33m 55p 77p 22s 88s 789p 5z"  # six pairs, a set, waits on 5z
# A joker (4z) kept as the eye: any tile wins, by draw only.
JOKER_EYE = "123m 456m 789p 123s 456s 4z"
JOKER_EYE_ESKALERA = "123456789s 234p 678p 4z"
JOKER_EYE_SEVEN_PAIRS = "11m 33m 55p 77p 22s 88s 789p 4z"
# The other seats: nothing they hold can use a 5z or a 7z (the dealer's junk discard).
DEALER = "111z 222z 333z 666z 1p 1p 9m 9m"
SOUTH = "1z 2z 3z 6z 1p 1p 9m 9m 1s 1s 9s 9s 7z 8m 8m 5z"
WEST = "777m 222p 999p 333s 666s 8s"
# Enough tiles in the discard rows that no win is "Before the Fifth".
LATE = 40


def _by_discard(hand: str, fifth: bool) -> State:
    """The dealer draws a 5z and discards it; seat 1 claims Mahjong."""
    state = rig(
        (DEALER, hand, SOUTH, WEST),
        front="5z",
        indicator=INDICATOR,
        options=JOKER,
        wall_size=None if fifth else LATE,
    )
    state, _ = play(state, [(0, Draw()), (0, Discard("5z"))])
    assert mj.to_act(state) == [1] and mj.Claim(kind="mahjong") in mj.legal_actions(state, 1)
    state, _ = play(state, [(1, mj.Claim(kind="mahjong"))])
    return state


def _by_draw(hand: str, fifth: bool) -> State:
    """Late: the dealer draws the winning 5z. Early: the dealer draws a 7z and throws it
    (the first tile in the discard pile), then seat 1 draws the 5z."""
    if not fifth:
        state = rig(
            (hand, DEALER, SOUTH, WEST),
            front="5z",
            indicator=INDICATOR,
            options=JOKER,
            wall_size=LATE,
        )
        state, _ = play(state, [(0, Draw()), (0, DeclareWin())])
        return state
    state = rig((DEALER, hand, SOUTH, WEST), front="7z 5z", indicator=INDICATOR, options=JOKER)
    state, _ = play(state, [(0, Draw()), (0, Discard("7z"))])
    assert (state.turn, state.phase) == (1, "draw")  # nobody could use the 7z
    state, _ = play(state, [(1, Draw()), (1, DeclareWin())])
    return state


def _bisaklat(hand: str, _: bool) -> State:
    """The dealer wins on the first draw of the hand."""
    state = rig((hand, DEALER, SOUTH, WEST), front="5z", indicator=INDICATOR, options=JOKER)
    state, _ = play(state, [(0, Draw()), (0, DeclareWin())])
    return state


def _triple_joker(_: str, __: bool) -> State:
    """Seat 2 holds all three jokers at the deal; the dealer's first draw never happens."""
    triple = "4z 4z 4z 777m 222p 999p 333s 8s"
    state = rig((DEALER, SOUTH, triple, REGULAR), indicator=INDICATOR, options=JOKER)
    wall = state.wall
    state, events = play(state, [(0, Draw())])
    assert state.wall == wall and not any(isinstance(e, mj.TileDrawn) for e in events)
    return state


SCENARIOS = [
    # (category, default points, how, the winner's hand, before the fifth)
    ("Win by Discard Regular", 2, _by_discard, REGULAR, False),
    ("Win by Discard Eskalera", 4, _by_discard, ESKALERA, False),
    ("Win by Discard Seven Pairs", 4, _by_discard, SEVEN_PAIRS, False),
    ("Win by Discard Before the Fifth", 4, _by_discard, REGULAR, True),
    ("Win by Discard Before the Fifth Eskalera", 6, _by_discard, ESKALERA, True),
    ("Win by Discard Before the Fifth Seven Pairs", 6, _by_discard, SEVEN_PAIRS, True),
    ("Win by Draw Regular", 2, _by_draw, REGULAR, False),
    ("Win by Draw Eskalera", 4, _by_draw, ESKALERA, False),
    ("Win by Draw Seven Pairs", 4, _by_draw, SEVEN_PAIRS, False),
    ("Win by Draw Before the Fifth", 4, _by_draw, REGULAR, True),
    ("Win by Draw Before the Fifth Eskalera", 6, _by_draw, ESKALERA, True),
    ("Win by Draw Before the Fifth Seven Pairs", 6, _by_draw, SEVEN_PAIRS, True),
    ("Win by Draw Joker Eye", 3, _by_draw, JOKER_EYE, False),
    ("Win by Draw Joker Eye Eskalera", 5, _by_draw, JOKER_EYE_ESKALERA, False),
    ("Win by Draw Joker Eye Seven Pairs", 5, _by_draw, JOKER_EYE_SEVEN_PAIRS, False),
    ("Win by Draw Joker Eye Before the Fifth", 5, _by_draw, JOKER_EYE, True),
    ("Win by Draw Joker Eye Before the Fifth Eskalera", 7, _by_draw, JOKER_EYE_ESKALERA, True),
    (
        "Win by Draw Joker Eye Before the Fifth Seven Pairs",
        7,
        _by_draw,
        JOKER_EYE_SEVEN_PAIRS,
        True,
    ),
    ("Bisaklat triple Joker win before the first draw", 8, _triple_joker, "", True),
    ("Bisaklat Regular", 8, _bisaklat, REGULAR, True),
    ("Bisaklat Eskalera", 10, _bisaklat, ESKALERA, True),
    ("Bisaklat Seven Pairs", 10, _bisaklat, SEVEN_PAIRS, True),
]


def test_the_scenarios_cover_every_category_of_the_seed() -> None:
    assert [name for name, *_ in SCENARIOS] == list(mj.CATEGORIES)


@pytest.mark.parametrize(
    ("name", "points", "how", "hand", "fifth"), SCENARIOS, ids=[s[0] for s in SCENARIOS]
)
def test_each_category_is_detected_named_and_paid(
    name: str, points: int, how: object, hand: str, fifth: bool
) -> None:
    assert mj.DEFAULT_POINTS.units(name) == points
    state: State = how(hand, fifth)  # type: ignore[operator]
    assert accounted(state)
    result = mj.result(state)
    assert result is not None
    assert result.category == name
    assert result.joker == INDICATOR
    won = mj.view(state, None).result
    assert won is not None and won.category == name  # the client sees it
    winner = result.winner
    assert winner is not None
    if name.startswith("Win by Discard"):
        assert (result.ending, result.discarder, result.winning_tile) == ("discard", 0, "5z")
        # The discarder pays the category's points, the two others 1 each.
        expected = [-points, points + 2, -1, -1]
    else:
        assert result.ending == "self_draw" and result.discarder is None
        expected = [-points] * 4
        expected[winner] = 3 * points
    assert list(result.payments) == expected
    bills = {c.payer: c for c in result.charges}
    if name.startswith("Win by Discard"):
        assert bills[0].items == (mj.Item(name="discarder", units=points, detail=name),)
        assert bills[2].items == (mj.Item(name="other_loser", units=1),)
    else:
        assert all(
            c.items == (mj.Item(name="self_draw", units=points, detail=name),)
            for c in result.charges
        )


def test_the_win_event_names_the_category() -> None:
    state = rig(
        (REGULAR, DEALER, SOUTH, WEST),
        front="5z",
        indicator=INDICATOR,
        options=JOKER,
        wall_size=LATE,
    )
    _, events = play(state, [(0, Draw()), (0, DeclareWin())])
    assert events[-1] == HandWon(seat=0, tile="5z", self_draw=True, category="Win by Draw Regular")


def test_the_triple_joker_is_checked_again_after_the_dealers_first_draw() -> None:
    # The dealer holds two jokers and draws the third: Bisaklat at once, no discard.
    dealer = "4z 4z 777m 222p 999p 3s 5s 8s 8m 7z"
    state = rig((dealer, SOUTH, REGULAR, DEALER), front="4z", indicator=INDICATOR, options=JOKER)
    state, events = play(state, [(0, Draw())])
    assert events[-1] == HandWon(seat=0, tile=None, self_draw=True, category=mj.CATEGORIES[18])
    result = mj.result(state)
    assert result is not None and result.winning_tile is None
    assert result.payments == (24, -8, -8, -8)


def test_a_complete_hand_with_three_jokers_is_named_by_its_pattern() -> None:
    # The dealer's first draw brings the third joker and completes the hand.
    dealer = "4z 4z 123m 456m 789p 123s 45s"
    state = rig((dealer, SOUTH, REGULAR, DEALER), front="4z", indicator=INDICATOR, options=JOKER)
    state, _ = play(state, [(0, Draw())])
    result = mj.result(state)
    assert result is not None and result.category == "Bisaklat Regular"
    assert result.payments == (24, -8, -8, -8)


def test_triple_jokers_after_the_first_discard_are_just_jokers() -> None:
    triple = "4z 4z 4z 777m 222p 999p 333s 8s"
    state = rig(
        (DEALER, SOUTH, triple, REGULAR), indicator=INDICATOR, options=JOKER, discarded=True
    )
    state, _ = play(state, [(0, Draw())])
    assert not mj.is_over(state) and (state.turn, state.phase) == (0, "discard")


def test_the_dealers_win_on_a_first_discard_is_by_discard_not_bisaklat() -> None:
    state = _by_discard(REGULAR, fifth=True)
    result = mj.result(state)
    assert result is not None and result.category == "Win by Discard Before the Fifth"


def _with_discards(state: State, *rows: tuple[str, ...]) -> State:
    """``state`` with these discard rows, the tiles taken from the back of the wall."""
    wall = list(state.wall)
    for tile in (t for row in rows for t in row):
        wall.reverse()
        wall.remove(tile)
        wall.reverse()
    players = tuple(
        msgspec.structs.replace(p, discards=rows[s]) for s, p in enumerate(state.players)
    )
    return msgspec.structs.replace(state, players=players, wall=tuple(wall), discarded=True)


def test_a_claimed_tile_leaves_the_pile_and_can_keep_it_under_five() -> None:
    # Five discards, but one was claimed for a pong: four visible, so Before the Fifth.
    pong = mj.Meld(kind="pong", tiles=("7m",) * 3, claimed="7m", from_seat=0)
    state = rig(
        (DEALER, REGULAR, SOUTH, "222p 999p 333s 666s 8s"),
        front="5z",
        indicator=INDICATOR,
        options=JOKER,
        melds={3: [pong]},
    )
    state = _with_discards(state, ("2m",), ("3p", "4p"), ("5p",), ())
    assert accounted(state)
    state, _ = play(state, [(0, Draw()), (0, Discard("5z")), (1, mj.Claim(kind="mahjong"))])
    result = mj.result(state)
    assert result is not None and result.category == "Win by Discard Before the Fifth"


def test_five_visible_discards_end_before_the_fifth() -> None:
    state = rig((DEALER, REGULAR, SOUTH, WEST), front="5z", indicator=INDICATOR, options=JOKER)
    state = _with_discards(state, ("2m", "6m"), ("3p", "4p"), ("5p",), ())
    state, _ = play(state, [(0, Draw()), (0, Discard("5z")), (1, mj.Claim(kind="mahjong"))])
    result = mj.result(state)
    assert result is not None and result.category == "Win by Discard Regular"


@pytest.mark.parametrize(
    ("hand", "pattern"),
    [
        # 1-9 of bamboo is also five chows: Eskalera comes first.
        ("123456789s 234p 678p 5z", "Eskalera"),
        # Seven pairs that also split as chows and a pong: Seven Pairs comes first.
        ("11m 22m 33m 44p 55p 66p 7s 111z", "Seven Pairs"),
    ],
)
def test_detection_order_eskalera_then_seven_pairs_then_regular(hand: str, pattern: str) -> None:
    dealer = "222z 333z 666z 1p 1p 9m 9m 8m 8m 2m"
    tile = "5z" if pattern == "Eskalera" else "7s"
    state = rig(
        (hand, dealer, SOUTH, WEST), front=tile, indicator=INDICATOR, options=JOKER, wall_size=LATE
    )
    state, _ = play(state, [(0, Draw()), (0, DeclareWin())])
    result = mj.result(state)
    assert result is not None and result.category == f"Win by Draw {pattern}"
