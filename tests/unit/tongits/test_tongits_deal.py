"""The deal: 13/12/12 from a seeded shuffle, the stock, the first dealer, no first draw."""

from __future__ import annotations

import pytest

from kalaro.games.base import IllegalAction, pick, shuffled
from kalaro.games.cards import DECK
from kalaro.games.tongits import (
    Discard,
    Draw,
    Timer,
    apply,
    legal_actions,
    new_hand,
    pending_timer,
    result,
    to_act,
)
from tests.unit.tongits.tongits_helpers import KALARO, all_cards


@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_dealer_gets_13_others_12_and_15_in_the_stock(dealer: int) -> None:
    state = new_hand(KALARO, b"seed", dealer)
    assert state.dealer == dealer
    assert [len(h) for h in state.hands] == [13 if s == dealer else 12 for s in range(3)]
    assert len(state.stock) == 15
    assert state.discards == ()
    assert sorted(all_cards(state)) == sorted(DECK)


def test_deal_follows_the_documented_order() -> None:
    seed = b"verify me"
    deck = shuffled(DECK, seed)
    state = new_hand(KALARO, seed, dealer=1)
    for i in range(36):
        assert deck[i] in state.hands[(1 + i) % 3]
    assert deck[36] in state.hands[1]
    assert state.stock == tuple(deck[37:])  # card 37 on top


def test_same_seed_same_deal_other_seed_other_deal() -> None:
    assert new_hand(KALARO, b"a", 0) == new_hand(KALARO, b"a", 0)
    assert new_hand(KALARO, b"a", 0).hands != new_hand(KALARO, b"b", 0).hands


def test_first_dealer_is_picked_from_the_seed() -> None:
    dealers = set()
    for n in range(30):
        seed = n.to_bytes(2, "big")
        state = new_hand(KALARO, seed)
        assert state.dealer == pick(seed, "dealer", 3)
        dealers.add(state.dealer)
    assert dealers == {0, 1, 2}


def test_bad_dealer_is_refused() -> None:
    with pytest.raises(ValueError, match="dealer"):
        new_hand(KALARO, b"x", 3)


def test_dealer_plays_first_without_drawing() -> None:
    state = new_hand(KALARO, b"seed", dealer=2)
    assert state.turn == 2
    assert to_act(state) == [2]
    assert state.phase == "play"
    actions = legal_actions(state, 2)
    assert Draw() not in actions
    assert {a.card for a in actions if isinstance(a, Discard)} == set(state.hands[2])
    with pytest.raises(IllegalAction) as err:
        apply(state, 2, Draw())
    assert err.value.code == "already_drew"
    assert result(state) is None
    # the dealer's first turn (turn 0) is on the clock like any other
    assert pending_timer(state) == Timer(kind="turn", seats=(2,), seconds=30, opened_at=0)


def test_after_the_dealers_discard_the_next_seat_draws() -> None:
    state = new_hand(KALARO, b"seed", dealer=2)
    card = state.hands[2][0]
    state, _ = apply(state, 2, Discard(card))
    assert state.turn == 0
    assert state.phase == "start"
    assert state.discards == (card,)
    assert len(state.hands[2]) == 12
    assert Draw() in legal_actions(state, 0)
    assert legal_actions(state, 1) == []
    assert legal_actions(state, 2) == []
