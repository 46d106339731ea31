"""A turn: draw or take the discard, meld, lay off (sapaw), discard; Tongits; stock out."""

from __future__ import annotations

import pytest

from kalaro.games.base import IllegalAction
from kalaro.games.tongits import (
    Action,
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
    Discard,
    DiscardTaken,
    Draw,
    ExposeSecretSet,
    HandEnded,
    LayOff,
    Meld,
    MeldExposed,
    State,
    TakeDiscard,
    apply,
    event_for,
    legal_actions,
)
from tests.unit.tongits.tongits_helpers import CLASSIC, cards, meld, table


def _code(state: State, seat: int, action: Action) -> str:
    with pytest.raises(IllegalAction) as err:
        apply(state, seat, action)
    return err.value.code


def _start() -> State:
    """Seat 0 to start a turn; 7H is the top discard."""
    return table(
        hands=["5H 6H 9S 9D KC 2C", "AS 2S 3S 4D 5D QC QD", "8H 8C 10S JS 4C 6C 7C"],
        discards="3C 7H",
        turn=0,
    )


# -- drawing ------------------------------------------------------------------------


def test_draw_takes_the_top_of_the_stock_and_only_the_drawer_sees_it() -> None:
    state = _start()
    top = state.stock[0]
    new, events = apply(state, 0, Draw())
    assert top in new.hands[0]
    assert new.stock == state.stock[1:]
    assert new.phase == "play"
    assert events == [CardDrawn(seat=0, card=top, stock_left=len(state.stock) - 1)]
    assert event_for(events[0], 0) == events[0]
    assert event_for(events[0], 1) == CardDrawn(seat=0, card=None, stock_left=len(new.stock))
    assert event_for(events[0], None) == CardDrawn(seat=0, card=None, stock_left=len(new.stock))


def test_start_of_turn_offers_draw_and_each_discard_meld() -> None:
    actions = legal_actions(_start(), 0)
    assert Draw() in actions
    takes = {frozenset(a.cards) for a in actions if isinstance(a, TakeDiscard)}
    assert takes == {frozenset({"5H", "6H"})}
    # not opened: no Draw call; and nothing but draw/take at the start of a turn
    assert all(isinstance(a, Draw | TakeDiscard) for a in actions)


def test_take_discard_exposes_a_new_meld_at_once() -> None:
    state = _start()
    new, events = apply(state, 0, TakeDiscard(("6H", "5H")))
    assert new.discards == ("3C",)
    assert new.hands[0] == cards("9S 9D 2C KC")
    (m,) = new.melds
    assert (m.owner, m.kind, m.cards, m.from_discard) == (0, "run", cards("5H 6H 7H"), "7H")
    assert m.placed_by == (0, 0, 0)
    assert new.phase == "play"
    assert events == [DiscardTaken(seat=0, card="7H", cards=cards("5H 6H 7H"), meld_id=0)]


@pytest.mark.parametrize(
    ("hand_cards", "code"),
    [
        (("5H",), "invalid_meld"),  # 2+ hand cards
        ((), "invalid_meld"),
        (("9S", "9D"), "invalid_meld"),  # not a meld with 7H
        (("5H", "6H", "9S"), "invalid_meld"),
        (("5H", "4H"), "card_not_in_hand"),
        (("5H", "5H"), "duplicate_cards"),
        (("5H", "XX"), "invalid_card"),
    ],
)
def test_take_discard_refusals(hand_cards: tuple[str, ...], code: str) -> None:
    assert _code(_start(), 0, TakeDiscard(hand_cards)) == code


def test_the_discard_cannot_be_taken_to_lay_off() -> None:
    # seat 0 has 8H 9H 10H exposed; 7H would extend it but hand has no 7H partner cards
    state = table(
        hands=["9S 9D KC 2C", "AS 2S 3S 4D", "8C 10S JS 4C"],
        melds=[meld(0, 0, "8H 9H 10H")],
        discards="7H",
    )
    assert not any(isinstance(a, TakeDiscard) for a in legal_actions(state, 0))
    assert _code(state, 0, TakeDiscard(())) == "invalid_meld"


def test_only_the_top_discard_can_be_taken() -> None:
    state = table(hands=["3S 3H 9D", "AS 2S", "8C 10S"], discards="3D 7H")
    assert not any(isinstance(a, TakeDiscard) for a in legal_actions(state, 0))
    assert _code(state, 0, TakeDiscard(("3S", "3H"))) == "invalid_meld"


def test_take_discard_needs_a_discard() -> None:
    state = table(hands=["3S 3H 9D", "AS 2S", "8C 10S"])
    assert _code(state, 0, TakeDiscard(("3S", "3H"))) == "no_discard"


def test_taking_the_discard_into_a_set_of_four_is_face_up() -> None:
    state = table(CLASSIC, hands=["9S 9H 9D 2C", "AS 2S", "8C 10S"], discards="9C")
    takes = {frozenset(a.cards) for a in legal_actions(state, 0) if isinstance(a, TakeDiscard)}
    assert takes == {frozenset(cards(text)) for text in ("9S 9H", "9S 9D", "9H 9D", "9S 9H 9D")}
    new, _ = apply(state, 0, TakeDiscard(("9S", "9H", "9D")))
    assert new.melds[0].cards == cards("9S 9H 9D 9C")
    assert not new.melds[0].face_down


# -- the order of a turn and whose turn it is ------------------------------------------


def test_draw_first_then_play() -> None:
    state = _start()
    assert _code(state, 0, Meld(("5H", "6H", "7H"))) == "must_draw_first"
    assert _code(state, 0, Discard("KC")) == "must_draw_first"
    assert _code(state, 0, LayOff(cards=("KC",), meld_id=0)) == "must_draw_first"
    drawn, _ = apply(state, 0, Draw())
    assert _code(drawn, 0, Draw()) == "already_drew"
    assert _code(drawn, 0, TakeDiscard(("5H", "6H"))) == "already_drew"


def test_only_the_seat_to_play_may_act() -> None:
    state = _start()
    assert _code(state, 1, Draw()) == "not_your_turn"
    assert _code(state, 2, Discard("8H")) == "not_your_turn"
    assert _code(state, 3, Draw()) == "invalid_seat"
    assert legal_actions(state, 1) == []


def test_an_unknown_action_is_refused() -> None:
    class Dance(Action, frozen=True, tag="dance"):
        pass

    assert _code(_start(), 0, Dance()) == "unknown_action"


# -- melding ---------------------------------------------------------------------------


def _playing() -> State:
    """Seat 1 after drawing; seat 0 has a run of hearts exposed."""
    return table(
        hands=["9S 9D KC 2C", "AS 2S 3S 4S 8H 9H 7D 7S 7C QC", "10S JS 4C 6C 5C"],
        melds=[meld(0, 0, "5H 6H 7H")],
        discards="3C",
        turn=1,
        phase="play",
    )


def test_meld_from_hand() -> None:
    state = _playing()
    new, events = apply(state, 1, Meld(("3S", "AS", "2S")))
    assert new.melds[1].cards == cards("AS 2S 3S")
    assert new.melds[1].kind == "run"
    assert "AS" not in new.hands[1]
    assert events == [MeldExposed(seat=1, meld_id=1, kind="run", cards=cards("AS 2S 3S"))]
    assert new.opened(1)
    assert not state.opened(1)


@pytest.mark.parametrize(
    ("meld_cards", "code"),
    [
        (("AS", "2S"), "invalid_meld"),
        (("QC", "AS", "2S"), "invalid_meld"),
        (("7D", "7S", "8H"), "invalid_meld"),
        (("7D", "7S", "7H"), "card_not_in_hand"),  # 7H is on the table
    ],
)
def test_meld_refusals(meld_cards: tuple[str, ...], code: str) -> None:
    assert _code(_playing(), 1, Meld(meld_cards)) == code


def test_legal_melds_are_every_meld_in_hand() -> None:
    melds = {frozenset(a.cards) for a in legal_actions(_playing(), 1) if isinstance(a, Meld)}
    assert melds == {
        frozenset(cards(text)) for text in ("AS 2S 3S", "2S 3S 4S", "AS 2S 3S 4S", "7D 7S 7C")
    }


def test_secret_sets_are_off_on_kalaro_tables() -> None:
    state = table(hands=["9S 9H 9D 9C 2C", "AS", "8C"], turn=0, phase="play")
    assert not any(isinstance(a, ExposeSecretSet) for a in legal_actions(state, 0))
    assert _code(state, 0, ExposeSecretSet(cards("9S 9H 9D 9C"))) == "secret_sets_off"


# -- laying off (sapaw) ---------------------------------------------------------------


def test_lay_off_on_an_opponents_meld() -> None:
    state = _playing()
    new, events = apply(state, 1, LayOff(cards=("9H", "8H"), meld_id=0))
    assert new.melds[0].cards == cards("5H 6H 7H 8H 9H")
    assert new.melds[0].placed_by == (0, 0, 0, 1, 1)
    assert new.melds[0].owner == 0
    assert events == [CardsLaidOff(seat=1, meld_id=0, owner=0, cards=cards("8H 9H"))]
    assert new.sapawed == (True, False, False)
    assert not new.own_sapaw
    # laying off does not open a hand
    assert not new.opened(1)


def test_lay_off_on_ones_own_meld_and_at_the_low_end() -> None:
    state = table(
        hands=["3H 4H 10H 2C", "AS 2S", "8C 10S"],
        melds=[meld(0, 0, "5H 6H 7H")],
        turn=0,
        phase="play",
    )
    new, _ = apply(state, 0, LayOff(cards=("4H", "3H"), meld_id=0))
    assert new.melds[0].cards == cards("3H 4H 5H 6H 7H")
    assert new.own_sapaw
    assert new.sapawed == (False, False, False)


@pytest.mark.parametrize(
    ("lay", "meld_id", "code"),
    [
        (("9H",), 0, "invalid_lay_off"),  # 8H missing in between
        (("7D",), 0, "invalid_lay_off"),
        ((), 0, "invalid_lay_off"),
        (("8H",), 5, "unknown_meld"),
        (("8H",), -1, "unknown_meld"),
        (("4H",), 0, "card_not_in_hand"),
    ],
)
def test_lay_off_refusals(lay: tuple[str, ...], meld_id: int, code: str) -> None:
    assert _code(_playing(), 1, LayOff(cards=lay, meld_id=meld_id)) == code


def test_lay_off_the_fourth_card_of_a_set() -> None:
    state = table(
        hands=["2C 3D", "9C 5D", "8C 10S"],
        melds=[meld(0, 0, "9S 9H 9D")],
        turn=1,
        phase="play",
    )
    assert LayOff(cards=("9C",), meld_id=0) in legal_actions(state, 1)
    new, _ = apply(state, 1, LayOff(cards=("9C",), meld_id=0))
    assert new.melds[0].cards == cards("9S 9H 9D 9C")


def test_legal_lay_offs_list_every_group_on_every_meld() -> None:
    lays = {
        (frozenset(a.cards), a.meld_id)
        for a in legal_actions(_playing(), 1)
        if isinstance(a, LayOff)
    }
    assert lays == {(frozenset({"8H"}), 0), (frozenset({"8H", "9H"}), 0)}


# -- discarding -------------------------------------------------------------------------


def test_discard_ends_the_turn() -> None:
    state = _playing()
    new, events = apply(state, 1, Discard("QC"))
    assert new.discards == ("3C", "QC")
    assert "QC" not in new.hands[1]
    assert (new.turn, new.phase) == (2, "start")
    assert events == [CardDiscarded(seat=1, card="QC")]


@pytest.mark.parametrize(("card", "code"), [("KH", "card_not_in_hand"), ("1S", "invalid_card")])
def test_discard_refusals(card: str, code: str) -> None:
    assert _code(_playing(), 1, Discard(card)) == code


# -- Tongits: the moment a hand is empty -------------------------------------------------


def _ended(events: list[object]) -> HandEnded:
    last = events[-1]
    assert isinstance(last, HandEnded)
    return last


def test_tongits_by_melding_the_last_cards() -> None:
    state = table(hands=["2S 3S 4S", "AS 2H", "8C 10S"], turn=0, phase="play", dealer=2)
    new, events = apply(state, 0, Meld(cards("2S 3S 4S")))
    assert new.phase == "over"
    result = _ended(events).result
    assert (result.ending, result.winners, result.next_dealer) == ("tongits", (0,), 0)
    assert new.result == result


def test_tongits_with_a_final_discard() -> None:
    state = table(
        hands=["KC", "AS 2H", "8C 10S"], melds=[meld(0, 0, "2S 3S 4S")], turn=0, phase="play"
    )
    new, events = apply(state, 0, Discard("KC"))
    assert _ended(events).result.ending == "tongits"
    assert new.discards[-1] == "KC"


def test_tongits_by_laying_off_the_last_card() -> None:
    state = table(
        hands=["8H", "AS 2H 5C", "8C 10S"],
        melds=[meld(0, 0, "2S 3S 4S"), meld(1, 1, "5H 6H 7H")],
        turn=0,
        phase="play",
    )
    _, events = apply(state, 0, LayOff(cards=("8H",), meld_id=1))
    assert _ended(events).result.winners == (0,)


def test_tongits_by_taking_the_discard() -> None:
    state = table(hands=["5H 6H", "AS 2H 5C", "8C 10S"], discards="7H", turn=0)
    _, events = apply(state, 0, TakeDiscard(("5H", "6H")))
    assert _ended(events).result.ending == "tongits"


def test_nothing_is_accepted_after_the_hand_ends() -> None:
    state = table(hands=["2S 3S 4S", "AS 2H", "8C 10S"], turn=0, phase="play")
    over, _ = apply(state, 0, Meld(cards("2S 3S 4S")))
    assert legal_actions(over, 1) == []
    assert _code(over, 1, Draw()) == "hand_over"
    assert _code(over, 0, Discard("AS")) == "hand_over"


# -- stock out ---------------------------------------------------------------------------


def test_the_last_drawer_finishes_the_turn_then_the_hand_ends() -> None:
    state = table(
        hands=["2S 3S 4S KC QC", "AS 2H", "8C 10S"],
        melds=[meld(0, 1, "7D 8D 9D")],
        stock="5S",
        turn=0,
    )
    drawn, _ = apply(state, 0, Draw())
    assert drawn.stock == ()
    assert drawn.last_drawer == 0
    assert drawn.phase == "play"  # not over yet: the turn is finished first
    melded, _ = apply(drawn, 0, Meld(cards("2S 3S 4S 5S")))
    assert melded.phase == "play"
    over, events = apply(melded, 0, Discard("QC"))
    result = _ended(events).result
    assert result.ending == "stock_out"
    assert result.last_drawer == 0
    # seat 0 has KC (10) left, seat 1 AS 2H (3): seat 1 wins though it did not draw last
    assert result.deadwood == (10, 3, 18)
    assert result.winners == (1,)
    assert over.phase == "over"


def test_the_last_drawer_can_still_go_tongits() -> None:
    state = table(hands=["2S 3S 4S", "AS 2H", "8C 10S"], melds=[meld(0, 1, "7D 8D 9D")], stock="5S")
    drawn, _ = apply(state, 0, Draw())
    _, events = apply(drawn, 0, Meld(cards("2S 3S 4S 5S")))
    assert _ended(events).result.ending == "tongits"
