"""Copy every hand record still in Redis into SQL (run at every start; idempotent).

Before history existed the engines kept records only in Redis (7 days). At start the
service walks ``handrecord:*`` (SCAN, not KEYS: Redis keeps serving), stores what it
finds in batches (the same idempotent insert as ingest), cuts the copies' TTL and
takes them out of the players' indexes.
A hand's finish time is its score in a player's ``handsof`` index, or, that gone,
derived from how much of the record's 7-day TTL is left.
"""

from __future__ import annotations

import logging
import time

import msgspec
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus.redislink import RedisLink
from kalaro.proto.engine import HandRecord
from kalaro.proto.history import StoredHand
from kalaro.records import RECORD_TTL_MS, index_key, record_key
from services.history import store
from services.history.service import shorten_redis_copies

log = logging.getLogger("kalaro.history")

_decode = msgspec.json.Decoder(HandRecord).decode


async def _finished_ms(redis: RedisLink, namespace: str, record: HandRecord, now_ms: int) -> int:
    for player in record.players:
        if player.is_bot:
            continue
        key = index_key(namespace, record.game, player.user_id)
        score = await redis.execute("ZSCORE", key, record.hand_id)
        if score is not None:
            return int(float(score))
    left = await redis.execute("PTTL", record_key(namespace, record.hand_id))
    return now_ms - (RECORD_TTL_MS - left) if isinstance(left, int) and left > 0 else now_ms


async def import_from_redis(
    engine: AsyncEngine, redis: RedisLink, *, namespace: str = "", batch: int = 200
) -> int:
    """Store every record under ``{namespace}handrecord:`` in SQL; return how many were
    read (already stored ones included: they insert nothing)."""
    prefix = record_key(namespace, "")
    cursor, total = b"0", 0
    while True:
        cursor, keys = await redis.execute("SCAN", cursor, "MATCH", prefix + "*", "COUNT", batch)
        if keys:
            found = await redis.execute("MGET", *keys)
            now_ms = int(time.time() * 1000)
            stored = []
            for key, data in zip(keys, found, strict=True):
                if data is None:
                    continue  # expired between SCAN and MGET
                try:
                    record = _decode(data)
                except msgspec.DecodeError:
                    log.error("unreadable record at %s left in Redis", key.decode())
                    continue
                finished = await _finished_ms(redis, namespace, record, now_ms)
                practice = record.bet == 0
                stored.append(StoredHand(record=record, finished_ms=finished, practice=practice))
            await store.store_hands(engine, stored)
            await shorten_redis_copies(redis, namespace, [s.record for s in stored])
            total += len(stored)
            log.info("copied %d hand records from Redis so far", total)
        if cursor in (b"0", 0, "0"):
            break
    log.info("Redis import done: %d hand records stored (or already there)", total)
    return total
