"""History's export endpoint over real NATS: whole records oldest first, page by page
to the end, a player's own only, or every hand of a time range; bad limits refused."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
from nats.aio.client import Client as NATS
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import RemoteError, Service
from kalaro.bus import request as bus_request
from kalaro.proto import endpoints
from kalaro.proto import errors as codes
from kalaro.proto.engine import HandRecord, Player
from kalaro.proto.history import ExportHands, StoredHand
from services.history import store
from services.history.bootstrap import build_service
from services.history.handlers import history_deps
from tests.integration.history.history_helpers import stored


@pytest.fixture
async def history(nc: NATS, engine: AsyncEngine) -> AsyncIterator[Service]:
    service = build_service(history_deps(engine))
    await service.start(nc)
    yield service
    await service.stop()


def _someone_elses(unique: str, n: int, finished_ms: int) -> StoredHand:
    item = stored(unique, n, finished_ms=finished_ms)
    players = (Player(user_id=f"{unique}-z", display_name="Z"), *item.record.players[1:])
    return msgspec.structs.replace(
        item, record=msgspec.structs.replace(item.record, players=players)
    )


async def _all(nc: NATS, asking: ExportHands) -> tuple[list[HandRecord], int]:
    """Every page to the end: the records, and how many pages it took."""
    found: list[HandRecord] = []
    pages = 0
    while True:
        page = await bus_request(nc, endpoints.HISTORY_EXPORT_HANDS, asking)
        pages += 1
        found.extend(page.records)
        if page.last_ms is None:
            return found, pages
        asking = msgspec.structs.replace(asking, after_ms=page.last_ms, after_id=page.last_id)


async def test_a_players_records_page_by_page(
    nc: NATS, engine: AsyncEngine, history: Service, unique: str
) -> None:
    # 11 of A's hands, two finishing at the same millisecond (the cursor's id breaks ties).
    mine = [stored(unique, n, finished_ms=5_000 + min(n, 9)) for n in range(11)]
    others = [_someone_elses(unique, 100 + n, 5_000 + n) for n in range(4)]
    await store.store_hands(engine, mine + others)
    records, pages = await _all(nc, ExportHands(user_id=f"{unique}-a", limit=3))
    assert pages == 4
    expected = sorted(mine, key=lambda s: (s.finished_ms, s.record.hand_id))
    assert records == [s.record for s in expected]  # each once, oldest first, whole
    theirs, _ = await _all(nc, ExportHands(user_id=f"{unique}-z", limit=100))
    assert {r.hand_id for r in theirs} == {s.record.hand_id for s in others}


async def test_every_hand_of_a_time_range(
    nc: NATS, engine: AsyncEngine, history: Service, unique: str
) -> None:
    await store.store_hands(engine, [stored(unique, n, finished_ms=1_000 * n) for n in range(10)])
    records, _ = await _all(nc, ExportHands(since_ms=3_000, until_ms=7_000, limit=2))
    assert [r.hand_id for r in records] == [f"{unique}.{n}" for n in range(3, 7)]


@pytest.mark.parametrize("limit", [0, 101])
async def test_a_bad_limit_is_refused(nc: NATS, history: Service, limit: int) -> None:
    with pytest.raises(RemoteError) as refused:
        await bus_request(nc, endpoints.HISTORY_EXPORT_HANDS, ExportHands(limit=limit))
    assert refused.value.code == codes.BAD_REQUEST


async def test_the_gateways_stream_stops_short_when_history_fails(
    nc: NATS, engine: AsyncEngine, history: Service, unique: str
) -> None:
    """Pages streamed as one JSON array; history gone midway: the stream raises and what
    was sent is no valid JSON (never a valid-looking part of the file)."""
    from types import SimpleNamespace

    from services.gateway import routes_export

    await store.store_hands(engine, [stored(unique, n, finished_ms=1_000 + n) for n in range(5)])
    request: Any = SimpleNamespace(app=SimpleNamespace(state=SimpleNamespace(nc=nc)))
    asking = ExportHands(user_id=f"{unique}-a", limit=2)

    async def stream(sent: list[bytes], *, stop_history: bool) -> None:
        first = await routes_export._page(request, asking)
        async for chunk in routes_export._records(request, asking, first):
            sent.append(chunk)
            if stop_history and len(sent) == 3:  # "[" and the first page's two records
                await history.stop()

    whole: list[bytes] = []
    await stream(whole, stop_history=False)
    assert [r["hand_id"] for r in json.loads(b"".join(whole))] == [
        f"{unique}.{n}" for n in range(5)
    ]
    sent: list[bytes] = []
    with pytest.raises(RemoteError):
        await stream(sent, stop_history=True)
    assert len(sent) == 3  # "[" and the first page's two records
    with pytest.raises(json.JSONDecodeError):
        json.loads(b"".join(sent))
