"""Wiping Redis once history holds the hands (issue 31: losing Redis loses no history)."""

from __future__ import annotations

import asyncio
import time

from kalaro.bus.redislink import RedisLink
from services.history.service import REDIS_COPY_TTL_MS


async def stored_by_history(redis: RedisLink, hand_ids: list[str], timeout: float = 30) -> None:
    """Until history has every hand: it cuts a stored hand's Redis copy to an hour."""
    deadline = time.monotonic() + timeout
    while True:
        ttls = [await redis.execute("PTTL", f"handrecord:{h}") for h in hand_ids]
        if all(0 < ttl <= REDIS_COPY_TTL_MS for ttl in ttls):
            return
        assert time.monotonic() < deadline, f"history did not store them: TTLs {ttls}"
        await asyncio.sleep(0.1)


async def wipe_once_stored(redis_url: str, hand_ids: list[str]) -> None:
    """Wait until history has ``hand_ids``, then FLUSHALL, and check no hand record or
    index survived. (Not DBSIZE == 0: live services, presence and the lobby, write
    again at once.)"""
    redis = RedisLink(redis_url)
    try:
        await stored_by_history(redis, hand_ids, timeout=60)
        assert await redis.execute("FLUSHALL") in (b"OK", "OK", True)
        for pattern in ("*handrecord:*", "*handsof:*"):
            assert not await redis.execute("KEYS", pattern), pattern
    finally:
        await redis.aclose()
