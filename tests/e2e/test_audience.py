"""The audience view only while someone watches, through the whole stack.

With nobody watching, the engine's per-move message carries no audience part; a
spectator who subscribes mid-hand gets the current view at once and every view after.
"""

from __future__ import annotations

import asyncio
import json
import random

import nats

from kalaro.proto import subjects
from kalaro.proto.frames import decode_frames
from tests.e2e.stack import Stack
from tests.e2e.tables import LiveTable, admin, legal_of, open_table, signed_up


async def _move(live: LiveTable, rng: random.Random) -> int:
    """One random legal move by whoever may move at the newest version; the new version."""
    for _ in range(50):
        newest = live.newest()
        assert newest is not None, "no view yet"
        version = newest[0]
        for socket in live.sockets:
            own = socket.view(live.table_id)
            if own is not None and own.version == version and legal_of(own.view):
                ack = await socket.act(live.table_id, rng.choice(legal_of(own.view)), version)
                assert ack.version is not None
                await live.wait_all_at(ack.version)
                return ack.version
        await live.wait_all_at(version)
        await asyncio.sleep(0.05)
    raise AssertionError("nobody could move")


async def test_spectator_joining_mid_hand_gets_views_and_nobody_watching_gets_none(
    stack: Stack, unique: str
) -> None:
    host = await admin(stack)
    players = [await signed_up(stack, f"A{i}", unique) for i in range(3)]
    live = await open_table(stack, host, players, "tongits", 0)
    listener = await nats.connect(stack.nats.url)
    public: list[bytes] = []  # the audience parts of the table's frames messages
    messages: list[bytes] = []

    async def on_public(msg: nats.aio.msg.Msg) -> None:
        messages.append(msg.data)
        audience = decode_frames(msg.data).audience
        if audience is not None:
            public.append(audience)

    try:
        await listener.subscribe(subjects.table_frames(live.table_id), cb=on_public)
        await listener.flush()
        await live.deal()
        rng = random.Random(11)
        for _ in range(3):
            await _move(live, rng)
        await asyncio.sleep(0.3)  # what the moves published has arrived by now
        assert messages  # the moves were published ...
        assert public == []  # ... with no audience view: there was no spectator

        watcher = await signed_up(stack, "Watcher", unique)
        socket = watcher.table_socket()
        await socket.connect()
        assert (await socket.subscribe(live.table_id)).seat is None
        live.spectators.append(socket)
        newest = live.newest()
        assert newest is not None
        # The current view straight away (the subscribe path asks the engine for it).
        await socket.wait_for(
            lambda: (v := socket.view(live.table_id)) is not None and v.version == newest[0], 5
        )
        versions = []
        for _ in range(3):
            versions.append(await _move(live, rng))  # waits for the spectator's view too
        seen = {
            json.loads(raw)["version"]
            for raw in socket.raw_frames
            if json.loads(raw).get("type") == "view"
        }
        assert set(versions) <= seen
        # The audience view is published now, for spectators on any gateway (the
        # listener's copy may arrive after the spectator's).
        for _ in range(50):
            if public:
                break
            await asyncio.sleep(0.1)
        assert public
        views = [json.loads(r) for r in socket.raw_frames if '"type":"view"' in r]
        assert all(v["seat"] is None and v["view"]["hand"] == [] for v in views)
    finally:
        await listener.close()
        await live.close()
