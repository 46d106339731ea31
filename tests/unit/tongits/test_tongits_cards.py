"""Card notation, values and the deck (kalaro.games.cards)."""

from __future__ import annotations

import msgspec
import pytest

from kalaro.games.cards import (
    DECK,
    CardName,
    card_index,
    card_name,
    card_value,
    cards_value,
    format_cards,
    is_card,
    parse_cards,
    rank_of,
    sort_cards,
    suit_of,
)


def test_deck_is_52_distinct_cards_in_suit_then_rank_order() -> None:
    assert len(DECK) == 52
    assert len(set(DECK)) == 52
    assert DECK[:13] == tuple(
        f"{r}S" for r in ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
    )
    assert DECK[13] == "AH"
    assert DECK[26] == "AD"
    assert DECK[51] == "KC"


@pytest.mark.parametrize(
    ("name", "value"),
    [("AS", 1), ("2H", 2), ("9D", 9), ("10C", 10), ("JS", 10), ("QH", 10), ("KD", 10)],
)
def test_card_values(name: str, value: int) -> None:
    assert card_value(name) == value


def test_index_round_trip_and_rank_suit() -> None:
    for i, name in enumerate(DECK):
        assert card_index(name) == i
        assert card_name(i) == name
    assert rank_of("10D") == 9
    assert suit_of("10D") == 2
    assert rank_of("AC") == 0
    assert suit_of("KH") == 1


@pytest.mark.parametrize("bad", ["1S", "TS", "as", "AX", "11H", "", "A", 5, None])
def test_bad_notation_is_refused(bad: object) -> None:
    assert not is_card(bad)
    with pytest.raises(ValueError, match="not a card"):
        card_index(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a card"):
        card_value(bad)  # type: ignore[arg-type]


def test_parse_format_sort_and_sum() -> None:
    hand = parse_cards("KH AS 10D")
    assert hand == ("KH", "AS", "10D")
    assert parse_cards(["2C", "3C"]) == ("2C", "3C")
    assert format_cards(hand) == "KH AS 10D"
    assert sort_cards(hand) == ("AS", "KH", "10D")
    assert cards_value(hand) == 21
    with pytest.raises(ValueError):
        parse_cards("AS ZZ")
    with pytest.raises(ValueError):
        card_name(52)


def test_card_name_type_validates_on_decode() -> None:
    assert msgspec.json.decode(b'["10H","AS"]', type=list[CardName]) == ["10H", "AS"]
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'["1H"]', type=list[CardName])
