"""History's endpoints answer from SQL. What the store itself does (each hand stored
once, pages newest first with a cursor) is the shared contract,
tests/contracts/history_store.py, run here by test_hand_history_sql.py."""

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
from tests.integration.history.history_helpers import stored


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
