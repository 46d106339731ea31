"""One TableFrames message per move through real NATS to two gateway hubs.

A table's sockets are spread over two hubs (two gateway processes, each with its own
NATS connection), as a balancer spreads them. The engine's pure step makes a random
hand's messages; each is published once. Every socket must get exactly its own seat's
frame (the one the old per-seat subject carried), spectators the audience frame when
one was built, and nobody anything else; a hub whose last socket leaves unsubscribes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

import pytest
from msgspec.structs import replace
from nats.aio.client import Client as NATS

from kalaro.bus.runner import connect
from kalaro.devstack import NatsServer
from kalaro.proto import subjects
from services.gateway.connection import Connection
from services.gateway.hub import Hub
from tests.unit.test_gateway_fanout import _steps, _table


@pytest.fixture
async def second_nc(nats_server: NatsServer) -> AsyncIterator[NATS]:
    nc = await connect(nats_server.url, "test-second-gateway")
    yield nc
    await nc.drain()


class Socket:
    def __init__(self, user_id: str) -> None:
        self.got: list[bytes] = []
        self.conn = Connection(user_id, user_id, self._send)
        self.conn.start()

    async def _send(self, frame: bytes) -> None:
        self.got.append(frame)


async def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 5
    while not check():
        assert time.monotonic() < deadline, f"not within 5 s: {what}"
        await asyncio.sleep(0.01)


async def test_each_socket_on_either_gateway_gets_only_its_own_part(
    nats_server: NatsServer, nc: NATS, second_nc: NATS, unique: str
) -> None:
    steps, hand = _steps("tongits", seed=3, count=12)
    table_id = f"fan-{unique}"
    table = replace(_table(3), table_id=table_id)
    hub_a, hub_b = Hub(nc), Hub(second_nc)
    seat0, watcher = Socket("u0"), Socket("w")
    seat1, seat1_again, seat2 = Socket("u1"), Socket("u1"), Socket("u2")
    assert [await hub_a.join(s.conn, table) for s in (seat0, watcher)] == [0, None]
    assert [await hub_b.join(s.conn, table) for s in (seat1, seat1_again, seat2)] == [1, 1, 2]

    engine = await connect(nats_server.url, "test-engine")
    try:
        watched = [i % 3 != 1 for i in range(len(hand))]  # some moves nobody watched
        for stepped, seen in zip(hand, watched, strict=True):
            await engine.publish(
                subjects.table_frames(table_id), steps.table_frames(stepped, watched=seen)
            )
        await engine.flush()
        players = (seat0, seat1, seat1_again, seat2)
        await _until(lambda: all(len(s.got) == len(hand) for s in players), "every seat's frames")
        for seat, sockets in ((0, [seat0]), (1, [seat1, seat1_again]), (2, [seat2])):
            expected = [dict(stepped.frames)[seat] for stepped in hand]
            for socket in sockets:
                assert socket.got == expected
        audience = [steps.audience_frame(s) for s, seen in zip(hand, watched, strict=True) if seen]
        await _until(lambda: len(watcher.got) >= len(audience), "the audience frames")
        assert watcher.got == audience

        # Hub A's sockets leave: it drops the table and its one subscription.
        feed = hub_a.feed(table_id)
        assert feed is not None and feed.subscribed
        for socket in (seat0, watcher):
            await hub_a.leave(socket.conn, table_id)
        assert hub_a.feed(table_id) is None and not feed.subscribed
        await engine.publish(subjects.table_frames(table_id), steps.table_frames(hand[0], True))
        await engine.flush()
        await _until(lambda: len(seat2.got) == len(hand) + 1, "hub B still fans out")
        assert len(seat0.got) == len(hand) and len(watcher.got) == len(audience)
    finally:
        await engine.drain()
        for socket in (seat0, watcher, seat1, seat1_again, seat2):
            socket.conn.close()
            await socket.conn.wait_closed()
