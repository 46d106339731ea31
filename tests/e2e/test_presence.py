"""Presence on the whole stack: every seat shows the others whether its player is
connected, reconnecting or offline, from the gateway's sockets, in ``table`` frames.

The stack runs with a grace period of 2 s (``KALARO_PRESENCE_GRACE_SECONDS`` in
``stack.py``); the lobby's sweep, every 5 s, turns a reconnecting seat offline after it.
"""

from __future__ import annotations

from kalaro.client.socket import TableSocket
from tests.e2e.stack import Stack
from tests.e2e.tables import admin, signed_up


def presence(socket: TableSocket, table_id: str) -> list[str | None]:
    table = socket.state(table_id).table
    assert table is not None
    return [s.presence if s is not None else None for s in table.seats]


async def sees(socket: TableSocket, table_id: str, expected: list[str | None]) -> None:
    try:
        await socket.wait_for(lambda: presence(socket, table_id) == expected, timeout=20)
    except TimeoutError:
        raise AssertionError(f"saw {presence(socket, table_id)}, not {expected}") from None


async def test_seats_show_connected_reconnecting_offline_and_back(
    stack: Stack, unique: str
) -> None:
    host = await admin(stack)
    ana = await signed_up(stack, "PresAna", unique)
    ben = await signed_up(stack, "PresBen", unique)
    table = (await host.create_table("tongits", 0)).table
    tid = table.table_id
    await ana.sit(tid, 0)
    await ben.sit(tid, 1)
    ben_socket = ben.table_socket()
    await ben_socket.connect()
    await ben_socket.subscribe(tid)
    await sees(ben_socket, tid, ["offline", "connected", None])
    ana_socket = ana.table_socket()
    await ana_socket.connect()
    await ana_socket.subscribe(tid)
    await sees(ben_socket, tid, ["connected", "connected", None])
    await sees(ana_socket, tid, ["connected", "connected", None])

    # Ana closes her socket (the tab, the network): Ben sees her reconnecting, then,
    # the grace over, offline.
    await ana_socket.close()
    await sees(ben_socket, tid, ["reconnecting", "connected", None])
    await sees(ben_socket, tid, ["offline", "connected", None])

    # She comes back: connected again, for both of them.
    again = ana.table_socket()
    await again.connect()
    await again.subscribe(tid)
    await sees(ben_socket, tid, ["connected", "connected", None])
    await sees(again, tid, ["connected", "connected", None])
    await again.close()
    await ben_socket.close()
