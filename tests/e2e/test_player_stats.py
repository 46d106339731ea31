"""Players' stats through the whole stack: a hand played through the gateway reaches
history (JetStream), and ``GET /api/players/{id}/stats`` shows it to its player and to
any other signed-in player; an id nobody has answers empty; signed out answers 401."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import httpx
import msgspec
import pytest

from kalaro.client.http import ApiError
from tests.e2e.stack import Stack
from tests.e2e.tables import admin, open_table, play_hand, signed_up

Json = dict[str, Any]


async def test_a_played_hand_shows_in_every_players_stats(stack: Stack, unique: str) -> None:
    players = [await signed_up(stack, f"S{i}", unique) for i in range(3)]
    host = await admin(stack)
    live = await open_table(stack, host, players, "tongits", 10)
    await live.deal()
    result = await play_hand(live, "tongits", policy="smart", rng=random.Random(3))
    await live.close()
    winners = set(msgspec.json.decode(result.result)["winners"])

    deadline = time.monotonic() + 30
    for seat, player in enumerate(players):
        path = f"/api/players/{player.user.user_id}/stats"
        while True:
            # Another player asks: stats are public to the signed-in.
            stats: Json = await players[(seat + 1) % 3].call("GET", path, Json)
            if stats["games"]:
                break
            assert time.monotonic() < deadline, "history did not count the hand"
            await asyncio.sleep(0.1)
        assert stats["user_id"] == player.user.user_id
        assert stats["practice"] == []
        net = result.payments[seat]
        assert stats["games"] == [
            {
                "game": "tongits",
                "hands": 1,
                "won": int(seat in winners),
                "net": net,
                "biggest_win": max(0, net),
            }
        ]
        # The player's own view is the same, and shows no table or hand id.
        assert await player.call("GET", path, Json) == stats
        assert live.table_id not in str(stats) and result.hand_id not in str(stats)

    nobody: Json = await host.call("GET", f"/api/players/nobody-{unique}/stats", Json)
    assert nobody == {"user_id": f"nobody-{unique}", "games": [], "practice": []}
    async with httpx.AsyncClient(base_url=stack.base_url) as anonymous:
        answer = await anonymous.get(f"/api/players/{players[0].user.user_id}/stats")
        assert answer.status_code == 401
    for client in [host, *players]:
        await client.close()


@pytest.mark.parametrize("bad", ["x" * 129])
async def test_a_bad_player_id_is_refused(stack: Stack, unique: str, bad: str) -> None:
    client = await signed_up(stack, "Bad", unique)
    try:
        with pytest.raises(ApiError) as refused:
            await client.call("GET", f"/api/players/{bad}/stats", dict)
        assert refused.value.status == 400
    finally:
        await client.close()
