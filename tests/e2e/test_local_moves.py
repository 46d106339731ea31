"""Moves a gateway applies itself (services/gateway/local_moves.py), on the real stack.

A table whose every seat has a socket on one gateway is played there. These tests check
that it is (the gateway's move counter), that every socket gets each view exactly once
and only its own seat's, that a player's second device on another gateway sees every
move and that moves sent from it take the engine's path, and that two gateways which
both hold every seat of a table, sent the same move at once many times, never both
write a version.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator

import httpx
import pytest

from kalaro.client import KalaroClient, TableSocket
from kalaro.client.socket import FrameError
from kalaro.proto import ws as w
from tests.e2e.stack import Stack
from tests.e2e.tables import (
    PASSWORD,
    LiveTable,
    admin,
    legal_of,
    open_table,
    play_hand,
    signed_up,
    views_received,
    wait_balance,
)

BET = 10


@pytest.fixture(scope="module")
def second_gateway(stack: Stack) -> Iterator[str]:
    """Another gateway process with local moves on (the default): its base URL."""
    yield stack.start_gateway("gateway-2")
    stack.stop("gateway-2")


def moves_counted(base_url: str) -> dict[str, float]:
    """The gateway's ``kalaro_gateway_moves_total`` by where the moves were decided."""
    counted = {"here": 0.0, "engine": 0.0}
    for line in httpx.get(f"{base_url}/metrics").text.splitlines():
        if line.startswith("kalaro_gateway_moves_total{"):
            where = line.split('where="', 1)[1].split('"', 1)[0]
            counted[where] = float(line.rsplit(" ", 1)[1])
    return counted


def assert_each_view_once(socket: TableSocket, table_id: str, seat: int) -> list[w.HandView]:
    views = views_received(socket, table_id)
    versions = [(v.hand_id, v.version) for v in views]
    assert len(versions) == len(set(versions)), f"seat {seat} got a view twice: {versions}"
    assert {v.seat for v in views} == {seat}, "a socket got another seat's (or the audience's) view"
    return views


def same_views(one: list[w.HandView], other: list[w.HandView]) -> None:
    """Two sockets of one seat saw the same hands, version by version, byte for byte."""
    mine = {(v.hand_id, v.version): bytes(v.view) for v in one}
    theirs = {(v.hand_id, v.version): bytes(v.view) for v in other}
    shared = mine.keys() & theirs.keys()
    assert shared, "the two devices have no version in common"
    # The second device may have joined later: from its first view on, it has them all.
    first = min(theirs)
    assert {k for k in mine if k >= first} == set(theirs)
    assert all(mine[k] == theirs[k] for k in shared)


async def second_device(base_url: str, name: str, unique: str) -> KalaroClient:
    """The player signed up as ``name`` signs in again, on the gateway at ``base_url``."""
    device = KalaroClient(base_url)
    await device.sign_in(f"{name.lower()}-{unique}@example.com", PASSWORD)
    return device


async def test_a_table_all_on_one_gateway_is_played_there(stack: Stack, unique: str) -> None:
    host = await admin(stack)
    names = [f"Here{i}" for i in range(3)]
    players = [await signed_up(stack, name, unique) for name in names]
    before = moves_counted(stack.base_url)
    live = await open_table(stack, host, players, "tongits", BET)
    await live.deal()
    result = await play_hand(live, "tongits", rng=random.Random(5))
    after = moves_counted(stack.base_url)
    here, engine = (after[k] - before[k] for k in ("here", "engine"))
    # Every move but the last (the hand's end is the engine's) was applied here.
    assert here >= 5 and 1 <= engine <= 2, (here, engine)
    for seat, socket in enumerate(live.sockets):
        assert_each_view_once(socket, live.table_id, seat)
    for seat, player in enumerate(players):
        assert (
            await wait_balance(player, 1000 + result.payments[seat]) == 1000 + result.payments[seat]
        )
        assert (await player.balance()).held == 0
    report = await host.audit()
    assert report.total == 0 and report.mismatched_accounts == ()
    await live.close()


async def test_a_second_device_on_another_gateway_sees_every_move(
    stack: Stack, second_gateway: str, unique: str
) -> None:
    host = await admin(stack)
    names = [f"Twice{i}" for i in range(3)]
    players = [await signed_up(stack, name, unique) for name in names]
    live = await open_table(stack, host, players, "tongits", BET)
    await live.deal()
    device = await second_device(second_gateway, names[0], unique)
    other = device.table_socket()
    await other.connect()
    assert (await other.subscribe(live.table_id)).seat == 0
    before = moves_counted(second_gateway)

    # Hand 1: every seat's moves from the first gateway, which applies them itself.
    await play_hand(live, "tongits", rng=random.Random(7))
    await other.wait_for(lambda: len(other.state(live.table_id).results) == 1)
    # Hand 2: seat 0 moves from the second device. The second gateway does not hold the
    # table's every seat, so those moves take the engine's path; the other seats' moves
    # are still applied by the first gateway.
    await live.deal()
    with_device = LiveTable(
        live.table_id, host, players, [other, *live.sockets[1:]], [live.sockets[0]]
    )
    await play_hand(with_device, "tongits", rng=random.Random(8))
    after = moves_counted(second_gateway)
    assert after["here"] == before["here"], (
        "the second gateway applied a move of a table not all there"
    )
    assert after["engine"] - before["engine"] >= 2, "seat 0 moved from the second device"

    for seat, socket in enumerate(live.sockets):
        assert_each_view_once(socket, live.table_id, seat)
    same_views(
        assert_each_view_once(live.sockets[0], live.table_id, 0),
        assert_each_view_once(other, live.table_id, 0),
    )
    await other.close()
    await device.close()
    await live.close()


async def test_two_gateways_holding_every_seat_never_both_apply_a_version(
    stack: Stack, second_gateway: str, unique: str
) -> None:
    """Each seat has a socket on both gateways, so both apply moves of the table. Every
    move (at least 20, over as many hands as that takes) is sent on both of the mover's
    sockets at once: exactly one is taken, the other is told ``stale_version``,
    whichever gateway wins."""
    host = await admin(stack)
    names = [f"Race{i}" for i in range(3)]
    players = [await signed_up(stack, name, unique) for name in names]
    live = await open_table(stack, host, players, "tongits", BET)
    twins: list[TableSocket] = []
    for seat, name in enumerate(names):
        device = await second_device(second_gateway, name, unique)
        socket = device.table_socket()
        await socket.connect()
        assert (await socket.subscribe(live.table_id)).seat == seat
        twins.append(socket)
    pairs = list(zip(live.sockets, twins, strict=True))
    here_before = [moves_counted(u)["here"] for u in (stack.base_url, second_gateway)]
    rng = random.Random(3)
    races = 0
    hands = 0
    while races < 20:  # two hands or so (a short hand is fewer than ten moves)
        assert hands < 6, f"six hands and only {races} races"
        await live.deal()
        for _ in range(400):
            newest = live.newest()
            assert newest is not None
            version, view, _ = newest
            if view.get("result") is not None:
                break
            movers = [
                seat
                for seat, (socket, _twin) in enumerate(pairs)
                if (own := socket.view(live.table_id)) is not None
                and own.version == version
                and legal_of(own.view)
            ]
            if not movers:
                await asyncio.gather(
                    *(t.wait_for(lambda t=t, v=version: _at(t, live, v)) for t in twins)
                )
                await live.wait_all_at(version)
                continue
            seat = movers[0]
            own = pairs[seat][0].view(live.table_id)
            assert own is not None
            action = rng.choice(legal_of(own.view))
            answers = await asyncio.gather(
                *(s.act(live.table_id, action, version=version) for s in pairs[seat]),
                return_exceptions=True,
            )
            taken = [a for a in answers if isinstance(a, w.Ack)]
            refused = [a for a in answers if isinstance(a, FrameError)]
            assert len(taken) == 1 and len(refused) == 1, answers
            assert refused[0].code == "stale_version", refused[0]
            assert taken[0].version == version + 1
            races += 1
            await live.wait_all_at(version + 1)
            await asyncio.gather(
                *(t.wait_for(lambda t=t, v=version + 1: _at(t, live, v)) for t in twins)
            )
        else:
            raise AssertionError("the hand did not end")
        for socket in [*live.sockets, *twins]:
            await socket.wait_for(
                lambda s=socket, h=hands: len(s.state(live.table_id).results) > h, 15
            )
        hands += 1
    here_after = [moves_counted(u)["here"] for u in (stack.base_url, second_gateway)]
    # Both gateways decided moves themselves (the winner's and the loser's answer alike;
    # only each hand's last move went to the engine).
    decided = [a - b for a, b in zip(here_after, here_before, strict=True)]
    assert all(d >= races - hands for d in decided), (decided, races, hands)
    for seat, (socket, twin) in enumerate(pairs):
        same_views(
            assert_each_view_once(socket, live.table_id, seat),
            assert_each_view_once(twin, live.table_id, seat),
        )
    for socket in twins:
        await socket.close()
    await live.close()


def _at(socket: TableSocket, live: LiveTable, version: int) -> bool:
    view = socket.view(live.table_id)
    return view is not None and view.version >= version
