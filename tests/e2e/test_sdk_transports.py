"""The SDK's table socket over both transports against the real gateway.

``websockets`` (the library, the SDK's default and the bots') and ``fast`` (the frame
reader the load generator opts into) must behave the same: a whole hand, and a gateway
restart ridden out by reconnecting and subscribing again. The gateway is restarted in
the session's stack; it comes back on the same port with the same signing key.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from kalaro.client.socket import TableSocket
from kalaro.client.transport import TRANSPORTS, Transport
from kalaro.devstack import wait_for_port
from kalaro.launcher import SERVICES
from tests.e2e.stack import Stack
from tests.e2e.tables import admin, open_table, play_hand, signed_up

GATEWAY = next(spec for spec in SERVICES if spec.name == "gateway")


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_hand_over_each_transport(stack: Stack, unique: str, transport: Transport) -> None:
    host = await admin(stack)
    players = [await signed_up(stack, f"T{i}{transport[0]}", unique) for i in range(3)]
    live = await open_table(stack, host, players, "tongits", 0, transport=transport)
    assert all(socket.transport == transport for socket in live.sockets)
    await live.deal()
    result = await play_hand(live, "tongits")
    assert json.loads(bytes(result.result))["ending"]
    for socket in live.sockets:
        assert socket.state(live.table_id).results[-1].hand_id == result.hand_id
    await live.close()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_sockets_ride_out_a_gateway_restart(
    stack: Stack, unique: str, transport: Transport
) -> None:
    host = await admin(stack)
    players = [await signed_up(stack, f"G{i}{transport[0]}", unique) for i in range(3)]
    live = await open_table(stack, host, players, "tongits", 0, transport=transport)
    await live.deal()
    newest = live.newest()
    assert newest is not None
    version = newest[0]
    try:
        await asyncio.to_thread(stack.stop, "gateway")
    finally:
        stack.start(GATEWAY)
    await asyncio.to_thread(wait_for_port, stack.http_port, 60)
    # Each socket reconnects by itself, subscribes again and gets its seat's view.
    for seat, socket in enumerate(live.sockets):

        def back(socket: TableSocket = socket) -> bool:
            view = socket.view(live.table_id)
            return socket.connects >= 2 and view is not None and view.version >= version

        await socket.wait_for(back, 30)
        assert socket.state(live.table_id).seat == seat
    result = await play_hand(live, "tongits")  # the hand goes on over the new connections
    assert json.loads(bytes(result.result))["ending"]
    await live.close()
    for player in players:  # the token went in a header: no log of any service holds it
        for name in stack.processes:
            assert player.access_token not in stack.log(name), name
