"""One message per move, split per socket (services/gateway/table_feed.py ``TableFeed.fan_out``).

Random hands are stepped by the engine's pure step; each step's ``TableFrames`` message
is fanned out to sockets of every seat and to spectators. Each socket must receive
exactly the frame the old path published on its own subject (the seat's encoded frame,
or the audience frame), which is the game's view for that seat, and nothing else.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any, cast

import msgspec
import pytest
from nats.aio.client import Client as NATS

from kalaro.proto.frames import TableFrames, decode_frames, encode_frames, part_for
from kalaro.proto.lobby import SeatInfo, TableInfo
from services.engine.step import Stepped, Steps
from services.gateway.connection import Connection
from services.gateway.table_feed import TableFeed
from tests.unit.test_engine_step import NOW, _a_legal_move, _dealt, _view_json

GAMES = ["tongits", "mahjong", "kawuxing"]


def _table(seats: int) -> TableInfo:
    return TableInfo(
        table_id="t1", game="tongits", ruleset="classic", options={}, bet=0, max_loss=0,
        private=False, chat_enabled=True, host_id="h", host_name="H",
        seats=tuple(SeatInfo(user_id=f"u{i}", display_name=f"P{i}") for i in range(seats)),
        status="playing", hand_no=1, version=1, created_at="2026-12-05T00:00:00Z",
    )  # fmt: skip


class Sink:
    """A socket of the test: what the hub wrote to it, in order."""

    def __init__(self, user_id: str) -> None:
        self.got: list[bytes] = []
        self.conn = Connection(user_id, user_id, self._send, write_now=self._write_now)

    async def _send(self, frame: bytes) -> None:
        self.got.append(frame)

    def _write_now(self, frames: list[bytes]) -> bool:
        self.got.extend(frames)
        return True

    def take(self) -> list[bytes]:
        got, self.got = self.got, []
        return got


def _steps(game: str, seed: int, count: int) -> tuple[Steps, list[Stepped]]:
    steps, stepped = _dealt(game)
    rng = random.Random(seed)
    out = [stepped]
    while len(out) < count and not stepped.over:
        user, action = _a_legal_move(steps, stepped, rng)
        stepped = steps.step(stepped.slot, stepped.version, user, action, NOW)
        out.append(stepped)
    return steps, out


def _view_of(frame: bytes) -> tuple[Any, Any]:
    body = msgspec.json.decode(frame)
    return body["seat"], body["view"]


@pytest.mark.parametrize("game", GAMES)
async def test_each_socket_gets_exactly_its_seats_frame_and_watchers_the_audiences(
    game: str,
) -> None:
    steps, hand = _steps(game, seed=5, count=15)
    seats = steps.rules.seats
    feed = TableFeed(cast(NATS, None), _table(seats))
    # Two sockets on seat 0, one on each other seat but the last, two spectators.
    players = {seat: [Sink(f"u{seat}")] for seat in range(seats - 1)}
    players[0].append(Sink("u0"))
    watchers = [Sink("w1"), Sink("w2")]
    for sink in [s for sinks in players.values() for s in sinks] + watchers:
        feed.attach(sink.conn)

    for stepped in hand:
        feed.fan_out(steps.table_frames(stepped, watched=True))
        await asyncio.sleep(0)  # the sockets' flush callbacks run
        old = dict(stepped.frames)  # what the seat subjects carried before
        for seat, sinks in players.items():
            for sink in sinks:
                got = sink.take()
                assert got == [old[seat]]
                assert _view_of(got[0]) == (seat, _view_json(steps, stepped.state, seat))
        audience = steps.audience_frame(stepped)
        for sink in watchers:
            got = sink.take()
            assert got == [audience]
            assert _view_of(got[0]) == (None, _view_json(steps, stepped.state, None))
    assert len(hand) > 3


async def test_without_an_audience_part_spectators_get_nothing() -> None:
    steps, hand = _steps("tongits", seed=9, count=4)
    feed = TableFeed(cast(NATS, None), _table(steps.rules.seats))
    seat, watcher = Sink("u1"), Sink("w")
    feed.attach(seat.conn)
    feed.attach(watcher.conn)
    for stepped in hand:
        feed.fan_out(steps.table_frames(stepped, watched=False))
    await asyncio.sleep(0)
    assert watcher.got == []
    assert seat.got == [dict(s.frames)[1] for s in hand]


def test_a_message_is_one_encoding_of_every_part() -> None:
    frames = TableFrames(version=3, seats=(b'{"a":1}', b'{"b":2}'), audience=b'{"c":3}')
    decoded = decode_frames(encode_frames(frames))
    assert decoded == frames
    assert [part_for(decoded, s) for s in (0, 1, None, 2, -1)] == [
        b'{"a":1}', b'{"b":2}', b'{"c":3}', None, None,
    ]  # fmt: skip
    assert part_for(TableFrames(version=1, seats=()), None) is None
