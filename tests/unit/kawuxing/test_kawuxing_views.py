"""Views, event redaction, and the wire formats of actions, events, views and results."""

from __future__ import annotations

import msgspec
import pytest

from kalaro.games import kawuxing as kw
from kalaro.games.kawuxing import Claim, DeclareKong, Discard, Draw, KongDeclared, Pass, TileDrawn
from tests.unit.kawuxing.kawuxing_helpers import play, play_out, pong, rig

KONG_TABLE = ["1111s 258p 258s 5z 6z 7z", "55s 14p 25p 7p 36s 9s 5z 6z 7z", None]


def test_a_seat_sees_its_own_tiles_and_nobody_elses() -> None:
    state, _ = play(rig(KONG_TABLE, front="9p"), [(0, Draw())])
    for seat in range(3):
        seen = kw.view(state, seat)
        assert seen.players[seat].hand == state.players[seat].hand
        assert all(p.hand is None for p in seen.players if p.seat != seat)
        assert [p.hand_size for p in seen.players] == [14, 13, 13]
        assert seen.drawn == ("9p" if seat == 0 else None)
        assert seen.legal == tuple(kw.legal_actions(state, seat))
        assert seen.wall_count == len(state.wall)
    audience = kw.view(state, None)
    assert all(p.hand is None for p in audience.players)
    assert (audience.drawn, audience.legal, audience.waits) == (None, (), ())
    with pytest.raises(ValueError):
        kw.view(state, 3)


def test_a_concealed_kong_is_face_down_to_the_others_until_the_end() -> None:
    state, events = play(
        rig(KONG_TABLE, front="9p", wall_size=5), [(0, Draw()), (0, DeclareKong("1s"))]
    )
    declared = next(e for e in events if isinstance(e, KongDeclared))
    assert kw.event_for(declared, 0) == declared
    assert kw.event_for(declared, 1) == KongDeclared(seat=0, kong="concealed", tile=None)
    assert kw.view(state, 0).players[0].melds[0].tiles == ("1s",) * 4
    for viewer in (None, 1, 2):
        meld = kw.view(state, viewer).players[0].melds[0]
        assert (meld.kind, meld.kong, meld.tiles) == ("kong", "concealed", None)
    over = play_out(state)
    assert kw.view(over, 1).players[0].melds[0].tiles == ("1s",) * 4
    result = kw.view(over, None).result
    assert result is not None and result.hands[0].melds[0].tiles == ("1s",) * 4
    assert all(p.hand is not None for p in kw.view(over, None).players)


def test_pongs_and_discards_are_public() -> None:
    state = rig(KONG_TABLE, front="5s", melds={}, wall_size=20)
    state, _ = play(
        state, [(0, Draw()), (0, Discard("5s")), (1, Claim(kind="pong", tiles=("5s", "5s")))]
    )
    for viewer in (None, 0, 2):
        seen = kw.view(state, viewer)
        assert seen.players[1].melds[0].tiles == ("5s",) * 3
        assert seen.players[2].discards == state.players[2].discards


def test_claim_options_are_private_and_the_window_does_not_say_who_is_asked() -> None:
    state, _ = play(rig(KONG_TABLE, front="5s"), [(0, Draw()), (0, Discard("5s"))])
    assert kw.view(state, 1).legal == (Claim(kind="pong", tiles=("5s", "5s")), Pass())
    for viewer in (None, 0, 2):
        seen = kw.view(state, viewer)
        assert seen.legal == () and seen.call == kw.CallView(
            discarder=0, tile="5s", seconds=10, robbing=False
        )
    assert "seats" not in msgspec.to_builtins(kw.view(state, None)).get("call", {})


def test_a_drawn_tile_is_redacted_for_the_others() -> None:
    _, events = play(rig(KONG_TABLE, front="9p"), [(0, Draw())])
    assert events == [TileDrawn(seat=0, tile="9p")]
    assert kw.event_for(events[0], 0) == events[0]
    assert kw.event_for(events[0], 1) == TileDrawn(seat=0, tile=None)
    assert kw.event_for(events[0], None) == TileDrawn(seat=0, tile=None)


def test_shown_hands_are_in_every_view() -> None:
    state = rig(["46s 123p 456p 789p 99s", None, None], shown=[0])
    for viewer in (None, 1, 2):
        player = kw.view(state, viewer).players[0]
        assert player.shown and player.hand == state.players[0].hand


def test_messages_round_trip_as_json() -> None:
    for action in (Draw(), Discard("5s"), kw.ShowHand("7z"), DeclareKong("1p"), kw.DeclareWin(),
                   Claim(kind="win"), Claim(kind="pong", tiles=("2s", "2s")), Pass(),
                   kw.TimeOut()):  # fmt: skip
        assert kw.decode_action(msgspec.json.encode(action)) == action
    for bad in (b'{"type": "chow", "tiles": []}', b'{"type": "discard", "tile": "1m9"}',
                b'{"type": "claim", "kind": "chow"}'):  # fmt: skip
        with pytest.raises(msgspec.ValidationError):
            kw.decode_action(bad)
    state = play_out(rig(KONG_TABLE, front="9p", wall_size=4))
    seen = kw.view(state, 1)
    assert msgspec.json.decode(msgspec.json.encode(seen), type=kw.View) == seen
    assert msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=kw.State) == state
    _, events = play(rig(KONG_TABLE, front="9p"), [(0, Draw()), (0, DeclareKong("1s"))])
    for event in events:
        assert kw.EVENT_JSON_DECODER.decode(msgspec.json.encode(event)) == event


def test_the_kong_maker_is_shown_what_it_extends() -> None:
    state = rig(
        ["258p 258s 5z 6z 7z 1p", None, None], front="7s", melds={0: [pong("7s", from_seat=2)]}
    )
    state, events = play(state, [(0, Draw()), (0, DeclareKong("7s"))])
    extended = next(e for e in events if isinstance(e, KongDeclared))
    assert kw.event_for(extended, 2) == extended  # an extended kong is face up
