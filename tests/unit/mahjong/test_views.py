"""Views, event redaction, and the wire formats of states, actions, events and results."""

from __future__ import annotations

import msgspec
import pytest

from kalaro.games import mahjong as mj
from kalaro.games.mahjong import (
    Claim,
    DeclareKang,
    DeclareWin,
    Discard,
    Draw,
    FlowerReplaced,
    HandWon,
    Pass,
    State,
    TileDiscarded,
    TileDrawn,
    TimeOut,
    View,
)
from tests.unit.mahjong.helpers import play, rig
from tests.unit.mahjong.tables import CLAIMS, TWO_WINNERS, after_discard


def test_a_seat_sees_its_own_tiles_and_nobody_elses() -> None:
    state, _ = play(rig(CLAIMS, front="9s"), [(0, Draw())])
    for seat in range(4):
        seen = mj.view(state, seat)
        assert seen.seat == seat
        assert seen.players[seat].hand == state.players[seat].hand
        assert all(p.hand is None for p in seen.players if p.seat != seat)
        assert [p.hand_size for p in seen.players] == [17, 16, 16, 16]
        assert seen.wall_count == len(state.wall)
        assert seen.drawn == ("9s" if seat == 0 else None)
        assert seen.legal == tuple(mj.legal_actions(state, seat))
    audience = mj.view(state, None)
    assert all(p.hand is None for p in audience.players)
    assert (audience.drawn, audience.legal) == (None, ())


def test_everyone_sees_melds_flowers_and_discards() -> None:
    state = after_discard(CLAIMS, "9s", "5m")
    state, _ = mj.apply(state, 2, Claim(kind="pong", tiles=("5m", "5m")))
    for seat in (None, 0, 1, 3):
        seen = mj.view(state, seat)
        assert seen.players[2].melds == state.players[2].melds
        assert seen.players[0].flowers == state.players[0].flowers
        assert seen.players[1].discards == state.players[1].discards


def test_claim_options_are_private_and_the_window_does_not_say_who_is_waited_on() -> None:
    state = after_discard(CLAIMS, "9s", "5m")
    assert mj.view(state, 1).legal[-1] == Pass()
    assert mj.view(state, 2).legal == (Claim(kind="pong", tiles=("5m", "5m")), Pass())
    for seat in (None, 0, 3):
        seen = mj.view(state, seat)
        assert seen.legal == ()
        encoded = msgspec.json.encode(seen)
        assert b"pong" not in encoded and b"chow" not in encoded
    assert mj.view(state, 3).call == mj.CallView(discarder=0, tile="5m", seconds=10)


def test_everything_is_revealed_when_the_hand_is_over() -> None:
    state = after_discard(TWO_WINNERS, "1z", "5m")
    state, _ = mj.apply(state, 2, Claim(kind="mahjong"))
    seen = mj.view(state, None)
    assert [p.hand for p in seen.players] == [p.hand for p in state.players]
    assert seen.result == mj.result(state)
    assert seen.legal == ()


def test_a_bad_viewer_seat_is_refused() -> None:
    with pytest.raises(ValueError):
        mj.view(rig(CLAIMS), 4)


def test_a_drawn_tile_is_shown_to_the_drawer_only() -> None:
    drawn = TileDrawn(seat=1, tile="5m", replacement=True)
    assert mj.event_for(drawn, 1) == drawn
    assert mj.event_for(drawn, 0) == TileDrawn(seat=1, tile=None, replacement=True)
    assert mj.event_for(drawn, None) == TileDrawn(seat=1, tile=None, replacement=True)


def test_public_events_pass_unchanged() -> None:
    for event in (
        FlowerReplaced(seat=1, flower="3f"),
        TileDiscarded(seat=1, tile="5m"),
        HandWon(seat=1, tile="5m", self_draw=True),
    ):
        assert mj.event_for(event, 2) == event
        assert mj.event_for(event, None) == event


def test_events_of_a_whole_hand_hide_concealed_tiles_from_others() -> None:
    state = rig(CLAIMS, front="1f", back="9s")
    _, events = play(state, [(0, Draw()), (0, Discard("5m")), (1, Pass()), (2, Pass())])
    for seat in (None, 1, 2, 3):
        seen = [e for e in (mj.event_for(e, seat) for e in events) if e is not None]
        assert all(e.tile is None for e in seen if isinstance(e, TileDrawn))
        assert all(
            getattr(e, "seat", seat) == seat
            for e in seen
            if isinstance(e, mj.ClaimsOffered | mj.CallAnswered)
        )
        assert FlowerReplaced(seat=0, flower="1f") in seen


# -- wire formats -------------------------------------------------------------------------


def _mid_hand() -> State:
    state = after_discard(CLAIMS, "9s", "5m")
    state, _ = mj.apply(state, 1, Claim(kind="chow", tiles=("3m", "4m")))
    return state


@pytest.mark.parametrize("codec", [msgspec.json, msgspec.msgpack])
def test_state_view_and_result_round_trip(codec: object) -> None:
    encode = codec.encode  # type: ignore[attr-defined]
    decode = codec.decode  # type: ignore[attr-defined]
    state = _mid_hand()
    assert decode(encode(state), type=State) == state
    for seat in (None, 0, 1):
        assert decode(encode(mj.view(state, seat)), type=View) == mj.view(state, seat)
    over = after_discard(TWO_WINNERS, "1z", "5m")
    over, _ = mj.apply(over, 2, Claim(kind="mahjong"))
    assert decode(encode(mj.result(over)), type=mj.Result) == mj.result(over)


@pytest.mark.parametrize(
    ("payload", "action"),
    [
        (b'{"type": "draw"}', Draw()),
        (b'{"type": "discard", "tile": "5m"}', Discard("5m")),
        (b'{"type": "declare_kang", "tile": "1p"}', DeclareKang("1p")),
        (b'{"type": "declare_win"}', DeclareWin()),
        (
            b'{"type": "claim", "kind": "chow", "tiles": ["3m", "4m"]}',
            Claim(kind="chow", tiles=("3m", "4m")),
        ),
        (b'{"type": "claim", "kind": "mahjong"}', Claim(kind="mahjong")),
        (b'{"type": "pass"}', Pass()),
        (b'{"type": "time_out"}', TimeOut()),
    ],
)
def test_actions_decode_from_json(payload: bytes, action: mj.AnyAction) -> None:
    assert mj.decode_action(payload) == action
    assert mj.ACTION_MSGPACK_DECODER.decode(msgspec.msgpack.encode(action)) == action
    assert msgspec.json.decode(msgspec.json.encode(action)) == msgspec.json.decode(payload) | (
        {"tiles": []} if isinstance(action, Claim) and not action.tiles else {}
    )


@pytest.mark.parametrize(
    "payload",
    [
        b'{"type": "fly"}',
        b'{"type": "discard", "tile": "5q"}',
        b'{"type": "discard"}',
        b'{"type": "claim", "kind": "steal", "tiles": []}',
        b'{"tile": "5m"}',
        b"[1, 2]",
    ],
)
def test_bad_actions_are_refused_at_decode(payload: bytes) -> None:
    with pytest.raises(msgspec.ValidationError):
        mj.decode_action(payload)


def test_events_round_trip_through_their_decoder() -> None:
    state = rig(CLAIMS, front="1f", back="9s")
    _, events = play(
        state, [(0, Draw()), (0, Discard("5m")), (1, Claim(kind="chow", tiles=("3m", "4m")))]
    )
    for event in events:
        assert mj.EVENT_JSON_DECODER.decode(msgspec.json.encode(event)) == event
