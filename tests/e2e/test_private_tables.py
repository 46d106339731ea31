"""Private means private, end to end: a private table is listed, shown, watched and
chatted at only by those it is for, and its hands' records read only by its players,
host and admins; a public table's finished hands are anyone's to verify."""

from __future__ import annotations

import asyncio
import random
import time

import pytest

from kalaro.client import KalaroClient
from tests.e2e.raw import raw as raw_http
from tests.e2e.stack import Stack
from tests.e2e.tables import (
    ApiError,
    FrameError,
    LiveTable,
    admin,
    open_table,
    play_hand,
    signed_up,
)


async def _host(stack: Stack, name: str, unique: str) -> KalaroClient:
    """A player an admin made a host (not an admin: host rights alone must do)."""
    person = await signed_up(stack, name, unique)
    asked = await person.request_host("private games")
    root = await admin(stack)
    await root.decide(asked.approval_id, True)
    await person.refresh()  # the new role is in the next access token
    assert "host" in person.user.roles and "admin" not in person.user.roles
    return person


async def _refused(status: int, call: object) -> ApiError:
    with pytest.raises(ApiError) as err:
        await call  # type: ignore[misc]
    assert err.value.status == status, err.value
    return err.value


async def test_a_private_table_is_for_its_invitees_and_its_records_for_its_players(
    stack: Stack, unique: str
) -> None:
    host = await _host(stack, "PHost", unique)
    root = await admin(stack)
    players = [await signed_up(stack, f"P{i}", unique) for i in range(3)]
    stranger = await signed_up(stack, "Stranger", unique)
    watcher = await signed_up(stack, "Watcher", unique)
    created = await host.create_table("tongits", 1, private=True)
    table_id, code = created.table.table_id, created.invite_code
    assert code is not None

    # Not listed to a stranger; not shown without the code, exactly like no table.
    assert table_id not in [t.table_id for t in (await stranger.list_tables()).tables]
    assert table_id in [t.table_id for t in (await host.list_tables()).tables]
    unknown = await _refused(404, stranger.get_table("f" * 16))
    err = await _refused(404, stranger.get_table(table_id))
    assert err.code == unknown.code == "not_found"
    await _refused(404, stranger.get_table(table_id, invite_code="wrong-code"))
    # Sitting without the code, or with a wrong one: an unknown table's answer, byte
    # for byte (status and body).
    no_table = await raw_http(stranger, "POST", f"/api/tables/{'f' * 16}/sit", json={})
    assert no_table[0] == 404
    assert await raw_http(stranger, "POST", f"/api/tables/{table_id}/sit", json={}) == no_table
    wrong = {"invite_code": "wrong-code"}
    assert await raw_http(stranger, "POST", f"/api/tables/{table_id}/sit", json=wrong) == no_table
    assert (await watcher.get_table(table_id, invite_code=code)).table_id == table_id
    assert (await root.get_table(table_id)).table_id == table_id

    sockets = []
    for seat, player in enumerate(players):
        await player.sit(table_id, seat, invite_code=code)
        assert table_id in [t.table_id for t in (await player.list_tables()).tables]
        assert (await player.get_table(table_id)).table_id == table_id  # seated: no code
        socket = player.table_socket()
        await socket.connect()
        assert (await socket.subscribe(table_id)).seat == seat
        sockets.append(socket)
    hosting = host.table_socket()
    await hosting.connect()
    assert (await hosting.subscribe(table_id)).seat is None  # the host watches, no code

    # A stranger cannot watch (nor so chat); a spectator with the code watches and
    # reads the chat, but only players and the host post.
    outsider = stranger.table_socket(reconnect=False)
    await outsider.connect()
    with pytest.raises(FrameError) as refused:
        await outsider.subscribe(table_id)
    assert refused.value.code == "not_found"
    with pytest.raises(FrameError) as refused:
        await outsider.chat(table_id, "let me in")
    assert refused.value.code == "not_subscribed"
    spectator = watcher.table_socket()
    await spectator.connect()
    assert (await spectator.subscribe(table_id, invite_code=code)).seat is None
    with pytest.raises(FrameError) as refused:
        await spectator.chat(table_id, "hello from the rail")
    assert refused.value.code == "forbidden"
    await sockets[0].chat(table_id, "good luck all")
    await hosting.chat(table_id, "welcome")
    await spectator.wait_for(
        lambda: [c.text for c in spectator.state(table_id).chat] == ["good luck all", "welcome"],
        10,
    )
    assert all("good luck" not in raw for raw in outsider.raw_frames)

    live = LiveTable(table_id, host, players, sockets, [hosting, spectator])
    await live.deal()
    result = await play_hand(live, "tongits", rng=random.Random(4))

    # The record: its players, its host and admins; nobody else, code or not.
    for reader in (players[1], host, root):
        record = await reader.hand_record(table_id, result.hand_id)
        assert record.hand_id == result.hand_id and record.server_seed == result.server_seed
    for outsider_client in (stranger, watcher):
        err = await _refused(404, outsider_client.hand_record(table_id, result.hand_id))
        assert err.code == "not_found"
    # Byte for byte what a hand that never was answers, at this table or at none.
    no_hand = await raw_http(stranger, "GET", f"/api/tables/{table_id}/hands/h_nosuchhand")
    assert no_hand[0] == 404
    assert await raw_http(stranger, "GET", f"/api/tables/{'f' * 16}/hands/h_nosuchhand") == no_hand
    for outsider_client in (stranger, watcher):
        path = f"/api/tables/{table_id}/hands/{result.hand_id}"
        assert await raw_http(outsider_client, "GET", path) == no_hand
    # And through "My hands": the same as a hand of theirs that does not exist.
    mine = await raw_http(stranger, "GET", "/api/hands/tongits/h_nosuchhand")
    assert await raw_http(stranger, "GET", f"/api/hands/tongits/{result.hand_id}") == mine

    # At a public table the same stranger reads a hand's record once it has finished
    # (while it is being played there is no record to read).
    public_host = await admin(stack)
    others = [await signed_up(stack, f"Q{i}", unique) for i in range(3)]
    public = await open_table(stack, public_host, others, "tongits", 1)
    await public.deal()
    playing = (await public_host.get_table(public.table_id)).hand_id
    assert playing is not None
    await _refused(404, stranger.hand_record(public.table_id, playing))
    public_result = await play_hand(public, "tongits", rng=random.Random(5))
    record = await stranger.hand_record(public.table_id, public_result.hand_id)
    assert record.hand_id == public_result.hand_id
    # A private table's hand is not readable through a public table's address either.
    await _refused(404, stranger.hand_record(public.table_id, result.hand_id))

    await outsider.close()
    await live.close()
    await public.close()


async def test_bots_still_sit_watch_and_ready_at_a_private_table(stack: Stack, unique: str) -> None:
    """A guard: the bots need no invite code (the host kept their seats), and having sat
    they watch the table through the gateway like any seated player."""
    host = await _host(stack, "BHost", unique)
    created = await host.create_table("tongits", 0, private=True)
    table_id = created.table.table_id
    await host.sit(table_id, seat=0)
    await host.add_bot(table_id)
    await host.add_bot(table_id)
    deadline = time.monotonic() + 20
    while True:
        seats = (await host.get_table(table_id)).seats
        bots = [s for s in seats[1:] if s is not None and s.is_bot]
        if len(bots) == 2 and all(s.presence == "connected" and s.ready for s in bots):
            break
        assert time.monotonic() < deadline, f"the bots never watched and readied: {seats}"
        await asyncio.sleep(0.2)
    await host.cancel_table(table_id)
