"""Retention: the prune removes exactly the hands older than N days, from both tables,
in batches; twice is harmless; two replicas at once delete each hand once; 0 keeps all."""

from __future__ import annotations

import asyncio
import contextlib

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from services.history import retention, store
from services.history.schema import hands
from tests.integration.history.history_helpers import counts, stored

NOW = 1_800_000_000_000
DAY = retention.DAY_MS


async def _seed(engine: AsyncEngine, unique: str) -> dict[str, int]:
    """Hands finished 30, 8, 7 days and a moment, 6 and 0 days ago: by id, their time."""
    ages = [30 * DAY, 30 * DAY + 1, 8 * DAY, 7 * DAY + 1, 7 * DAY - 1, 6 * DAY, 0]
    items = [stored(unique, n, finished_ms=NOW - age) for n, age in enumerate(ages)]
    await store.store_hands(engine, items)
    return {i.record.hand_id: i.finished_ms for i in items}


async def _left(engine: AsyncEngine) -> set[str]:
    async with engine.connect() as conn:
        return set(await conn.scalars(select(hands.c.hand_id)))


async def test_prune_removes_exactly_the_older_hands(engine: AsyncEngine, unique: str) -> None:
    times = await _seed(engine, unique)
    old = {h for h, ms in times.items() if ms < NOW - 7 * DAY}
    assert len(old) == 4
    pruned = await retention.prune_once(engine, 7, now_ms=NOW)
    assert pruned == 4
    assert await _left(engine) == set(times) - old
    # Two human players a hand: their index rows went with the hands.
    assert await counts(engine, unique) == (3, 6)
    listed = await store.player_page(
        engine, f"{unique}-a", game=None, before_ms=None, before_id=None, limit=50
    )
    assert {h.hand_id for h in listed} == set(times) - old
    # Again: nothing more is older, nothing else is touched.
    assert await retention.prune_once(engine, 7, now_ms=NOW) == 0
    assert await counts(engine, unique) == (3, 6)


async def test_prune_in_small_batches_and_two_replicas_at_once(
    engine: AsyncEngine, unique: str
) -> None:
    items = [stored(unique, n, finished_ms=NOW - 10 * DAY - n) for n in range(23)]
    items.append(stored(unique, 99, finished_ms=NOW))
    await store.store_hands(engine, items)
    cutoff = retention.cutoff_ms(NOW, 7)
    assert cutoff is not None
    first, second = await asyncio.gather(
        retention.prune_before(engine, cutoff, batch=5),
        retention.prune_before(engine, cutoff, batch=5),
    )
    assert first + second == 23  # each hand deleted once, by one of them
    assert await _left(engine) == {f"{unique}.99"}
    assert await counts(engine, unique) == (1, 2)


async def test_retention_zero_keeps_every_hand(engine: AsyncEngine, unique: str) -> None:
    times = await _seed(engine, unique)
    assert retention.cutoff_ms(NOW, 0) is None
    assert await retention.prune_once(engine, 0, now_ms=NOW) == 0
    # The daily job with 0 returns at once instead of waiting to prune.
    await asyncio.wait_for(retention.prune_daily(engine, 0, first=3600), timeout=1)
    assert await _left(engine) == set(times)


async def test_daily_job_prunes_by_the_clock(engine: AsyncEngine, unique: str) -> None:
    """The job's prune uses the real time: a hand 40 days old goes, one just now stays."""
    import time

    now = int(time.time() * 1000)
    await store.store_hands(
        engine,
        [stored(unique, 1, finished_ms=now - 40 * DAY), stored(unique, 2, finished_ms=now)],
    )
    job = asyncio.create_task(retention.prune_daily(engine, 30, first=0, interval=3600))
    try:
        for _ in range(200):
            if await _left(engine) == {f"{unique}.2"}:
                break
            await asyncio.sleep(0.02)
        assert await _left(engine) == {f"{unique}.2"}
    finally:
        job.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await job
