"""The fair-play report over real history: the ranked service reads history's export
(a real history service on the same database), finds credit flowing one way between
two accounts with their hands as evidence, and leaves practice hands out."""

from __future__ import annotations

from nats.aio.client import Client as NATS
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import request as bus_request
from kalaro.bus.redislink import RedisLink
from kalaro.proto import endpoints
from kalaro.proto import ranked as rk
from kalaro.proto.history import StoredHand
from services.history.bootstrap import build_service as build_history
from services.history.handlers import history_deps
from services.history.schema import migrate_history
from services.history.store import store_hands
from services.ranked.bootstrap import build_service
from services.ranked.handlers import RankedDeps
from services.ranked.names import NameCache
from services.ranked.queue import RankedQueue
from services.ranked.store import SqlRankedStore
from tests.integration.ranked.ranked_helpers import ranked_record


async def test_credit_flowing_one_way_is_found_in_historys_hands(
    nc: NATS, redis: RedisLink, engine: AsyncEngine, unique: str
) -> None:
    await migrate_history(engine)
    dumper, taker = f"{unique}dumper", f"{unique}taker"
    now_ms = 1_000_000
    stored = [
        # The dumper pays the taker 25 a hand, at a dozen tables with strangers.
        StoredHand(
            record=ranked_record(
                f"{unique}.{n}", (dumper, taker, f"{unique}x{n}"), (-25, 30, -5), ranked=False
            ),
            finished_ms=now_ms + n,
        )
        for n in range(12)
    ]
    practice = ranked_record(f"{unique}.p", (dumper, taker, f"{unique}y"), (0, 0, 0), practice=True)
    stored.append(StoredHand(record=practice, finished_ms=now_ms + 50, practice=True))
    await store_hands(engine, stored)
    history = build_history(history_deps(engine))
    deps = RankedDeps(
        store=SqlRankedStore(engine),
        queue=RankedQueue(redis, namespace=f"{unique}:"),
        nc=nc,
        names=NameCache(None),
        clock=lambda: (now_ms + 60_000) / 1000,
    )
    ranked = build_service(deps)
    await history.start(nc)
    await ranked.start(nc)
    try:
        ask = rk.GetFairPlay(admin_id=f"{unique}admin", game="tongits", days=1)
        report = await bus_request(nc, endpoints.RANKED_FAIR_PLAY, ask, timeout=10)
    finally:
        await ranked.stop()
        await history.stop()
    assert report.note == "" and report.hands_read == 12  # the practice hand is left out
    [flow] = [f for f in report.findings if f.kind == "one_way_credit"]
    assert set(flow.accounts) == {dumper, taker}
    assert set(flow.hand_ids) == {f"{unique}.{n}" for n in range(12)}
    assert dumper in flow.detail and "100%" in flow.detail
