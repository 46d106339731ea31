"""Views and events: what each seat and the audience may see; messages serialise."""

from __future__ import annotations

import random

import msgspec
import pytest

from kalaro.games.base import IllegalAction
from kalaro.games.tongits import (
    ACTION_JSON_DECODER,
    ACTION_MSGPACK_DECODER,
    EVENT_JSON_DECODER,
    CallDraw,
    Discard,
    Draw,
    ExposeSecretSet,
    Fight,
    Fold,
    LayOff,
    Meld,
    SecretSetExposed,
    State,
    TakeDiscard,
    TimeOut,
    View,
    apply,
    decode_action,
    event_for,
    is_over,
    legal_actions,
    new_hand,
    to_act,
    view,
)
from tests.unit.tongits.tongits_helpers import CLASSIC, KALARO, meld, play, table


def _secret() -> tuple[State, list[object]]:
    state = table(
        CLASSIC,
        hands=["9S 9H 9D 9C 2S KD", "AC 4C", "AD 2D"],
        melds=[meld(0, 1, "JH QH KH")],
        turn=0,
        phase="play",
    )
    new, events = apply(state, 0, ExposeSecretSet(("9C", "9S", "9D", "9H")))
    return new, list(events)


def test_a_seat_sees_its_own_hand_and_only_the_sizes_of_others() -> None:
    state = new_hand(KALARO, b"views", dealer=0)
    for seat in range(3):
        v = view(state, seat)
        assert v.seat == seat
        assert v.hand == state.hands[seat]
        assert v.hand_sizes == (13, 12, 12)
        assert v.stock_count == 15
        assert v.turn == 0
        encoded = msgspec.json.encode(v).decode()
        for other in range(3):
            if other != seat:
                # no card of another hand appears anywhere in this seat's view
                assert not any(f'"{c}"' in encoded for c in state.hands[other])


def test_the_audience_sees_no_hand_and_no_legal_actions() -> None:
    state = new_hand(KALARO, b"views", dealer=0)
    v = view(state, None)
    assert v.hand == ()
    assert v.legal == ()
    assert v.result is None
    encoded = msgspec.json.encode(v).decode()
    assert not any(f'"{c}"' in encoded for h in state.hands for c in h)
    assert not any(f'"{c}"' in encoded for c in state.stock)
    with pytest.raises(ValueError, match="seats"):
        view(state, 3)


def test_view_lists_the_same_legal_actions_as_the_engine() -> None:
    state = new_hand(CLASSIC, b"views", dealer=1)
    assert list(view(state, 1).legal) == legal_actions(state, 1)
    assert view(state, 0).legal == ()


def test_a_secret_set_is_face_down_for_others_until_the_end() -> None:
    state, events = _secret()
    mine = view(state, 0).melds[1]
    assert (mine.face_down, mine.cards, mine.size) == (True, ("9S", "9H", "9D", "9C"), 4)
    for seat in (1, 2, None):
        theirs = view(state, seat).melds[1]
        assert (theirs.face_down, theirs.cards, theirs.size, theirs.owner) == (True, (), 4, 0)
        assert view(state, seat).opened == (True, True, False)
    event = events[0]
    assert isinstance(event, SecretSetExposed)
    assert event_for(event, 0) == event
    assert event_for(event, 1) == SecretSetExposed(seat=0, meld_id=1, cards=())
    assert event_for(event, None) == SecretSetExposed(seat=0, meld_id=1, cards=())
    # nothing can be laid off on it; at the end everyone sees it
    with pytest.raises(IllegalAction) as err:
        apply(state, 0, LayOff(cards=("2S",), meld_id=1))
    assert err.value.code == "invalid_lay_off"
    assert not any(isinstance(a, LayOff) and a.meld_id == 1 for a in legal_actions(state, 0))
    state, _ = apply(state, 0, Discard("KD"))
    state, _ = apply(state, 1, CallDraw())
    state, _ = apply(state, 0, Fold())
    assert state.result is not None
    assert view(state, 2).melds[1].cards == ("9S", "9H", "9D", "9C")


def test_secret_set_exposure_is_offered_and_checked() -> None:
    state = table(CLASSIC, hands=["9S 9H 9D 9C 2S", "AC", "AD"], turn=0, phase="play")
    assert ExposeSecretSet(("9S", "9H", "9D", "9C")) in legal_actions(state, 0)
    for bad in (("9S", "9H", "9D"), ("9S", "9H", "9D", "2S")):
        with pytest.raises(IllegalAction) as err:
            apply(state, 0, ExposeSecretSet(bad))
        assert err.value.code == "invalid_meld"


def test_a_finished_hand_reveals_every_hand_in_every_view() -> None:
    final, _ = play(CLASSIC, b"reveal", random.Random(3))
    for seat in (0, 1, 2, None):
        v = view(final, seat)
        assert v.result is not None
        assert v.result.hands == final.hands
        assert v.legal == ()
        assert v.to_act == ()


def test_every_action_round_trips_through_both_decoders() -> None:
    actions = [
        Draw(),
        TakeDiscard(("5H", "6H")),
        Meld(("AS", "2S", "3S")),
        ExposeSecretSet(("9S", "9H", "9D", "9C")),
        LayOff(cards=("10H",), meld_id=3),
        Discard("KC"),
        CallDraw(),
        Fight(),
        Fold(),
        TimeOut(),
    ]
    for action in actions:
        assert ACTION_JSON_DECODER.decode(msgspec.json.encode(action)) == action
        assert ACTION_MSGPACK_DECODER.decode(msgspec.msgpack.encode(action)) == action
    assert msgspec.json.encode(LayOff(cards=("10H",), meld_id=3)) == (
        b'{"type":"lay_off","cards":["10H"],"meld_id":3}'
    )
    assert decode_action(b'{"type":"time_out"}') == TimeOut()
    for bad in (b'{"type":"cheat"}', b'{"type":"discard","card":"1H"}', b'{"type":"discard"}'):
        with pytest.raises(msgspec.ValidationError):
            decode_action(bad)


def test_states_views_and_events_round_trip() -> None:
    rng = random.Random(11)
    state = new_hand(CLASSIC, b"wire")
    for _ in range(12):
        if is_over(state):
            break
        seat = to_act(state)[0]
        acts = legal_actions(state, seat)
        state, events = apply(state, seat, rng.choice(acts))
        assert msgspec.json.decode(msgspec.json.encode(state), type=State) == state
        assert msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=State) == state
        for seat_view in (0, 1, 2, None):
            v = view(state, seat_view)
            assert msgspec.json.decode(msgspec.json.encode(v), type=View) == v
        for event in events:
            assert EVENT_JSON_DECODER.decode(msgspec.json.encode(event)) == event
