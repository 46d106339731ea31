"""Playing cards: the notation every message uses, card values, and the 52-card deck.

A card is written rank then suit: ``AS 2H … 10D JC QS KH`` (ranks ``A 2 … 10 J Q K``,
suits ``S H D C``). Clients only ever see that notation. Engines may work with the
card's index, ``suit * 13 + rank`` (rank 0 is the ace), which is also the card's
position in :data:`DECK`, the order the seeded shuffle starts from:
``AS 2S … KS AH … KH AD … KD AC … KC``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated

import msgspec

RANKS: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS: tuple[str, ...] = ("S", "H", "D", "C")

#: A card in notation, checked when a message is decoded (e.g. an action from a client).
CardName = Annotated[str, msgspec.Meta(pattern=r"^(A|[2-9]|10|J|Q|K)[SHDC]$")]

#: The 52 cards in index order; the seeded shuffle starts from this order.
DECK: tuple[str, ...] = tuple(rank + suit for suit in SUITS for rank in RANKS)

_INDEX: dict[str, int] = {name: i for i, name in enumerate(DECK)}


def rank_value(rank: int) -> int:
    """Points of a rank index: ace 1, two to ten face value, jack queen king 10."""
    return min(rank + 1, 10)


_VALUE: dict[str, int] = {name: rank_value(i % 13) for i, name in enumerate(DECK)}


def is_card(name: object) -> bool:
    """Whether ``name`` is a card in notation (``"10D"`` yes, ``"1D"``/``"TD"``/``"ad"`` no)."""
    return isinstance(name, str) and name in _INDEX


def card_index(name: str) -> int:
    """The index ``suit * 13 + rank`` of a card; ``ValueError`` for bad notation."""
    try:
        return _INDEX[name]
    except (KeyError, TypeError):
        raise ValueError(f"not a card: {name!r} (write rank then suit, e.g. 'AS', '10H')") from None


def card_name(index: int) -> str:
    """The notation of a card index (inverse of :func:`card_index`)."""
    if not 0 <= index < 52:
        raise ValueError(f"card index out of range: {index}")
    return DECK[index]


def parse_cards(text: str | Iterable[str]) -> tuple[str, ...]:
    """Cards from ``"AS 2S 3S"`` or an iterable of names, validated, in the given order."""
    names = text.split() if isinstance(text, str) else list(text)
    for name in names:
        card_index(name)
    return tuple(names)


def format_cards(cards: Iterable[str]) -> str:
    """Cards as a space-separated string, in the given order."""
    return " ".join(cards)


def rank_of(name: str) -> int:
    """Rank index 0..12 (ace 0, king 12)."""
    return card_index(name) % 13


def suit_of(name: str) -> int:
    """Suit index 0..3 in the order S H D C."""
    return card_index(name) // 13


def card_value(name: str) -> int:
    """Points of a card: ace 1, two to ten face value, jack queen king 10."""
    try:
        return _VALUE[name]
    except (KeyError, TypeError):
        raise ValueError(f"not a card: {name!r}") from None


def cards_value(cards: Iterable[str]) -> int:
    """Sum of the points of ``cards``."""
    return sum(card_value(name) for name in cards)


def sort_cards(cards: Iterable[str]) -> tuple[str, ...]:
    """Cards in deck order: by suit (S H D C), then by rank, ace first."""
    return tuple(sorted(cards, key=card_index))
