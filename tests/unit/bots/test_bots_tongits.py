"""The smart Tongits bot: what it does in hand-built spots, and that it always answers.

States are built by hand (the engine's own ``State``) and the bot is given
``view(state, seat)``, exactly what a bot at a live table receives.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import msgspec
import pytest

from kalaro.bots import RandomPolicy
from kalaro.bots.tongits import SmartTongits
from kalaro.games.cards import DECK, card_index
from kalaro.games.tongits import (
    CallDraw,
    Discard,
    Draw,
    Fight,
    Fold,
    LayOff,
    Meld,
    Options,
    State,
    TableMeld,
    TakeDiscard,
    View,
    apply,
    is_over,
    meld_kind,
    new_hand,
    options_for,
    to_act,
    view,
)

KALARO = options_for("kalaro")
CLASSIC = options_for("classic")
SMART = SmartTongits()


def _cards(text: str) -> tuple[str, ...]:
    return tuple(sorted(text.split(), key=card_index))


def _meld(owner: int, text: str) -> TableMeld:
    cards = _cards(text)
    kind = meld_kind(cards)
    assert kind is not None
    return TableMeld(id=0, owner=owner, kind=kind, cards=cards, placed_by=(owner,) * len(cards))


def _state(
    hands: Sequence[str],
    *,
    phase: str = "play",
    turn: int = 0,
    melds: Sequence[TableMeld] = (),
    discards: str = "",
    options: Options = KALARO,
) -> State:
    placed = {c for h in hands for c in h.split()} | set(discards.split())
    placed |= {c for m in melds for c in m.cards}
    return State(
        options=options,
        dealer=0,
        turn=turn,
        phase=phase,  # type: ignore[arg-type]
        hands=tuple(_cards(h) for h in hands),
        stock=tuple(c for c in DECK if c not in placed)[:10],
        discards=tuple(discards.split()),
        melds=tuple(msgspec.structs.replace(m, id=i) for i, m in enumerate(melds)),
    )


def _choose(state: State, seat: int = 0) -> object:
    seen = view(state, seat)
    action = SMART.choose(seen, random.Random(0))
    assert action in seen.legal
    return action


def test_calls_draw_when_no_opponent_can_fight() -> None:
    # opened, and neither opponent has a meld down: burned players cannot fight
    state = _state(
        ["KS QH JD 10C 9S", "AS 2H 3D 4C 5S 6H 7D 8C 9H 10S 2C", "AH 2D 3C 4S 5H 6D 7C 8S 9D 10H"],
        phase="start",
        melds=[_meld(0, "5D 5C 5H")],
    )
    assert _choose(state) == CallDraw()


def test_does_not_call_draw_with_high_deadwood_against_an_opened_opponent() -> None:
    # seat 1 holds three cards and shows a meld: our 66 points would lose a fight
    state = _state(
        ["KS QH JD 10C 9S 9C 8D", "AS 2H 3D", "AH 2D 3C 4S 5H 6D 7C 9D 10H JH"],
        phase="start",
        melds=[_meld(0, "5D 5C 5H"), _meld(1, "6S 7S 8S")],
    )
    assert _choose(state) == Draw()


def test_takes_a_discard_that_makes_a_meld() -> None:
    state = _state(
        ["9S 9H 2C 4D KH QC JS 6H 3S AC 8D 7C", "2S", "3H"], phase="start", discards="5C 9D"
    )
    assert _choose(state) == TakeDiscard(("9S", "9H"))


def test_draws_when_the_discard_makes_no_meld() -> None:
    state = _state(["9S 9H 2C 4D KH QC", "2S", "3H"], phase="start", discards="5C")
    assert _choose(state) == Draw()


def test_goes_tongits_when_the_hand_can_empty() -> None:
    state = _state(["4H 5H 6H", "2S", "3H"])
    assert _choose(state) == Meld(("4H", "5H", "6H"))


def test_lays_off_deadwood_then_exposes_melds() -> None:
    state = _state(
        ["7H KC 2D 2S 2C 9D", "AS", "3H"],
        melds=[_meld(1, "4H 5H 6H")],
    )
    assert _choose(state) == LayOff(cards=("7H",), meld_id=0)
    state = _state(["KC 2D 2S 2C 9D", "AS", "3H"], melds=[_meld(1, "4H 5H 6H")])
    assert _choose(state) == Meld(("2S", "2D", "2C"))


def test_discards_the_highest_card_that_is_no_use() -> None:
    # KD is high and alone; 4S/5S is a near-run and 9H/9C a pair worth keeping
    state = _state(["4S 5S 9H 9C KD 2D", "AS", "3H"])
    assert _choose(state) == Discard("KD")


def test_exposes_a_concealed_meld_under_classic_too() -> None:
    state = _state(["4S 5S 6S 3D", "AS", "3H"], options=CLASSIC)
    # classic deadwood would not count the run, but exposing it opens the hand
    assert _choose(state) == Meld(("4S", "5S", "6S"))


@pytest.mark.parametrize(
    ("hand", "expected"),
    [("AS 2H", Fight()), ("KS QH JD 10C 9S 9C 8D 8H", Fold())],
)
def test_fights_with_low_deadwood_and_folds_with_high(hand: str, expected: object) -> None:
    called = _state(
        [hand, "3S 4D 5C 6H", "2C 7D"],
        phase="start",
        turn=1,
        melds=[_meld(0, "10D 10S 10H"), _meld(1, "JC QC KC")],
    )
    answers, _ = apply(called, 1, CallDraw())
    assert answers.phase == "answers"
    assert _choose(answers) == expected


@pytest.mark.parametrize("options", [KALARO, CLASSIC], ids=["kalaro", "classic"])
def test_always_answers_a_draw_call(options: Options) -> None:
    """Every time a Draw call waits on the smart bot, it answers Fight or Fold at once."""
    rng = random.Random(1)
    rand = RandomPolicy("tongits")
    asked = 0
    for n in range(300):
        state = new_hand(options, f"answers-{n}".encode())
        while not is_over(state):
            if state.phase == "answers":
                for seat in to_act(state):
                    assert SMART.choose(view(state, seat), rng) in (Fight(), Fold())
                    asked += 1
            seat = to_act(state)[0]
            action = rand.choose(view(state, seat), rng)
            assert action is not None
            state, _ = apply(state, seat, action)
    assert asked > 200


def test_chooses_the_same_from_a_view_decoded_off_the_wire() -> None:
    """The bots service will decode the view's JSON; the bot needs nothing else."""
    rng = random.Random(4)
    rand = RandomPolicy("tongits")
    decoder = msgspec.json.Decoder(View)
    checked = 0
    for n in range(30):
        state = new_hand(KALARO, f"wire-{n}".encode())
        while not is_over(state):
            seat = to_act(state)[0]
            seen = view(state, seat)
            wired = decoder.decode(msgspec.json.encode(seen))
            assert SMART.choose(wired, random.Random(n)) == SMART.choose(seen, random.Random(n))
            checked += 1
            action = rand.choose(seen, rng) if seat else SMART.choose(seen, rng)
            assert action is not None
            state, _ = apply(state, seat, action)
    assert checked > 300
