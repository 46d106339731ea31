"""Losing Redis loses no hand history: hands are played through the gateway, history
stores them (and cuts their Redis copies to an hour), Redis is wiped with FLUSHALL,
and every player still lists, reads, replays and ``kalaro verify``\\ s every hand."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
from sqlalchemy import func, select

from kalaro.bus.redislink import RedisLink
from kalaro.launcher import SERVICES
from kalaro.proto.engine import HandRecord
from kalaro.sql import create_engine
from kalaro.verify import verify_hand
from services.history.schema import hands, player_hands
from tests.e2e.history_wipe import stored_by_history, wipe_once_stored
from tests.e2e.stack import Stack
from tests.e2e.tables import admin, open_table, play_hand, signed_up

Json = dict[str, Any]


async def test_every_hand_is_read_back_after_redis_is_wiped(
    stack: Stack, unique: str, tmp_path: Path
) -> None:
    players = [await signed_up(stack, f"R{i}", unique) for i in range(3)]
    host = await admin(stack)
    live = await open_table(stack, host, players, "tongits", 10)
    results = []
    for n in range(2):
        await live.deal()
        results.append(await play_hand(live, "tongits", policy="smart", rng=random.Random(n)))
    await live.close()
    hand_ids = [r.hand_id for r in results]
    await wipe_once_stored(stack.redis.url, hand_ids)

    for seat, player in enumerate(players):
        page: Json = await player.call("GET", "/api/hands", Json)
        assert [h["hand_id"] for h in page["hands"]] == list(reversed(hand_ids))
        mine: Json = await player.call("GET", "/api/hands", Json, game="tongits", limit=1)
        assert [h["hand_id"] for h in mine["hands"]] == [hand_ids[-1]]
        for hand_id in hand_ids:
            raw: Json = await player.call("GET", f"/api/hands/tongits/{hand_id}", Json)
            record = msgspec.convert(raw, HandRecord)
            assert record.hand_id == hand_id and verify_hand(record).ok
            shown: Json = await player.call("GET", f"/api/hands/tongits/{hand_id}/replay", Json)
            assert shown["seat"] == seat and len(shown["steps"]) == len(record.actions) + 1
            # The command players run: ``kalaro verify <record.json>``.
            path = tmp_path / f"{seat}-{hand_id}.json"
            path.write_text(json.dumps(raw))
            checked = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "kalaro.cli", "verify", str(path),
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            )  # fmt: skip
            said, _ = await asyncio.wait_for(checked.communicate(), 60)
            assert checked.returncode == 0, said.decode()


async def test_hands_played_while_history_is_down_arrive_once_when_it_is_back(
    stack: Stack, unique: str
) -> None:
    spec = next(s for s in SERVICES if s.name == "history")
    stack.stop("history")  # SIGTERM; the engines keep publishing to RECORDS
    try:
        players = [await signed_up(stack, f"D{i}", unique) for i in range(3)]
        host = await admin(stack)
        live = await open_table(stack, host, players, "tongits", 10)
        results = []
        for n in range(2):
            await live.deal()
            results.append(await play_hand(live, "tongits", policy="smart", rng=random.Random(n)))
        await live.close()
        hand_ids = [r.hand_id for r in results]
        # Meanwhile the players read their hands from the engines' Redis copies.
        page: Json = await players[0].call("GET", "/api/hands", Json)
        assert [h["hand_id"] for h in page["hands"]] == list(reversed(hand_ids))
    finally:
        stack.start(spec)
    redis = RedisLink(stack.redis.url)
    try:
        await stored_by_history(redis, hand_ids, timeout=60)
    finally:
        await redis.aclose()
    engine = create_engine(stack.env["KALARO_DATABASE_URL"])
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(
                select(hands.c.hand_id, func.count()).where(hands.c.hand_id.in_(hand_ids))
                .group_by(hands.c.hand_id)
            )  # fmt: skip
            assert sorted(rows.all()) == sorted((h, 1) for h in hand_ids)
            indexed = await conn.scalar(
                select(func.count()).where(player_hands.c.hand_id.in_(hand_ids))
            )
            assert indexed == 3 * len(hand_ids)
    finally:
        await engine.dispose()
