"""Live tables end to end: lobby, engine workers, WebSocket fan-out, settlement.

Every test talks to the whole stack (real nats-server, redis-server, SQLite, every
service as its own process) through the gateway, as SDK clients would.
"""

from __future__ import annotations

import asyncio
import json
import random
import re

import msgspec
import pytest

from kalaro.proto.engine import HandRecord
from kalaro.verify import verify_hand
from tests.e2e.stack import Stack
from tests.e2e.tables import (
    ApiError,
    FrameError,
    LiveTable,
    admin,
    open_table,
    play_hand,
    signed_up,
    wait_balance,
)

CARD = re.compile(r'"((?:10|[2-9AJQK])[SHDC])"')


def concealed_leaks(live: LiveTable, table_id: str) -> list[str]:
    """Cards a socket saw while they were concealed in another seat's hand.

    A card is in exactly one place at a time, so if seat s holds card c at version v,
    no other socket's frame of version v may mention c anywhere.
    """
    hands: dict[int, dict[int, set[str]]] = {}  # version -> seat -> concealed cards
    for seat, socket in enumerate(live.sockets):
        for raw in socket.raw_frames:
            frame = json.loads(raw)
            if frame.get("type") == "view" and frame["view"]["result"] is None:
                hands.setdefault(frame["version"], {})[seat] = set(frame["view"]["hand"])
    leaks = []
    watchers = [(seat, s) for seat, s in enumerate(live.sockets)] + [
        (None, s) for s in live.spectators
    ]
    for viewer, socket in watchers:
        for raw in socket.raw_frames:
            frame = json.loads(raw)
            if frame.get("type") != "view" or frame["view"]["result"] is not None:
                continue
            seen = set(CARD.findall(raw))
            for owner, cards in hands.get(frame["version"], {}).items():
                if owner != viewer and seen & cards:
                    leaks.append(f"seat {viewer} saw {sorted(seen & cards)} of seat {owner}")
    return leaks


async def test_full_tongits_hand_settles_by_the_payment_table(stack: Stack, unique: str) -> None:
    host = await admin(stack)
    players = [await signed_up(stack, f"T{i}", unique) for i in range(3)]
    watcher = await signed_up(stack, "Watcher", unique)
    live = await open_table(stack, host, players, "tongits", 10, spectators=[watcher])
    await live.deal()
    table = await host.get_table(live.table_id)
    assert table.status == "playing"
    held = [(await p.balance()).held for p in players]
    assert held == [40, 40, 40]  # 4x bet under the kalaro ruleset

    result = await play_hand(live, "tongits", policy="smart", rng=random.Random(3))
    units = json.loads(bytes(result.result))["payments"]
    assert list(result.payments) == [u * 10 for u in units]
    assert sum(result.payments) == 0
    for seat, player in enumerate(players):
        assert (
            await wait_balance(player, 1000 + result.payments[seat]) == 1000 + result.payments[seat]
        )
        assert (await player.balance()).held == 0
    assert concealed_leaks(live, live.table_id) == []
    # the spectator saw every public view and never a hand
    spectator_views = [json.loads(r) for r in live.spectators[0].raw_frames if '"type":"view"' in r]
    assert spectator_views
    assert all(v["view"]["hand"] == [] for v in spectator_views if v["view"]["result"] is None)
    audit = await host.audit()
    assert audit.total == 0
    assert audit.mismatched_accounts == ()
    await live.close()


def mahjong_leaks(live: LiveTable) -> list[str]:
    """Anything in a socket's frames that shows another seat's concealed tiles or claims."""
    leaks = []
    watchers = [(seat, s) for seat, s in enumerate(live.sockets)] + [
        (None, s) for s in live.spectators
    ]
    for viewer, socket in watchers:
        for raw in socket.raw_frames:
            frame = json.loads(raw)
            if frame.get("type") != "view" or frame["view"]["result"] is not None:
                continue
            if frame["seat"] != viewer:
                leaks.append(f"socket of seat {viewer} got a frame for seat {frame['seat']}")
            for player in frame["view"]["players"]:
                if player["seat"] != viewer and player["hand"] is not None:
                    leaks.append(f"seat {viewer} saw seat {player['seat']}'s hand")
            for event in frame["events"]:
                drawn = event.get("type") == "tile_drawn" and event.get("tile") is not None
                if drawn and event.get("seat") != viewer:
                    leaks.append(f"seat {viewer} saw seat {event['seat']}'s draw")
                if event.get("type") == "claims_offered" and event.get("seat") != viewer:
                    leaks.append(f"seat {viewer} saw seat {event.get('seat')}'s claim options")
    return leaks


async def test_full_mahjong_hand_with_claims(stack: Stack, unique: str) -> None:
    host = await admin(stack)
    players = [await signed_up(stack, f"M{i}", unique) for i in range(4)]
    watcher = await signed_up(stack, "Watcher", unique)
    live = await open_table(stack, host, players, "mahjong", 5, spectators=[watcher])
    rng = random.Random(5)
    totals = [0] * 4
    claims: list[dict[str, object]] = []
    # Most hands resolve a call window (a discard claimed, or passed by all who could
    # claim it); a deal where nobody ever could is rare but legal, so up to three hands.
    for hand in range(3):
        await live.deal()
        if hand == 0:
            assert [(await p.balance()).held for p in players] == [50, 50, 50, 50]  # 10x bet
        result = await play_hand(live, "mahjong", policy="smart", rng=rng)
        units = json.loads(bytes(result.result))["payments"]
        assert list(result.payments) == [u * 5 for u in units]
        assert sum(result.payments) == 0
        totals = [t + p for t, p in zip(totals, result.payments, strict=True)]
        for seat, player in enumerate(players):
            expected = 1000 + totals[seat]
            assert await wait_balance(player, expected) == expected
        claims = [
            json.loads(r)
            for r in live.sockets[0].raw_frames
            if '"tile_claimed"' in r or '"calls_passed"' in r
        ]
        if claims:
            break
    assert claims, "no call window was resolved in three hands"
    assert mahjong_leaks(live) == []
    await live.close()


async def test_bad_moves_get_error_frames_and_change_nothing(stack: Stack, unique: str) -> None:
    host = await admin(stack)
    players = [await signed_up(stack, f"B{i}", unique) for i in range(3)]
    outsider = await signed_up(stack, "Outsider", unique)
    live = await open_table(stack, host, players, "tongits", 0, spectators=[outsider])
    await live.deal()
    version, view, _ = live.newest() or (0, {}, "")
    dealer = view["turn"]
    waiting = (dealer + 1) % 3
    socket, idle = live.sockets[dealer], live.sockets[waiting]
    hand_before = socket.view(live.table_id).view["hand"]
    discard = {"type": "discard", "card": hand_before[0]}
    idle_card = {"type": "discard", "card": idle.view(live.table_id).view["hand"][0]}

    attempts = [
        (idle, idle_card, version, "not_your_turn"),  # wrong turn
        (socket, discard, version - 1, "stale_version"),  # stale version
        (socket, {"type": "discard", "card": "ZZ"}, version, "bad_request"),  # not a card
        (socket, {"type": "teleport"}, version, "bad_request"),  # no such action
        (socket, {"type": "discard", "card": idle_card["card"]}, version, "card_not_in_hand"),
        (live.spectators[0], discard, version, "forbidden"),  # not seated: no seat to act as
    ]
    for sender, action, at, code in attempts:
        with pytest.raises(FrameError) as err:
            await sender.act(live.table_id, action, version=at)
        assert err.value.code == code, (action, err.value)
    malformed = [
        "not json",
        '{"type": "act"}',
        '{"type": "act", "table_id": "x", "version": 1, "action": {}, "extra": 1}',
        '{"type": "warp", "table_id": "x"}',
        "[1, 2, 3]",
    ]
    before = len(socket.errors)
    for text in malformed:
        await socket.send_raw(text)
    await socket.ping()  # the socket still works after every bad frame
    assert [e.code for e in socket.errors[before:]] == ["bad_request"] * len(malformed)
    newest = live.newest()
    assert newest is not None
    assert newest[0] == version  # nothing changed
    assert socket.view(live.table_id).view["hand"] == hand_before
    await live.close()


async def test_lobby_refusals(stack: Stack, unique: str) -> None:
    host = await admin(stack)
    rich = [await signed_up(stack, f"R{i}", unique) for i in range(3)]
    poor = await signed_up(stack, "Poor", unique)
    table = (await host.create_table("tongits", 300)).table  # needs 1,200 available
    with pytest.raises(ApiError) as err:
        await poor.sit(table.table_id)
    assert err.value.code == "insufficient_funds"
    with pytest.raises(ApiError) as err:  # a player cannot host
        await rich[0].create_table("tongits", 10)
    assert err.value.status == 403
    created = await host.create_table("tongits", 10, private=True)
    # Without its code (or with a wrong one) a private table is a table that is not there.
    with pytest.raises(ApiError) as err:
        await rich[0].sit(created.table.table_id)
    assert (err.value.status, err.value.code) == (404, "not_found")
    with pytest.raises(ApiError) as err:
        await rich[0].sit(created.table.table_id, invite_code="wrong-code")
    assert (err.value.status, err.value.code) == (404, "not_found")
    seated = await rich[0].sit(created.table.table_id, invite_code=created.invite_code)
    assert seated.seats[0] is not None
    for player in rich[1:]:
        await player.sit(created.table.table_id, invite_code=created.invite_code)
    for player in rich:
        await player.ready(created.table.table_id)
    with pytest.raises(ApiError) as err:  # only the host deals
        await rich[0].deal(created.table.table_id)
    assert err.value.status == 403
    assert (await host.get_table(created.table.table_id)).status == "waiting"
    assert (await rich[0].balance()).held == 0


async def test_cancel_voids_the_hand_and_releases_holds(stack: Stack, unique: str) -> None:
    host = await admin(stack)
    players = [await signed_up(stack, f"C{i}", unique) for i in range(3)]
    live = await open_table(stack, host, players, "tongits", 25)
    await live.deal()
    assert [(await p.balance()).held for p in players] == [100, 100, 100]
    cancelled = await host.cancel_table(live.table_id)
    assert cancelled.status == "cancelled"
    for player in players:
        assert await wait_balance(player, 1000) == 1000
        balance = await player.balance()
        assert (balance.held, balance.available) == (0, 1000)
    await live.close()


async def test_verify_accepts_a_real_hand_and_rejects_a_tampered_one(
    stack: Stack, unique: str
) -> None:
    host = await admin(stack)
    players = [await signed_up(stack, f"V{i}", unique) for i in range(3)]
    live = await open_table(stack, host, players, "tongits", 1)
    await live.deal()
    result = await play_hand(live, "tongits", rng=random.Random(9))
    record = await players[0].hand_record(live.table_id, result.hand_id)
    assert record.server_seed == result.server_seed
    assert verify_hand(record).ok
    tampered = msgspec.json.decode(msgspec.json.encode(record))
    tampered["entropy"][0] = "someone else's entropy"
    report = verify_hand(msgspec.convert(tampered, HandRecord))
    assert not report.ok
    assert next(c.name for c in report.checks if not c.ok) == "deal"
    await live.close()


async def test_ready_and_deal_over_the_socket(stack: Stack, unique: str) -> None:
    host = await admin(stack)
    players = [await signed_up(stack, f"S{i}", unique) for i in range(3)]
    live = await open_table(stack, host, players, "tongits", 0)
    host_socket = host.table_socket()
    await host_socket.connect()
    with pytest.raises(FrameError) as err:  # not everyone is ready yet
        await host_socket.deal(live.table_id)
    assert err.value.code == "conflict"
    for seat, socket in enumerate(live.sockets):
        await socket.ready(live.table_id, True, f"socket-entropy-{seat}")
    with pytest.raises(FrameError) as err:  # a player is not the host
        await live.sockets[0].deal(live.table_id)
    assert err.value.code == "forbidden"
    await host_socket.deal(live.table_id)
    await live.wait_for_hand()
    table = await host.get_table(live.table_id)
    assert table.status == "playing"
    assert all(socket.view(live.table_id) is not None for socket in live.sockets)
    await host_socket.close()
    await live.close()


async def test_a_flooding_socket_is_rate_limited_and_told_which_frame(
    stack: Stack, unique: str
) -> None:
    player = await signed_up(stack, "Flood", unique)
    socket = player.table_socket()
    await socket.connect()
    for ref in range(1, 101):  # far past the burst, faster than the refill
        await socket.send_raw(json.dumps({"type": "ping", "ref": ref}))
    await socket.wait_for(lambda: any(e.code == "rate_limited" for e in socket.errors), 10)
    limited = [e for e in socket.errors if e.code == "rate_limited"]
    assert limited
    assert all(e.ref is not None and 1 <= e.ref <= 100 for e in limited)
    await asyncio.sleep(1.5)  # the bucket refills
    await socket.ping()  # and the socket is still usable
    await socket.close()


async def test_the_sdk_never_puts_its_token_in_the_socket_url(stack: Stack, unique: str) -> None:
    """The SDK sends its access token in a header: the gateway's log shows the /ws
    connect with no ``token=`` (not even redacted) and never the token itself."""
    client = await signed_up(stack, "Hidden", unique)
    before = stack.log("gateway").count("/ws")
    async with client.table_socket(reconnect=False) as sdk:
        await sdk.ping()
        assert "token" not in sdk.url
    lines: list[str] = []
    for _ in range(50):  # the log is written by another process: give it a moment
        lines = [line for line in stack.log("gateway").splitlines() if "/ws" in line]
        if len(lines) > before:
            break
        await asyncio.sleep(0.1)
    assert len(lines) > before, "the gateway logged no /ws connect"
    assert not [line for line in lines if "token=" in line], lines
    assert client.access_token not in stack.log("gateway")
