"""How long history keeps hands: for ever by default, or ``KALARO_HISTORY_RETENTION_DAYS``.

Once a day every history replica prunes the hands that finished before the cutoff from
both tables, a bounded batch per transaction (a prune of millions never holds a long
lock). No coordination is needed between replicas: the DELETE is idempotent, so two
replicas pruning at once delete each row once and the later one finds nothing left.
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import UTC, datetime

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from services.history.schema import hands, player_hands

log = logging.getLogger("kalaro.history")

DAY_MS = 86_400_000
#: Hands deleted per transaction.
PRUNE_BATCH = 500
#: How often the prune runs (the first one a minute after start).
PRUNE_INTERVAL_SECONDS = 86_400.0
FIRST_PRUNE_SECONDS = 60.0


def cutoff_ms(now_ms: int, days: int) -> int | None:
    """Hands that finished before this are pruned; None: ``days`` 0 (or less), keep all."""
    return None if days <= 0 else now_ms - days * DAY_MS


async def prune_before(engine: AsyncEngine, cutoff: int, *, batch: int = PRUNE_BATCH) -> int:
    """Delete every hand finished before ``cutoff`` (ms) and its index rows, ``batch``
    hands per transaction; return how many hands this call deleted."""
    total = 0
    while True:
        async with engine.begin() as conn:
            ids = list(
                await conn.scalars(
                    select(hands.c.hand_id)
                    .where(hands.c.finished_ms < cutoff)
                    .order_by(hands.c.finished_ms, hands.c.hand_id)
                    .limit(batch)
                )
            )
            if ids:
                await conn.execute(delete(player_hands).where(player_hands.c.hand_id.in_(ids)))
                deleted = await conn.execute(delete(hands).where(hands.c.hand_id.in_(ids)))
                # Another replica may have deleted some first: count only ours.
                total += max(0, deleted.rowcount or 0)
        if len(ids) < batch:
            return total


async def prune_once(engine: AsyncEngine, days: int, *, now_ms: int | None = None) -> int:
    """One prune for a retention of ``days`` (0: nothing), logged."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    cutoff = cutoff_ms(now, days)
    if cutoff is None:
        return 0
    pruned = await prune_before(engine, cutoff)
    when = datetime.fromtimestamp(cutoff / 1000, UTC).isoformat(timespec="seconds")
    log.info("pruned %d hands finished before %s (retention %d days)", pruned, when, days)
    return pruned


async def prune_daily(
    engine: AsyncEngine,
    days: int,
    *,
    first: float = FIRST_PRUNE_SECONDS,
    interval: float = PRUNE_INTERVAL_SECONDS,
) -> None:
    """Prune ``first`` seconds from now, then every ``interval``, until cancelled; a
    failed prune (the database away) is logged and tried again at the next one."""
    if days <= 0:
        log.info("history keeps every hand (KALARO_HISTORY_RETENTION_DAYS=0)")
        return
    await asyncio.sleep(first)
    while True:
        try:
            await prune_once(engine, days)
        except Exception:
            log.warning("pruning history failed; trying again in %.0fs", interval, exc_info=True)
        await asyncio.sleep(interval)
