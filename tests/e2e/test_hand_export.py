"""Exports through the whole stack: a player downloads every hand of theirs as one JSON
file (streamed, several of history's pages), each record the same JSON as the record
endpoint and ``kalaro verify``-able; only their hands; an admin downloads a day; a
player asking for the admin's export is refused before the query is read. And the
date filters of ``GET /api/hands``."""

from __future__ import annotations

import asyncio
import random
import time
from datetime import UTC, datetime
from typing import Any

import httpx
import msgspec
from nats.aio.client import Client as NATS

from kalaro.bus.codec import encode
from kalaro.client import KalaroClient
from kalaro.proto import subjects
from kalaro.proto.engine import HandRecord, Player
from kalaro.proto.history import StoredHand
from kalaro.verify import verify_hand
from services.gateway.routes_export import EXPORT_PAGE
from tests.e2e.stack import Stack
from tests.e2e.tables import admin, open_table, play_hand, signed_up
from tests.integration.history.history_helpers import stored

Json = dict[str, Any]
DAY = 86_400_000


async def _download(client: KalaroClient, path: str, **params: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {client.access_token}"}
    async with httpx.AsyncClient(base_url=client.base_url, timeout=30) as http:
        return await http.get(path, headers=headers, params=params)


async def _publish_extra(stack: Stack, user_id: str, unique: str, times: list[int]) -> list[str]:
    """Hands of ``user_id`` (and a stranger) on the RECORDS stream, as an engine sends
    them: made-up records (they do not verify), to fill several export pages."""
    nc = NATS()
    await nc.connect(stack.nats.url)
    ids = []
    try:
        for n, ms in enumerate(times):
            item = stored(unique, n, finished_ms=ms)
            players = (Player(user_id=user_id, display_name="P0"), *item.record.players[1:])
            record = msgspec.structs.replace(item.record, players=players)
            item = StoredHand(record=record, finished_ms=ms)
            await nc.jetstream().publish(
                subjects.hand_record(record.hand_id),
                encode(item),
                headers={"Nats-Msg-Id": record.hand_id},
            )
            ids.append(record.hand_id)
    finally:
        await nc.drain()
    return ids


async def _hands_of(client: KalaroClient, **params: Any) -> list[str]:
    page: Json = await client.call("GET", "/api/hands", Json, limit=50, **params)
    return [h["hand_id"] for h in page["hands"]]


async def test_exports_and_date_filters(stack: Stack, unique: str) -> None:
    players = [await signed_up(stack, f"X{i}", unique) for i in range(3)]
    outsider = await signed_up(stack, "Other", unique)
    host = await admin(stack)
    live = await open_table(stack, host, players, "tongits", 10)
    await live.deal()
    played = await play_hand(live, "tongits", policy="smart", rng=random.Random(7))
    await live.close()
    me: Json = await players[0].call("GET", "/api/me", Json)
    now = int(time.time() * 1000)
    # Enough more of player 0's hands for several pages, 40 to 100 days old.
    old = [now - 40 * DAY - n * DAY for n in range(EXPORT_PAGE + 10)]
    extra = await _publish_extra(stack, me["user_id"], unique, old)

    deadline = time.monotonic() + 30
    while True:  # until history has stored them all (the export reads history only)
        got = await _download(players[0], "/api/hands/export")
        assert got.status_code == 200, got.text
        exported = got.json()
        if len(exported) == len(extra) + 1 or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    assert got.headers["content-type"].startswith("application/json")
    assert got.headers["content-disposition"].startswith("attachment;")
    assert [r["hand_id"] for r in exported] == [*list(reversed(extra)), played.hand_id]
    real = exported[-1]
    assert real == await players[0].call("GET", f"/api/hands/tongits/{played.hand_id}", Json)
    assert verify_hand(msgspec.convert(real, HandRecord)).ok

    # Player 1 has the played hand only; an outsider has none.
    theirs = (await _download(players[1], "/api/hands/export")).json()
    assert [r["hand_id"] for r in theirs] == [played.hand_id]
    assert (await _download(outsider, "/api/hands/export")).json() == []

    # The admin's day: the played hand is among today's, none of the old ones.
    today = datetime.now(UTC).date().isoformat()
    day = await _download(host, "/api/admin/hands/export", day=today)
    assert day.status_code == 200 and today in day.headers["content-disposition"]
    day_ids = {r["hand_id"] for r in day.json()}
    assert played.hand_id in day_ids and not day_ids & set(extra)
    # A player is refused before the query is read: junk gets the same 403, not a 400.
    for query in ({"day": today}, {"day": "not-a-day"}, {}):
        refused = await _download(players[0], "/api/admin/hands/export", **query)
        assert refused.status_code == 403, refused.text
    bad_day = await _download(host, "/api/admin/hands/export", day="2026-13-40")
    assert bad_day.status_code == 400

    # GET /api/hands: since (inclusive) and until (exclusive), epoch ms.
    assert await _hands_of(players[0], since=now - DAY) == [played.hand_id]
    assert await _hands_of(players[0], until=now - DAY) == extra[:50]  # newest first
    window = await _hands_of(players[0], since=old[5], until=old[1])
    assert window == [extra[n] for n in range(2, 6)]  # newest first: 2..5 days past old[0]
    assert await _hands_of(players[0], since=old[1], until=old[1]) == []
