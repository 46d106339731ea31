"""Ranked tables through the whole stack (issue 34), the lobby's half: a match opened on
``lobby.ranked.open`` (as the ranked service will) seats its players, deals by itself
once they are ready, plays a hand whose record says ranked, refuses anyone else's sit,
and its spectators see it 3 moves late (a late one too), catching up at the hand's end.
A host's minimum rating is refused with ``rating_too_low`` (nobody is rated here, so
every player counts as the starting 1,000... once the ranked service answers; without
it the gated sit is ``unavailable``, never let through).
"""

from __future__ import annotations

import asyncio
import random

import nats
import pytest

from kalaro.bus import request
from kalaro.client.http import ApiError
from kalaro.client.socket import TableSocket
from kalaro.proto import endpoints
from kalaro.proto.lobby import OpenRankedTable
from services.gateway.watch_delay import DELAY_MOVES
from tests.e2e.stack import Stack
from tests.e2e.tables import LiveTable, admin, legal_of, play_hand, signed_up, views_received


async def _move(live: LiveTable, rng: random.Random) -> int:
    """One random legal move by whoever may move; waits for the players' views only
    (a ranked table's spectators are behind on purpose)."""
    for _ in range(100):
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


def _versions(socket: TableSocket, table_id: str) -> list[int]:
    return [v.version for v in views_received(socket, table_id)]


async def test_a_ranked_table_deals_itself_and_its_watchers_lag(stack: Stack, unique: str) -> None:
    host = await admin(stack)
    players = [await signed_up(stack, f"Rk{i}", unique) for i in range(3)]
    ids = tuple([(await p.me()).user_id for p in players])
    bus = await nats.connect(stack.nats.url)
    try:
        match = OpenRankedTable(game="tongits", bet=10, players=ids, match_id=f"m-{unique}")
        opened = await request(bus, endpoints.LOBBY_OPEN_RANKED, match, timeout=10)
        again = await request(bus, endpoints.LOBBY_OPEN_RANKED, match, timeout=10)
    finally:
        await bus.close()
    assert again.table_id == opened.table_id
    table_id = opened.table_id
    table = await host.get_table(table_id)
    assert table.ranked and not table.private and table.ready_by is not None
    assert tuple(s.user_id for s in table.seats if s is not None) == ids

    outsider = await signed_up(stack, "Rkout", unique)
    with pytest.raises(ApiError) as refused:
        await outsider.sit(table_id)
    assert refused.value.code == "forbidden"
    with pytest.raises(ApiError) as no_bot:
        await host.add_bot(table_id)
    assert no_bot.value.code == "forbidden"

    sockets = []
    for seat, player in enumerate(players):
        socket = player.table_socket()
        await socket.connect()
        assert (await socket.subscribe(table_id)).seat == seat
        sockets.append(socket)
    watcher = outsider.table_socket()
    await watcher.connect()
    assert (await watcher.subscribe(table_id)).seat is None
    live = LiveTable(table_id, host, players, sockets)
    try:
        await live.ready_all()  # nobody deals: the table does, once all are ready
        await live.wait_for_hand()
        rng = random.Random(5)
        for _ in range(DELAY_MOVES + 3):
            newest = await _move(live, rng)
        await asyncio.sleep(0.5)  # what the gateway sends the watcher has arrived
        seen = _versions(watcher, table_id)
        assert seen, "the watcher saw nothing"
        assert max(seen) == newest - DELAY_MOVES, (seen, newest)

        # One who starts watching now gets what was released, never the current view.
        late_client = await signed_up(stack, "Rklate", unique)
        late = late_client.table_socket()
        await late.connect()
        assert (await late.subscribe(table_id)).seat is None
        await asyncio.sleep(0.5)
        assert max(_versions(late, table_id), default=0) <= newest - DELAY_MOVES

        result = await play_hand(live, "tongits", rng=rng)
        final = max(v.version for s in sockets for v in views_received(s, table_id))
        await watcher.wait_for(lambda: max(_versions(watcher, table_id)) == final, 10)
        record = await host.hand_record(table_id, result.hand_id)
        assert record.ranked
        await late.close()
    finally:
        await live.close()
        await watcher.close()


async def test_a_minimum_rating_is_never_let_through_unchecked(stack: Stack, unique: str) -> None:
    host = await admin(stack)
    table = (await host.create_table("tongits", 0, options={}, min_rating=1200)).table
    assert table.min_rating == 1200
    player = await signed_up(stack, "Rkmin", unique)
    with pytest.raises(ApiError) as refused:
        await player.sit(table.table_id)
    # The ranked service's answer (1,000 < 1,200), or, without it, no answer: no seat.
    assert refused.value.code in ("rating_too_low", "unavailable"), refused.value
    # Only the host changes it; cleared, anyone sits.
    with pytest.raises(ApiError) as not_host:
        await player.set_min_rating(table.table_id, None)
    assert not_host.value.status == 403
    assert (await host.set_min_rating(table.table_id, None)).min_rating is None
    assert (await player.sit(table.table_id)).seats[0] is not None
