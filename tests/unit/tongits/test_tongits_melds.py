"""Melds and deadwood: what a set and a run are, and best_deadwood's exactness."""

from __future__ import annotations

from functools import cache
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kalaro.games.cards import DECK, card_value
from kalaro.games.tongits import best_deadwood, meld_kind
from kalaro.games.tongits.melds import discard_melds, four_of_a_kinds, hand_melds, layoffs
from tests.unit.tongits.tongits_helpers import cards

# Brute-force references: a third of the examples unless `make test-deep`.
_DEEP = settings.get_current_profile_name() == "deep"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("AS 2S 3S", "run"),  # aces low
        ("3S AS 2S", "run"),  # any order
        ("JH QH KH", "run"),
        ("9D 10D JD QD KD", "run"),
        ("AS 2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS", "run"),
        ("7S 7H 7D", "set"),
        ("7S 7H 7D 7C", "set"),
        ("QS KS AS", None),  # Q-K-A is not a run
        ("KS AS 2S", None),  # no wrapping
        ("2S 3S 4H", None),  # one suit
        ("2S 3S 5S", None),  # consecutive
        ("2S 3S", None),  # three or more
        ("7S 7H", None),
        ("7S 7H 8S", None),
        ("AS AS 2S", None),  # a card once
    ],
)
def test_meld_kind(text: str, kind: str | None) -> None:
    assert meld_kind(cards(text)) == kind


@pytest.mark.parametrize(
    ("text", "deadwood"),
    [
        ("AS 2S 3S 10H", 10),  # the example
        ("", 0),
        ("KS", 10),
        ("7S 7H 7D 7C", 0),
        ("QS KS AS", 21),  # no Q-K-A
        # 7H is wanted by the set and by the run: the run 6H-8H plus the set 7S 7D 7C
        ("7S 7H 7D 7C 6H 8H", 0),
        # the set of three would strand 6H 8H (14); the run keeps 7S 7D (14) either way
        ("7S 7H 7D 6H 8H", 14),
        # a set of four minus one card that goes to a run
        ("5S 5H 5D 5C 3S 4S", 0),
        ("5S 5H 5D 5C 3S 4S 3H 4H", 7),  # 3S 4S 5S + 5H 5D 5C leaves 3H 4H
        ("AS AH AD 2S 3S 2H 3H 2D 3D", 0),  # three runs, or one set of aces... both 0
        ("AS AH AD AC 2S 2H 2D 2C 3S 3H 3D 3C KS", 10),
    ],
)
def test_best_deadwood_examples(text: str, deadwood: int) -> None:
    assert best_deadwood(cards(text)) == deadwood


def test_best_deadwood_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="not a card"):
        best_deadwood(["AS", "1S"])
    with pytest.raises(ValueError, match="repeated"):
        best_deadwood(["AS", "AS"])


@cache
def _brute(hand: frozenset[str]) -> int:
    """Deadwood by trying every meld (slow, obviously right)."""
    best = sum(card_value(c) for c in hand)
    ordered = sorted(hand)
    if not ordered:
        return 0
    first = ordered[0]
    rest = frozenset(ordered[1:])
    # either the first card is deadwood, or it is in some meld drawn from the hand
    best = min(best, card_value(first) + _brute(rest))
    for size in range(3, len(ordered) + 1):
        for others in combinations(ordered[1:], size - 1):
            if meld_kind((first, *others)) is not None:
                best = min(best, _brute(rest - frozenset(others)))
    return best


hands = st.lists(st.sampled_from(DECK), min_size=0, max_size=11, unique=True)


@st.composite
def dense_hands(draw: st.DrawFn) -> list[str]:
    """Hands crowded into a few ranks, where sets and runs overlap most."""
    low = draw(st.integers(0, 9))
    pool = [DECK[suit * 13 + rank] for suit in range(4) for rank in range(low, low + 4)]
    size = draw(st.integers(3, 11))
    return draw(st.lists(st.sampled_from(pool), min_size=size, max_size=size, unique=True))


@settings(max_examples=300 if _DEEP else 100, deadline=None)
@given(hands)
def test_best_deadwood_matches_brute_force(hand: list[str]) -> None:
    assert best_deadwood(hand) == _brute(frozenset(hand))


@settings(max_examples=150 if _DEEP else 50, deadline=None)
@given(dense_hands())
def test_best_deadwood_matches_brute_force_on_dense_hands(hand: list[str]) -> None:
    assert best_deadwood(hand) == _brute(frozenset(hand))


def test_best_deadwood_matches_openspiel() -> None:
    pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel (bench extra) not installed")
    import random

    utils = pyspiel.gin_rummy.GinRummyUtils(13, 4, 20)
    suit = {"S": 0, "C": 1, "D": 2, "H": 3}  # OpenSpiel orders suits s c d h

    def index(name: str) -> int:
        return suit[name[-1]] * 13 + DECK.index(name) % 13

    rng = random.Random(7)
    for _ in range(3000):
        hand = rng.sample(DECK, rng.randint(1, 13))
        assert best_deadwood(hand) == utils.min_deadwood([index(c) for c in hand]), hand


def _subsets_that_meld(hand: list[str], extra: tuple[str, ...] = ()) -> set[frozenset[str]]:
    return {
        frozenset(group)
        for size in range(3 - len(extra), len(hand) + 1)
        for group in combinations(hand, size)
        if size >= 1 and meld_kind((*group, *extra)) is not None
    }


@settings(max_examples=200 if _DEEP else 66, deadline=None)
@given(st.lists(st.sampled_from(DECK), min_size=0, max_size=9, unique=True))
def test_hand_melds_lists_every_meld_once(hand: list[str]) -> None:
    listed = [frozenset(m) for m in hand_melds(hand)]
    assert len(listed) == len(set(listed))
    assert set(listed) == _subsets_that_meld(hand)


@settings(max_examples=300 if _DEEP else 100, deadline=None)
@given(
    st.one_of(st.lists(st.sampled_from(DECK), min_size=1, max_size=10, unique=True), dense_hands())
)
def test_discard_melds_lists_every_choice_with_two_or_more_hand_cards(hand: list[str]) -> None:
    discard, rest = hand[0], hand[1:]
    listed = [frozenset(m) for m in discard_melds(rest, discard)]
    assert len(listed) == len(set(listed))
    assert all(len(m) >= 2 for m in listed)
    expected = {g for g in _subsets_that_meld(rest, (discard,)) if len(g) >= 2}
    assert set(listed) == expected


@settings(max_examples=200 if _DEEP else 66, deadline=None)
@given(
    st.lists(st.sampled_from(DECK), min_size=4, max_size=12, unique=True),
    st.integers(0, 2**16),
)
def test_layoffs_list_every_fitting_group(pool: list[str], pick: int) -> None:
    melds = hand_melds(pool)
    if not melds:
        return
    base = melds[pick % len(melds)]
    hand = [c for c in pool if c not in base]
    kind = meld_kind(base)
    assert kind is not None
    listed = [frozenset(g) for g in layoffs(hand, base, kind)]
    assert len(listed) == len(set(listed))
    expected = {
        frozenset(g)
        for size in range(1, len(hand) + 1)
        for g in combinations(hand, size)
        if meld_kind((*base, *g)) == kind
    }
    assert set(listed) == expected


def test_four_of_a_kinds() -> None:
    assert four_of_a_kinds(cards("7S 7H 7D 7C 8S 8H 8D")) == [("7S", "7H", "7D", "7C")]
    assert four_of_a_kinds(cards("7S 7H 7D")) == []
