"""Voided hands (cancelled before their end: no result, nothing paid) in history: stored
once like finished ones, in the player's list (ending "voided", not won, no credits),
in both exports and by id, but neither played nor won in the stats. From the stream too.
"""

from __future__ import annotations

import msgspec
from nats.aio.client import Client as NATS
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import request
from kalaro.proto import endpoints, subjects
from kalaro.proto.history import ExportHands, GetPlayerStats, GetStoredHand, ListHands
from kalaro.settings import Settings
from services.history import export, stats, store
from services.history.bootstrap import build_service
from services.history.handlers import history_deps
from services.history.schema import hands, player_hands
from services.history.service import start_consumer
from tests.integration.history.history_helpers import counts, eventually, publish, stored, voided


async def _flags(engine: AsyncEngine, unique: str) -> dict[str, tuple[bool, set[bool]]]:
    """Each hand's ``voided`` flag and the flags of its player rows."""
    async with engine.connect() as conn:
        found = {
            hand_id: (flag, set())
            for hand_id, flag in await conn.execute(
                select(hands.c.hand_id, hands.c.voided).where(hands.c.hand_id.like(f"{unique}.%"))
            )
        }
        rows = await conn.execute(
            select(player_hands.c.hand_id, player_hands.c.voided).where(
                player_hands.c.hand_id.like(f"{unique}.%")
            )
        )
        for hand_id, flag in rows:
            found[hand_id][1].add(flag)
    return {k: (bool(v), {bool(f) for f in fs}) for k, (v, fs) in found.items()}


async def test_a_voided_hand_is_kept_listed_and_exported_but_not_counted(
    engine: AsyncEngine, unique: str
) -> None:
    finished = [stored(unique, 0), stored(unique, 1)]
    cancelled = voided(unique, 2)
    await store.store_hands(engine, finished)
    me = f"{unique}-a"
    before = await stats.player_stats(engine, me)
    assert [(g.hands, g.won) for g in before.games] == [(2, 1)]  # seat 0 won hand 0

    await store.store_hands(engine, [cancelled])
    assert await counts(engine, unique) == (3, 6)
    assert await _flags(engine, unique) == {
        f"{unique}.0": (False, {False}),
        f"{unique}.1": (False, {False}),
        f"{unique}.2": (True, {True}),
    }
    assert await store.load_hand(engine, f"{unique}.2") == cancelled.record
    page = await store.player_page(engine, me, game=None, before_ms=None, before_id=None, limit=10)
    assert [(h.hand_id, h.ending, h.won, h.credits) for h in page] == [
        (f"{unique}.2", "voided", False, 0),
        (f"{unique}.1", "tongits", False, -10),
        (f"{unique}.0", "tongits", True, 20),
    ]
    mine = await export.records_page(engine, ExportHands(user_id=me, limit=10))
    assert mine.records == (*(f.record for f in finished), cancelled.record)
    day = await export.records_page(
        engine, ExportHands(since_ms=cancelled.finished_ms, until_ms=cancelled.finished_ms + 1)
    )
    assert day.records == (cancelled.record,)
    assert await stats.player_stats(engine, me) == before  # neither played nor won

    # Again, and a finished record under its id: the voided one stays, nothing counts.
    await store.store_hands(engine, [cancelled, stored(unique, 2), cancelled])
    assert await counts(engine, unique) == (3, 6)
    assert await store.load_hand(engine, f"{unique}.2") == cancelled.record
    assert await stats.player_stats(engine, me) == before
    assert (await _flags(engine, unique))[f"{unique}.2"] == (True, {True})


async def test_a_voided_record_from_the_stream_is_stored_once_and_served(
    nc: NATS, engine: AsyncEngine, settings: Settings, names: dict[str, str], unique: str
) -> None:
    cancelled = voided(unique, 0)
    consumer = await start_consumer(
        nc, engine, settings, None, durable=names["durable"], subject=names["subject"]
    )
    try:
        await publish(nc, cancelled)
        await publish(nc, cancelled, msg_id=f"again-{unique}.0")  # a duplicate
        await publish(nc, stored(unique, 1))

        async def both() -> bool:
            info = await nc.jetstream().consumer_info(subjects.RECORDS_STREAM, names["durable"])
            return info.num_pending == 0 and info.num_ack_pending == 0

        await eventually(both)
    finally:
        await consumer.stop()
    assert await counts(engine, unique) == (2, 4)
    service = build_service(history_deps(engine))
    await service.start(nc)
    try:
        me = f"{unique}-b"
        listed = await request(nc, endpoints.HISTORY_LIST_HANDS, ListHands(user_id=me))
        assert [(h.hand_id, h.ending, h.won, h.credits) for h in listed.hands] == [
            (f"{unique}.1", "tongits", True, 20),
            (f"{unique}.0", "voided", False, 0),
        ]
        got = await request(nc, endpoints.HISTORY_GET_HAND, GetStoredHand(hand_id=f"{unique}.0"))
        assert msgspec.json.encode(got) == msgspec.json.encode(cancelled.record)
        figures = await request(nc, endpoints.HISTORY_PLAYER_STATS, GetPlayerStats(user_id=me))
        assert [(g.hands, g.won, g.net) for g in figures.games] == [(1, 1, 20)]
    finally:
        await service.stop()
