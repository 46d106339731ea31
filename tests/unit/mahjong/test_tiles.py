"""Tile notation, tile sets, and the winning-hand check (kalaro.games.tiles)."""

from __future__ import annotations

from collections import Counter

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kalaro.games.tiles import (
    FLOWERS,
    HONOURS,
    KINDS,
    MAHJONG_144,
    TileName,
    chow_partners,
    is_complete,
    is_tile,
    parse_tiles,
    sort_tiles,
    tile_kind_index,
    tile_set,
    waits,
)
from tests.unit.mahjong.reference import reference_is_complete

# -- notation and sets ----------------------------------------------------------------


def test_the_filipino_set_has_144_tiles_four_of_each_kind_and_eight_flowers() -> None:
    counts = Counter(MAHJONG_144)
    assert len(MAHJONG_144) == 144
    assert len(KINDS) == 34
    assert all(counts[kind] == 4 for kind in KINDS)
    assert all(counts[flower] == 1 for flower in FLOWERS)
    assert tile_set(KINDS, flowers=FLOWERS) == MAHJONG_144


def test_ka_wu_xing_set_is_built_from_the_same_module() -> None:
    kinds = [f"{r}{s}" for s in "ps" for r in range(1, 10)] + list(HONOURS[4:])
    assert len(tile_set(kinds)) == 84


def test_parse_accepts_spaced_and_compact_notation() -> None:
    assert parse_tiles("1m 2m 3m") == ("1m", "2m", "3m")
    assert parse_tiles("123m 55z 8f") == ("1m", "2m", "3m", "5z", "5z", "8f")
    assert parse_tiles(["9p", "7z"]) == ("9p", "7z")


@pytest.mark.parametrize("bad", ["0m", "8z", "9f", "1x", "m", "10m", "1M"])
def test_parse_rejects_bad_tiles(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_tiles(bad)
    assert not is_tile(bad)


def test_tile_name_annotation_validates_on_decode() -> None:
    assert msgspec.json.decode(b'"5m"', type=TileName) == "5m"
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'"5q"', type=TileName)


def test_sort_order_is_suits_then_honours_then_flowers_and_matches_the_34_array() -> None:
    assert sort_tiles(["1f", "7z", "1z", "9s", "1p", "5m"]) == ("5m", "1p", "9s", "1z", "7z", "1f")
    assert [tile_kind_index(k) for k in ("1m", "1p", "1s", "1z", "7z")] == [0, 9, 18, 27, 33]
    with pytest.raises(ValueError):
        tile_kind_index("1f")


def test_chow_partners_stay_inside_the_suit_and_never_use_honours() -> None:
    assert chow_partners("5m") == [("3m", "4m"), ("4m", "6m"), ("6m", "7m")]
    assert chow_partners("1p") == [("2p", "3p")]
    assert chow_partners("9s") == [("7s", "8s")]
    assert chow_partners("1z") == []


# -- is_complete: examples -------------------------------------------------------------


@pytest.mark.parametrize(
    ("hand", "sets", "expected"),
    [
        ("123m 456m 789m 123p 456p 11z", 5, True),  # 16-tile: five chows + pair
        ("111m 222m 333m 444z 555z 66z", 5, True),
        ("111222333m 444z 555z 66z", 5, True),  # also splits as chows
        ("111222333444555m 66z", 5, True),
        ("123m 456m 789m 123p 456p 12z", 5, False),  # honours never chow
        ("123m 456m 789m 123p 45p 11z 1s", 5, False),
        ("11m", 0, True),  # five exposed sets: the pair alone
        ("12m", 0, False),
        ("123m 44z", 1, True),
        ("123m 456m 789m 11z 222z", 4, True),  # Ka Wu Xing shape (4 sets + pair)
        ("11223344556677m", 4, True),  # seven pairs that also split into sets
        ("1133557799m 1133p", 4, False),  # seven pairs only: not a regular hand
        ("19m 19p 19s 1234567z 1m", 4, False),  # thirteen orphans: not regular
        ("789m 891m", 2, False),  # no wrapping: 8-9-1 is not a chow
        ("111m 1111m", 2, False),  # too many tiles for the sets asked
    ],
)
def test_is_complete_examples(hand: str, sets: int, expected: bool) -> None:
    assert is_complete(parse_tiles(hand), sets) is expected


@pytest.mark.parametrize(
    ("hand", "sets", "wild", "expected"),
    [
        ("123m 456m 789m 123p 456p 1z", 5, 1, True),  # the wild pairs the 1z
        ("123m 456m 789m 123p 45p 11z", 5, 1, True),  # the wild finishes 456p
        ("13m 456m 789m 123p 456p 11z", 5, 1, True),  # ... or the closed 2m
        ("1m 9p 5s 1z 2z", 2, 3, False),  # five strangers, three wilds
        ("1m 1z", 1, 3, True),  # 1m + 2 wilds pong, 1z + wild pair
        ("", 5, 17, True),  # wilds alone make anything
        ("1z 2z", 0, 0, False),
        ("1m 5m 9m", 1, 2, False),  # three far-apart tiles cannot share one set
    ],
)
def test_is_complete_with_wilds(hand: str, sets: int, wild: int, expected: bool) -> None:
    assert is_complete(parse_tiles(hand), sets, wild) is expected


def test_is_complete_rejects_flowers_and_bad_arguments() -> None:
    with pytest.raises(ValueError, match="flowers"):
        is_complete(parse_tiles("123m 1f 1z"), 1)
    with pytest.raises(ValueError):
        is_complete(["5m", "bogus"], 0)
    with pytest.raises(ValueError):
        is_complete([], -1)


@pytest.mark.parametrize(
    ("hand", "sets", "wild"),
    [("11111111m", 2, 0), ("111111111m 22z", 3, 0), ("11111111m 1z", 3, 0), ("1111111m", 2, 1)],
)
def test_is_complete_is_exact_beyond_four_of_a_kind(hand: str, sets: int, wild: int) -> None:
    # Not a real hand, but the answer must still be right (packed counts would overflow).
    tiles = list(parse_tiles(hand))
    assert is_complete(tiles, sets, wild) == reference_is_complete(tiles, sets, wild)


def test_is_complete_accepts_any_iterable() -> None:
    assert is_complete(iter(parse_tiles("123m 44z")), 1)


# -- is_complete: against an exhaustive reference --------------------------------------

# Hands drawn from a few kinds at a time, so complete hands are common.
_kind_pools = st.lists(st.sampled_from(KINDS), min_size=1, max_size=8, unique=True)


@st.composite
def _hands(draw: st.DrawFn) -> tuple[list[str], int, int]:
    sets = draw(st.integers(0, 5))
    wild = draw(st.sampled_from([0, 0, 0, 1, 2, 3]))
    size = max(0, 3 * sets + 2 - wild + draw(st.sampled_from([0, 0, 0, 0, -1, 1])))
    kinds = draw(_kind_pools)
    pool = [k for k in kinds for _ in range(4)]
    picked = draw(st.permutations(pool))[: min(size, len(pool))]
    return list(picked), sets, wild


# an exhaustive reference per example: a short run unless `make test-deep`
@settings(
    max_examples=1500 if settings.get_current_profile_name() == "deep" else 150, deadline=None
)
@given(_hands())
def test_is_complete_agrees_with_the_exhaustive_reference(case: tuple[list[str], int, int]) -> None:
    hand, sets, wild = case
    assert is_complete(hand, sets, wild) == reference_is_complete(hand, sets, wild)


@settings(max_examples=300 if settings.get_current_profile_name() == "deep" else 100, deadline=None)
@given(_hands())
def test_is_complete_ignores_tile_order(case: tuple[list[str], int, int]) -> None:
    hand, sets, wild = case
    assert is_complete(hand, sets, wild) == is_complete(list(reversed(hand)), sets, wild)


# -- waits --------------------------------------------------------------------------


def test_waits_of_the_nine_gates_are_every_character() -> None:
    assert waits(parse_tiles("1112345678999m"), sets=4) == [f"{r}m" for r in range(1, 10)]


def test_waits_examples() -> None:
    assert waits(parse_tiles("123m 456m 789m 123p 456p 1z")) == ["1z"]  # pair wait
    assert waits(parse_tiles("123m 456m 789m 123p 46p 11z")) == ["5p"]  # closed wait
    assert waits(parse_tiles("123m 456m 789m 123p 45p 11z")) == ["3p", "6p"]  # open wait
    assert waits(parse_tiles("123m 456m 789m 123p 456p 2z")) == ["2z"]
    assert waits(parse_tiles("123m 456m 789m 123p 456p 12z")) == []  # wrong size
    # Holding all four 1z: a fifth does not exist, so 1z is no wait.
    assert waits(parse_tiles("1111z 2223z"), sets=2) == []


def test_waits_with_a_wild_include_any_tile_for_a_lone_pair_wait() -> None:
    # 4 complete sets + 1 wild: the wild pairs with whatever comes.
    assert waits(parse_tiles("123m 456m 789m 123p"), sets=4, wild=1) == list(KINDS)


@settings(max_examples=300 if settings.get_current_profile_name() == "deep" else 100, deadline=None)
@given(_hands())
def test_waits_are_exactly_the_kinds_that_complete(case: tuple[list[str], int, int]) -> None:
    hand, sets, wild = case
    hand = hand[: max(0, 3 * sets + 1 - wild)]
    if len(hand) + wild != 3 * sets + 1:
        assert waits(hand, sets, wild) == []
        return
    held = Counter(hand)
    expected = [k for k in KINDS if held[k] < 4 and is_complete([*hand, k], sets, wild)]
    assert waits(hand, sets, wild) == expected
