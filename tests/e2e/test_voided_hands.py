"""A hand voided mid-play, end to end (issue 31): the host cancels a private table
after a few moves; nobody pays, and the hand is in every player's history as voided,
with a record that ``kalaro verify`` and web/verify.js accept and a replay that stops
where the hand did. Its record says private, as the table was, and stays private."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import msgspec
import pytest

from kalaro.client import ApiError, KalaroClient
from kalaro.proto.engine import HandRecord
from kalaro.verify import verify_hand
from tests.e2e.stack import Stack
from tests.e2e.tables import LiveTable, admin, legal_of, signed_up, wait_balance
from tests.unit.test_verify_js import by_name, js_verify

Json = dict[str, Any]
MOVES = 2


async def get(client: KalaroClient, path: str, **params: Any) -> Json:
    reply: Json = await client.call("GET", path, Json, **params)
    return reply


async def _move(live: LiveTable) -> None:
    """One legal move by whichever seat may make one at the newest version."""
    newest = live.newest()
    assert newest is not None
    version = newest[0]
    await live.wait_all_at(version)
    for socket in live.sockets:
        own = socket.view(live.table_id)
        if own is not None and legal_of(own.view):
            ack = await socket.act(live.table_id, legal_of(own.view)[0], version=own.version)
            assert ack.version is not None
            await live.wait_all_at(ack.version)
            return
    raise AssertionError("nobody may move")


async def wait_listed(client: KalaroClient, hand_id: str, timeout: float = 15) -> Json:
    """The hand's line in the player's "My hands", once history has stored it."""
    deadline = time.monotonic() + timeout
    while True:
        page = await get(client, "/api/hands", game="tongits")
        found = [h for h in page["hands"] if h["hand_id"] == hand_id]
        if found:
            return found[0]
        assert time.monotonic() < deadline, f"hand {hand_id} never listed"
        await asyncio.sleep(0.2)


async def voided_private_hand(
    stack: Stack, unique: str, name: str = "V"
) -> tuple[KalaroClient, list[KalaroClient], str, str]:
    """Three players ``<name>0..2`` at a private table of an admin's, for 10 credits: the
    hand is dealt, ``MOVES`` moves are made, and the host cancels the table. (host,
    players, table id, hand id), once every hold is released."""
    host = await admin(stack)
    players = [await signed_up(stack, f"{name}{i}", unique) for i in range(3)]
    created = await host.create_table("tongits", 10, private=True)
    table_id, code = created.table.table_id, created.invite_code
    sockets = []
    for seat, player in enumerate(players):
        await player.sit(table_id, seat, invite_code=code)
        socket = player.table_socket()
        await socket.connect()
        assert (await socket.subscribe(table_id)).seat == seat
        sockets.append(socket)
    live = LiveTable(table_id, host, players, sockets)
    await live.deal()
    hand_id = (await host.get_table(table_id)).hand_id
    assert hand_id is not None
    for _ in range(MOVES):
        await _move(live)
    assert (await host.cancel_table(table_id)).status == "cancelled"
    await live.close()
    for player in players:  # the holds are released: nobody paid
        assert await wait_balance(player, 1000) == 1000
    return host, players, table_id, hand_id


async def test_a_hand_voided_mid_play_is_in_history_verified_and_private(
    stack: Stack, unique: str
) -> None:
    host, players, table_id, hand_id = await voided_private_hand(stack, unique)
    stranger = await signed_up(stack, "VStranger", unique)

    for seat, player in enumerate(players):
        line = await wait_listed(player, hand_id)
        assert (line["ending"], line["credits"], line["won"]) == ("voided", 0, False)
        assert line["seat"] == seat and line["table_id"] == table_id

    raw = await get(players[0], f"/api/hands/tongits/{hand_id}")
    record = msgspec.convert(raw, HandRecord)
    assert record.voided and record.private and not record.practice and not record.ranked
    assert record.result is None and record.payments == (0, 0, 0)
    assert len(record.actions) == MOVES
    report = verify_hand(record)
    assert report.ok, report.checks
    [checked] = js_verify([raw])
    assert checked["ok"] and by_name(checked) == {
        "commitment": True,
        "deal": True,
        "payments": True,
    }
    # A record claiming someone was paid does not check out.
    assert not verify_hand(msgspec.structs.replace(record, payments=(10, -10, 0))).ok

    shown = await get(players[2], f"/api/hands/tongits/{hand_id}/replay")
    assert shown["voided"] and shown["result"] is None and shown["seat"] == 2
    assert len(shown["steps"]) == MOVES + 1

    # Private: its players, host and admins read it at the table; a stranger does not.
    assert await players[1].hand_record(table_id, hand_id) == record
    assert await host.hand_record(table_id, hand_id) == record
    with pytest.raises(ApiError) as hidden:
        await stranger.hand_record(table_id, hand_id)
    assert hidden.value.status == 404
