"""Winning patterns with jokers, Joker Eye, claims and special hands (``mahjong.hands``),
checked on examples and against the brute-force references in ``reference.py``."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kalaro.games import mahjong as mj
from kalaro.games.mahjong import Meld
from kalaro.games.mahjong.hands import (
    category,
    claim_pattern,
    is_joker_eye,
    jokers_first,
    special_hands,
    winning_pattern,
)
from kalaro.games.tiles import KINDS, is_sets, parse_tiles
from tests.unit.mahjong.helpers import JOKER
from tests.unit.mahjong.reference import (
    reference_claim,
    reference_joker_eye,
    reference_pattern,
    reference_split,
)

J = "4z"  # the joker kind in these examples


def t(text: str) -> tuple[str, ...]:
    return parse_tiles(text)


def chow(text: str) -> Meld:
    return Meld(kind="chow", tiles=t(text), claimed=t(text)[0], from_seat=3)


# -- examples ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hand", "melds", "pattern"),
    [
        ("123m 456m 789p 123s 456s 55z", (), "Regular"),
        ("123456789s 234p 678p 55z", (), "Eskalera"),
        ("12345678s 4z 234p 678p 55z", (), "Eskalera"),  # a joker is the missing 9s
        ("1234567s 4z 4z 234p 678p 55z", (), "Eskalera"),  # two jokers, 8s and 9s
        ("456789s 234p 678p 55z", ("123s",), "Eskalera"),  # an exposed chow is a run
        ("11m 33m 55p 77p 22s 88s 789p 11z", (), "Seven Pairs"),
        ("1111m 55p 77p 22s 88s 789p 11z", (), "Seven Pairs"),  # four alike: two pairs
        ("11m 33m 55p 77p 22s 88s 789p 1z 4z", (), "Seven Pairs"),  # a joker pairs 1z
        ("11m 22m 33m 44p 55p 66p 77s 111z", (), "Seven Pairs"),  # also Regular
        ("123m 456m 789p 123s 456s 5z 4z", (), "Regular"),  # a joker pairs 5z
        ("4z 4z 4z 123m 456m 789p 123s 5z 6z", (), "Regular"),  # 6z J J, 5z J
        ("4z 4z 4z 123m 456m 789p 123s 5z 6z 7z", (), None),
        ("11m 33m 55p 77p 22s 88s 79p 11z", ("123m",), None),  # seven pairs: no melds
        ("123m 456m 789p 123s 456s 5z 6z", (), None),
    ],
)
def test_patterns_in_detection_order(hand: str, melds: tuple[str, ...], pattern: str) -> None:
    exposed = tuple(chow(m) for m in melds)
    assert winning_pattern(t(hand), exposed, J, JOKER) == pattern


def test_patterns_switched_off_are_not_winning_hands() -> None:
    regular_only = mj.options_for("joker", seven_pairs=False, eskalera=False)
    assert winning_pattern(t("11m 33m 55p 77p 22s 88s 789p 11z"), (), J, regular_only) is None
    assert winning_pattern(t("123456789s 234p 678p 55z"), (), J, regular_only) == "Regular"
    assert winning_pattern(t("123456789s 234p 678p 55z"), (), J, JOKER) == "Eskalera"
    # Without jokers the 4z are just North winds.
    assert winning_pattern(t("123m 456m 789p 123s 456s 5z 4z"), (), None, JOKER) is None


@pytest.mark.parametrize(
    ("before", "pattern", "eye"),
    [
        ("123m 456m 789p 123s 456s 4z", "Regular", True),  # every set done, a lone joker
        ("123456789m 123p 456p 4z", "Eskalera", True),
        ("11m 33m 55p 77p 22s 88s 789p 4z", "Seven Pairs", True),
        ("11m 33m 55p 77p 22s 88s 79p 4z 4z", "Seven Pairs", True),  # extra joker in a set
        ("123m 456m 789p 123s 45s 5z", "Regular", False),  # no joker at all
        ("123m 456m 789p 123s 45s 4z", "Regular", False),  # the joker is needed in a set
    ],
)
def test_joker_eye_waits(before: str, pattern: str, eye: bool) -> None:
    assert is_joker_eye(t(before), (), J, pattern) is eye  # type: ignore[arg-type]


def test_a_joker_eye_never_wins_on_another_players_tile() -> None:
    waiting = t("123m 456m 789p 123s 456s 4z")
    assert claim_pattern(waiting, "1z", (), J, JOKER) is None
    assert winning_pattern((*waiting, "1z"), (), J, JOKER) == "Regular"
    # ... not even when the tile also completes the hand another way (3s pairs a real
    # 3s, the joker filling 12s): the hand waits in Joker Eye shape, so draw only.
    other_way = t("123m 456m 789p 123s 345s 4z")
    assert winning_pattern((*other_way, "3s"), (), J, JOKER) == "Regular"
    assert claim_pattern(other_way, "3s", (), J, JOKER) is None
    # Seven Pairs shape: 1 set, 6 pairs and an unpaired joker. A 1p would also make
    # 11p 11p + five pairs + a 99s-joker set, but it is still not a discard win.
    pairs_eye = t("111p 22m 33m 55m 66p 77p 99s 4z")
    assert is_joker_eye(pairs_eye, (), J, "Seven Pairs")
    assert winning_pattern((*pairs_eye, "1p"), (), J, JOKER) == "Seven Pairs"
    assert claim_pattern(pairs_eye, "1p", (), J, JOKER) is None
    # Without the joker the same tiles are no Joker Eye, and the discard wins.
    assert claim_pattern(t("111p 22m 33m 55m 66p 77p 99s 9s"), "1p", (), J, JOKER) is not None
    # A discarded joker is never claimable.
    assert claim_pattern(t("123m 456m 789p 123s 456s 5z"), J, (), J, JOKER) is None


def test_jokers_are_shown_first() -> None:
    assert jokers_first(t("1m 4z 5p 4z 9s"), J) == t("4z 4z 1m 5p 9s")
    assert jokers_first(t("1m 4z"), None) == t("1m 4z")


@pytest.mark.parametrize(
    ("source", "pattern", "fifth", "eye", "name"),
    [
        ("discard", "Regular", False, False, "Win by Discard Regular"),
        ("discard", "Regular", True, False, "Win by Discard Before the Fifth"),
        ("discard", "Seven Pairs", True, False, "Win by Discard Before the Fifth Seven Pairs"),
        ("draw", "Regular", False, True, "Win by Draw Joker Eye"),
        ("draw", "Eskalera", True, True, "Win by Draw Joker Eye Before the Fifth Eskalera"),
        ("draw", "Regular", True, False, "Win by Draw Before the Fifth"),
        ("bisaklat", "Seven Pairs", True, True, "Bisaklat Seven Pairs"),
        ("bisaklat", None, True, False, "Bisaklat triple Joker win before the first draw"),
    ],
)
def test_category_names_are_the_seeds(
    source: str, pattern: str | None, fifth: bool, eye: bool, name: str
) -> None:
    assert category(source, pattern, fifth, eye) == name  # type: ignore[arg-type]
    assert name in mj.CATEGORIES


def test_every_seed_category_has_a_way_to_be_named() -> None:
    named = {
        category(source, pattern, fifth, eye)  # type: ignore[arg-type]
        for source in ("discard", "draw", "bisaklat")
        for pattern in ("Regular", "Eskalera", "Seven Pairs", None)
        for fifth in (False, True)
        for eye in (False, True)
    }
    assert named == set(mj.CATEGORIES)
    assert len(mj.CATEGORIES) == 22


# -- special hands ----------------------------------------------------------------------


def pong(tile: str, seat: int | None = 2) -> Meld:
    return Meld(kind="pong", tiles=(tile,) * 3, claimed=tile, from_seat=seat)


@pytest.mark.parametrize(
    ("hand", "melds", "expected"),
    [
        ("111m 222p 333s 444m 55z 6z 6z", (), ()),  # not complete: nothing is claimed
        ("111m 999p 333s 555m 777s 77z", (), ("All Pongs", "Concealed Hand")),
        ("111m 999p 333s 222s 7z 7z", ("5m",), ("All Pongs",)),
        ("111m 999p 333s 222s 7z 4z", ("5m",), ("All Pongs",)),  # a joker pairs the 7z
        ("111m 999p 333s 22s 4z 7z 4z", ("5m",), ("All Pongs",)),  # 22s J, 7z J
        ("123m 456m 789m 111m 5m 6m 4z 99m", (), ("Pure One Suit", "Concealed Hand")),
        (
            "111z 222z 333z 555z 666z 7z 4z",
            (),
            ("All Honours", "Small Three Dragons", "Concealed Hand"),
        ),
        ("555z 666z 777z 123m 456p 11s", (), ("Big Three Dragons", "Concealed Hand")),
        ("555z 66z 4z 777z 123m 456p 11s", (), ("Big Three Dragons", "Concealed Hand")),
        ("555z 666z 77z 123m 456p 789s", (), ("Small Three Dragons", "Concealed Hand")),
        ("66z 123m 456p 789s", ("5z", "7z"), ("Small Three Dragons",)),
        ("123m 456p 789s 11s 234s", ("5z",), ()),
    ],
)
def test_special_hands(hand: str, melds: tuple[str, ...], expected: tuple[str, ...]) -> None:
    tiles = t(hand)
    exposed = tuple(pong(m) for m in melds)
    if winning_pattern(tiles, exposed, J, JOKER) is None:
        assert expected == ()
        return
    assert special_hands(tiles, exposed, J) == expected


def test_a_concealed_kang_keeps_a_hand_concealed() -> None:
    kang = Meld(kind="kang", tiles=("9m",) * 4, concealed=True)
    assert "Concealed Hand" in special_hands(t("123m 456p 789s 123s 11z"), (kang,), J)


# -- against the brute-force references --------------------------------------------------


@st.composite
def _complete_hands(draw: st.DrawFn) -> list[str]:
    """A complete 17-tile concealed hand of a random pattern (at most four of a kind)."""
    while True:
        shape = draw(st.sampled_from(["regular", "seven_pairs", "eskalera"]))
        hand: list[str] = []
        sets = {"regular": 5, "seven_pairs": 1, "eskalera": 2}[shape]
        if shape == "eskalera":
            suit = draw(st.sampled_from("mps"))
            hand += [f"{n}{suit}" for n in range(1, 10)]
        for _ in range(sets):
            if draw(st.booleans()):
                hand += [draw(st.sampled_from(KINDS))] * 3
            else:
                suit, low = draw(st.sampled_from("mps")), draw(st.integers(1, 7))
                hand += [f"{low + i}{suit}" for i in range(3)]
        for _ in range(7 if shape == "seven_pairs" else 1):
            hand += [draw(st.sampled_from(KINDS))] * 2
        if max(Counter(hand).values()) <= 4:
            return hand


@st.composite
def _joker_hands(draw: st.DrawFn) -> tuple[list[str], int]:
    """A complete hand, maybe spoiled by one tile, with up to three tiles made jokers."""
    hand = draw(st.permutations(draw(_complete_hands())))
    if draw(st.booleans()):
        hand[0] = draw(st.sampled_from(KINDS))
    wild = draw(st.integers(0, 3))
    return hand[wild:], wild


def _joker_for(tiles: list[str]) -> str:
    """A kind the hand does not hold, to stand for its jokers."""
    return next(k for k in reversed(KINDS) if k not in tiles)


_examples = settings(
    # a brute-force reference per example: a short run unless `make test-deep`
    max_examples=150 if settings.get_current_profile_name() == "deep" else 10,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example],
)


@_examples
@given(_joker_hands())
def test_winning_pattern_agrees_with_brute_force(case: tuple[list[str], int]) -> None:
    natural, wild = case
    joker = _joker_for(natural)
    hand = natural + [joker] * wild
    assert winning_pattern(hand, (), joker, JOKER) == reference_pattern(natural, wild)


@_examples
@given(_joker_hands(), st.integers(0, 16))
def test_claims_and_joker_eye_agree_with_brute_force(
    case: tuple[list[str], int], pick: int
) -> None:
    natural, wild = case
    if not natural:
        return
    tile = natural[pick % len(natural)]
    before = list(natural)
    before.remove(tile)
    joker = _joker_for(natural)
    hand = before + [joker] * wild
    assert claim_pattern(hand, tile, (), joker, JOKER) == reference_claim(before, tile, wild)
    for pattern in ("Regular", "Seven Pairs", "Eskalera"):
        assert is_joker_eye(hand, (), joker, pattern) == reference_joker_eye(  # type: ignore[arg-type]
            before, wild, pattern
        )


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(KINDS[:12] + KINDS[27:30]), max_size=15),
    st.integers(0, 5),
    st.integers(0, 3),
)
def test_is_sets_agrees_with_brute_force(tiles: list[str], sets: int, wild: int) -> None:
    if max(Counter(tiles).values(), default=0) > 4:
        return
    assert is_sets(tiles, sets, wild) == reference_split(tiles, sets, 0, wild)
