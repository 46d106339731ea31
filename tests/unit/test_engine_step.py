"""The engine's pure step (services/engine/step.py): a hand and a move in, the next
hand and each seat's frame out, with no Redis, no NATS and no clock of its own."""

from __future__ import annotations

import copy
import random
from typing import Any

import msgspec
import pytest

from kalaro.bus import ServiceError
from kalaro.games.base import IllegalAction
from kalaro.games.registry import rules_for
from kalaro.proto import errors as codes
from kalaro.proto.engine import Player, StartHand
from kalaro.proto.wallet import SettleHand, VoidHand
from kalaro.proto.ws import HandView
from services.engine.hand import Slot
from services.engine.step import Stepped, Steps

GAMES = ["tongits", "mahjong", "kawuxing"]
NOW = 1_700_000_000_000
_frame = msgspec.json.Decoder(HandView).decode


def _start(game: str, *, bet: int = 5, **changes: Any) -> StartHand:
    seats = rules_for(game).seats
    start = StartHand(
        table_id="t1",
        hand_id="h1",
        options={},
        bet=bet,
        players=tuple(Player(user_id=f"u{i}", display_name=f"P{i}") for i in range(seats)),
        server_seed="ab" * 32,
        entropy=tuple(f"tap-{i}" for i in range(seats)),
        dealer=0,
    )
    return msgspec.structs.replace(start, **changes)


def _dealt(game: str) -> tuple[Steps, Stepped]:
    steps = Steps(game)
    fresh, state = steps.deal(_start(game))
    return steps, steps.advance(fresh, 0, state, [], (), NOW)


def _a_legal_move(steps: Steps, stepped: Stepped, rng: random.Random) -> tuple[str, bytes]:
    """A seat the hand waits on (as its user id) and one of its legal actions (JSON)."""
    rules = steps.rules
    seat = rng.choice(
        [s for s in rules.to_act(stepped.state) if rules.legal_actions(stepped.state, s)]
    )
    action = rng.choice(rules.legal_actions(stepped.state, seat))
    return stepped.slot.players[seat].user_id, msgspec.json.encode(action)


def _view_json(steps: Steps, state: Any, seat: int | None) -> Any:
    return msgspec.json.decode(msgspec.json.encode(steps.rules.view(state, seat)))


@pytest.mark.parametrize("game", GAMES)
def test_the_deal_gives_version_one_and_each_seat_its_own_view(game: str) -> None:
    steps, dealt = _dealt(game)
    assert dealt.version == 1 and not dealt.over and dealt.slot.status == "playing"
    assert dealt.slot.actions == () and dealt.logged == ()
    assert steps.state_of(dealt.slot) == dealt.state
    assert [seat for seat, _ in dealt.frames] == list(range(steps.rules.seats))
    for seat, raw in dealt.frames:
        frame = _frame(raw)
        assert (frame.table_id, frame.hand_id, frame.version, frame.seat) == ("t1", "h1", 1, seat)
        assert msgspec.json.decode(frame.view) == _view_json(steps, dealt.state, seat)


@pytest.mark.parametrize("game", GAMES)
def test_a_legal_move_gives_the_next_state_and_per_seat_frames(game: str) -> None:
    steps, stepped = _dealt(game)
    rng = random.Random(7)
    for _ in range(12):
        if stepped.over:
            break
        before = copy.deepcopy(stepped.slot)
        user, action = _a_legal_move(steps, stepped, rng)
        seat = next(i for i, p in enumerate(stepped.slot.players) if p.user_id == user)
        expected, _ = steps.rules.apply(stepped.state, seat, steps.rules.decode_action(action))
        following = steps.step(stepped.slot, stepped.version, user, action, NOW)
        assert stepped.slot == before, "the step changed the slot it was given"
        assert following.version == stepped.version + 1
        assert following.state == expected
        assert steps.state_of(following.slot) == expected
        assert following.slot.actions == before.actions + following.logged
        assert [s for s, _ in following.logged] == [seat]
        for s, raw in following.frames:
            frame = _frame(raw)
            assert frame.seat == s and frame.version == following.version
            assert msgspec.json.decode(frame.view) == _view_json(steps, expected, s)
        stepped = following


@pytest.mark.parametrize("game", GAMES)
def test_an_illegal_move_raises_and_changes_nothing(game: str) -> None:
    steps, dealt = _dealt(game)
    before = copy.deepcopy(dealt.slot)
    rules = steps.rules
    waiting = set(rules.to_act(dealt.state))
    idle = next((s for s in range(rules.seats) if s not in waiting), None)
    rng = random.Random(1)
    _, action = _a_legal_move(steps, dealt, rng)
    assert idle is not None, "at the deal only the dealer is to act"
    with pytest.raises(IllegalAction):  # a move out of turn
        steps.step(dealt.slot, 1, f"u{idle}", action, NOW)
    with pytest.raises(ServiceError) as stranger:
        steps.step(dealt.slot, 1, "nobody", action, NOW)
    assert stranger.value.code == codes.FORBIDDEN
    with pytest.raises(ServiceError) as malformed:
        steps.step(dealt.slot, 1, "u0", b'{"type": "no-such-move"}', NOW)
    assert malformed.value.code == codes.BAD_REQUEST
    with pytest.raises(ServiceError) as timed:
        steps.step(dealt.slot, 1, "u0", msgspec.json.encode(rules.time_out()), NOW)
    assert timed.value.code == codes.FORBIDDEN
    cancelled = msgspec.structs.replace(dealt.slot, status="cancelled")
    with pytest.raises(ServiceError) as gone:
        steps.step(cancelled, 1, "u0", action, NOW)
    assert gone.value.code == codes.HAND_CANCELLED
    assert dealt.slot == before


def test_a_drawn_card_is_in_the_drawers_frame_only() -> None:
    """Tongits: after the dealer's discard the next seat draws from the stock; the
    card is in its own frame (view and event) and in no other seat's nor the audience's."""
    steps, stepped = _dealt("tongits")
    rules = steps.rules
    discard = next(
        a for a in rules.legal_actions(stepped.state, 0) if type(a).__name__ == "Discard"
    )
    stepped = steps.step(stepped.slot, stepped.version, "u0", msgspec.json.encode(discard), NOW)
    draw = next(a for a in rules.legal_actions(stepped.state, 1) if type(a).__name__ == "Draw")
    drawn = steps.step(stepped.slot, stepped.version, "u1", msgspec.json.encode(draw), NOW)
    card = next(c for c in drawn.state.hands[1] if c not in stepped.state.hands[1])
    frames = dict(drawn.frames)
    mine = _frame(frames[1])
    assert card in msgspec.json.decode(mine.view)["hand"]
    assert any(e.get("card") == card for e in msgspec.json.decode(mine.events))
    for raw in (frames[0], frames[2], steps.audience_frame(drawn)):
        assert f'"{card}"'.encode() not in raw
        assert msgspec.json.decode(_frame(raw).events), "the others see that a card was drawn"
    audience = _frame(steps.audience_frame(drawn))
    assert audience.seat is None
    assert msgspec.json.decode(audience.view) == _view_json(steps, drawn.state, None)


@pytest.mark.parametrize("game", GAMES)
def test_a_whole_hand_ends_over_and_is_settled_by_its_payments(game: str) -> None:
    steps, stepped = _dealt(game)
    rng = random.Random(3)
    for _ in range(2_000):
        if stepped.over:
            break
        user, action = _a_legal_move(steps, stepped, rng)
        stepped = steps.step(stepped.slot, stepped.version, user, action, NOW)
    assert stepped.over and stepped.slot.status == "finished"
    assert stepped.slot.deadline_ms is None and stepped.slot.timer_window == ""
    settle, finished, shown = steps.outcome_messages(stepped.slot)
    assert isinstance(settle, SettleHand) and finished is not None and shown is not None
    assert sum(p.amount for p in settle.payments) == 0
    assert shown.payments == tuple(p.amount for p in settle.payments)
    void, _, _ = steps.outcome_messages(msgspec.structs.replace(stepped.slot, status="cancelled"))
    assert isinstance(void, VoidHand)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"bet": -1}, "negative"),
        ({"server_seed": "zz"}, "hex"),
        ({"server_seed": ""}, "empty"),
        ({"players": ()}, "played by"),
    ],
)
def test_a_start_the_game_cannot_deal_is_a_bad_request(
    changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(ServiceError, match=message) as refused:
        Steps("tongits").deal(_start("tongits", **changes))
    assert refused.value.code == codes.BAD_REQUEST


def test_a_timer_window_keeps_its_deadline_across_moves_inside_it() -> None:
    """Mahjong's call window (or a turn clock): a step inside the same window keeps the
    deadline it opened with; the time-out step applies the server's time-outs."""
    steps, stepped = _dealt("mahjong")
    assert stepped.slot.deadline_ms is not None, "the deal starts the turn clock"
    assert stepped.slot.deadline_ms > NOW
    later = steps.advance(stepped.slot, stepped.version, stepped.state, [], (), NOW + 1_000)
    assert later.slot.deadline_ms == stepped.slot.deadline_ms
    timed = steps.time_out(stepped.slot, stepped.version, stepped.slot.deadline_ms)
    assert timed is not None and timed.logged
    time_out = msgspec.json.encode(steps.rules.time_out())
    assert all(action == time_out for _, action in timed.logged)


def test_a_slot_without_the_players_cannot_move() -> None:
    tombstone = Slot(table_id="t1", hand_id="h1", game="tongits", status="cancelled")
    with pytest.raises(ServiceError) as gone:
        Steps("tongits").step(tombstone, 1, "u0", b"{}", NOW)
    assert gone.value.code == codes.HAND_CANCELLED
