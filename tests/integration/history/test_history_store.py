"""History's SQL: each hand stored once whatever arrives twice, and read back newest
first with a cursor, by game, or by id; the bus endpoints answer the same."""

from __future__ import annotations

import pytest
from nats.aio.client import Client as NATS
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import RemoteError, request
from kalaro.proto import endpoints
from kalaro.proto import errors as codes
from kalaro.proto.history import GetStoredHand, ListHands
from services.history import store
from services.history.bootstrap import build_service
from services.history.handlers import history_deps
from tests.integration.history.history_helpers import counts, stored


async def test_duplicates_within_and_across_batches_are_stored_once(
    engine: AsyncEngine, unique: str
) -> None:
    first = [stored(unique, 0), stored(unique, 1), stored(unique, 0)]
    await store.store_hands(engine, first)
    assert await counts(engine, unique) == (2, 4)  # two humans a hand; the bot is not indexed
    # The whole batch again (a redelivery), and a different record under a stored id:
    # the first one stays.
    changed = stored(unique, 1, finished_ms=5)
    await store.store_hands(engine, [*first, changed, stored(unique, 2)])
    assert await counts(engine, unique) == (3, 6)
    kept = await store.load_hand(engine, f"{unique}.1")
    assert kept == stored(unique, 1).record
    page = await store.player_page(
        engine, f"{unique}-a", game=None, before_ms=None, before_id=None, limit=10
    )
    assert [h.finished_ms for h in page] == [1_000_002, 1_000_001, 1_000_000]


async def test_pages_newest_first_with_a_cursor_and_a_game_filter(
    engine: AsyncEngine, unique: str
) -> None:
    # Six hands; 2 and 3 finished in the same millisecond (the id breaks the tie).
    items = [stored(unique, n, game="mahjong" if n % 2 else "tongits") for n in range(6)]
    items[3] = stored(unique, 3, game="mahjong", finished_ms=items[2].finished_ms)
    await store.store_hands(engine, items)
    user = f"{unique}-b"
    seen: list[str] = []
    cursor: tuple[int | None, str | None] = (None, None)
    while True:
        page = await store.player_page(
            engine, user, game=None, before_ms=cursor[0], before_id=cursor[1], limit=2
        )
        seen += [h.hand_id for h in page]
        if len(page) < 2:
            break
        cursor = (page[-1].finished_ms, page[-1].hand_id)
    assert seen == [f"{unique}.{n}" for n in (5, 4, 3, 2, 1, 0)]
    mahjong = await store.player_page(
        engine, user, game="mahjong", before_ms=None, before_id=None, limit=10
    )
    assert [h.hand_id for h in mahjong] == [f"{unique}.{n}" for n in (5, 3, 1)]
    # The summary is from the asking player's seat: seat 1 won hand 1.
    one = next(h for h in mahjong if h.hand_id == f"{unique}.1")
    assert (one.seat, one.won, one.credits) == (1, True, 20)
    assert (
        await store.player_page(
            engine, f"{unique}-bot", game=None, before_ms=None, before_id=None, limit=10
        )
        == []
    )


async def test_the_endpoints_answer_from_sql(nc: NATS, engine: AsyncEngine, unique: str) -> None:
    await store.store_hands(engine, [stored(unique, n) for n in range(3)])
    service = build_service(history_deps(engine))
    await service.start(nc)
    try:
        listed = await request(
            nc, endpoints.HISTORY_LIST_HANDS, ListHands(user_id=f"{unique}-a", limit=2)
        )
        assert [h.hand_id for h in listed.hands] == [f"{unique}.2", f"{unique}.1"]
        record = await request(nc, endpoints.HISTORY_GET_HAND, GetStoredHand(hand_id=f"{unique}.0"))
        assert record == stored(unique, 0).record
        with pytest.raises(RemoteError) as missing:
            await request(nc, endpoints.HISTORY_GET_HAND, GetStoredHand(hand_id=f"{unique}.9"))
        assert missing.value.code == codes.NOT_FOUND
        with pytest.raises(RemoteError) as bad:
            await request(
                nc, endpoints.HISTORY_LIST_HANDS, ListHands(user_id=f"{unique}-a", limit=0)
            )
        assert bad.value.code == codes.BAD_REQUEST
    finally:
        await service.stop()
