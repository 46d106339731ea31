"""Hand history through the whole stack: "My hands", a hand's record and its replay.

Real hands are played through the gateway; then each player lists their own hands,
steps through the replay from their seat (never seeing another seat's concealed cards
before the end), and checks the record both with ``kalaro verify`` and with the
browser's web/verify.js (under Node). Someone who did not play the hand sees nothing.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import msgspec
import pytest

from kalaro.client import ApiError, KalaroClient
from kalaro.proto.engine import HandRecord
from kalaro.verify import verify_hand
from services.gateway.routes_hands import replay
from tests.e2e.raw import raw as raw_http
from tests.e2e.stack import Stack
from tests.e2e.tables import admin, open_table, play_hand, signed_up
from tests.unit.test_verify_js import by_name, js_verify

CARD = re.compile(r'"((?:10|[2-9AJQK])[SHDC])"')
Json = dict[str, Any]


async def get(client: KalaroClient, path: str, **params: Any) -> Json:
    reply: Json = await client.call("GET", path, Json, **params)
    return reply


async def test_my_hands_replay_and_verify(stack: Stack, unique: str) -> None:
    players = [await signed_up(stack, f"H{i}", unique) for i in range(3)]
    outsider = await signed_up(stack, "Nosy", unique)
    host = await admin(stack)  # hosts without sitting; admins may read any record
    live = await open_table(stack, host, players, "tongits", 10)
    results = []
    for n in range(2):
        await live.deal()
        results.append(await play_hand(live, "tongits", policy="smart", rng=random.Random(n)))
    await live.close()

    # Newest first, from each player's own seat; the outsider has none.
    page = await get(players[1], "/api/hands")
    assert [h["hand_id"] for h in page["hands"]] == [r.hand_id for r in reversed(results)]
    assert page["next_before"] is None
    newest = page["hands"][0]
    assert newest["game"] == "tongits" and newest["table_id"] == live.table_id
    assert newest["seat"] == 1 and newest["bet"] == 10
    assert newest["credits"] == results[-1].payments[1]
    assert newest["players"] == ["H0", "H1", "H2"]
    assert (await get(outsider, "/api/hands"))["hands"] == []

    # Paged: one at a time, the cursor leads to the older hand and then to the end.
    first = await get(players[2], "/api/hands", limit=1)
    assert [h["hand_id"] for h in first["hands"]] == [results[1].hand_id]
    second = await get(players[2], "/api/hands", limit=1, before=first["next_before"])
    assert [h["hand_id"] for h in second["hands"]] == [results[0].hand_id]
    third = await get(players[2], "/api/hands", limit=1, before=second["next_before"])
    assert third["hands"] == []

    # Bad input is a 400 (and nothing else); a hand you did not play is a 404.
    hand_id = results[0].hand_id
    for path, params in [
        ("/api/hands", {"limit": 0}),
        ("/api/hands", {"limit": 51}),
        ("/api/hands", {"before": -1}),
        ("/api/hands", {"limit": "ten"}),
        (f"/api/hands/poker/{hand_id}", {}),
        (f"/api/hands/poker/{hand_id}/replay", {}),
    ]:
        with pytest.raises(ApiError) as refused:
            await get(players[0], path, **params)
        assert refused.value.status == 400, (path, params, refused.value)
    for path in [f"/api/hands/tongits/{hand_id}", f"/api/hands/tongits/{hand_id}/replay"]:
        with pytest.raises(ApiError) as hidden:
            await get(outsider, path)
        assert hidden.value.status == 404
    with pytest.raises(ApiError) as missing:
        await get(players[0], "/api/hands/tongits/h_nosuchhand")
    assert missing.value.status == 404
    # Word for word: a hand someone did not play, a hand of another game (every engine
    # reads the one store of records) and a hand that never was answer alike.
    nothing = await raw_http(outsider, "GET", "/api/hands/tongits/h_nosuchhand")
    assert nothing[0] == 404
    for path in [f"/api/hands/tongits/{hand_id}", f"/api/hands/tongits/{hand_id}/replay"]:
        assert await raw_http(outsider, "GET", path) == nothing
    for other in ("mahjong", "kawuxing"):
        for path in [f"/api/hands/{other}/{hand_id}", f"/api/hands/{other}/{hand_id}/replay"]:
            assert await raw_http(players[0], "GET", path) == nothing
    # A game name with a trailing newline is not a game (it once reached a NATS subject).
    for path in [f"/api/hands/tongits%0A/{hand_id}", f"/api/hands/tongits%0A/{hand_id}/replay"]:
        status, body = await raw_http(players[0], "GET", path)
        assert status == 400 and b"bad_request" in body, (path, status, body)

    # The record is the table's record of the hand, and it verifies both ways.
    raw = await get(players[0], f"/api/hands/tongits/{hand_id}")
    record = msgspec.convert(raw, HandRecord)
    assert record == await host.hand_record(live.table_id, hand_id)
    assert verify_hand(record).ok
    tampered = dict(raw, entropy=["x", "y", "z"])
    good, bad = js_verify([raw, tampered])
    assert good["ok"] and by_name(good) == {"commitment": True, "deal": True, "payments": True}
    assert not bad["ok"] and by_name(bad)["deal"] is False

    # The replay: one step per action after the deal, from my seat only.
    for seat, player in enumerate(players):
        shown = await get(player, f"/api/hands/tongits/{hand_id}/replay")
        assert shown["seat"] == seat
        steps = shown["steps"]
        assert len(steps) == len(record.actions) + 1
        assert steps[0]["hand"] == list(record.initial_hands[seat])
        assert [s["actor"] for s in steps[1:]] == [a for a, _ in record.actions]
        assert shown["result"] == record.result
        assert shown["payments"] == list(record.payments)
        # What every other seat held concealed at each step, from their own replays.
        others = [replay(record, s).steps for s in range(3) if s != seat]
        for index, step in enumerate(steps):
            seen = set(CARD.findall(json.dumps(step)))
            for other in others:
                leaked = seen & set(other[index].hand)
                assert not leaked, f"seat {seat} saw {leaked} at step {index}"
