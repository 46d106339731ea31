"""The gateway's source of finished hands (``services.gateway.hand_source``): history
first, the engine's Redis copy for a hand history has not stored yet, each hand once
in a list; history down, the engines answer alone. Real NATS; the engine side is a
stand-in service answering the engine's subjects from a dict."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from nats.aio.client import Client as NATS
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import RemoteError, Service, ServiceError
from kalaro.games.registry import game_names
from kalaro.proto import endpoints
from kalaro.proto import errors as codes
from kalaro.proto.engine import GetHandRecord, HandRecord, ListMyHands, MyHands
from kalaro.records import summary
from services.gateway.hand_source import find_record, player_hands
from services.history import store
from services.history.bootstrap import build_service
from services.history.handlers import history_deps
from tests.integration.history.history_helpers import stored


@pytest.fixture
async def engines(nc: NATS, unique: str) -> AsyncIterator[dict[str, HandRecord]]:
    """Every game's engine, answering records and "my hands" from one dict (what Redis
    still holds). Stored hand ``n`` finished at 1_000_000 + n."""
    held: dict[str, HandRecord] = {}
    service = Service(f"engines-{unique}")

    async def record(req: GetHandRecord) -> HandRecord:
        if req.hand_id not in held:
            raise ServiceError(codes.NOT_FOUND, "no such hand")
        return held[req.hand_id]

    def mine_of(game: str):  # type: ignore[no-untyped-def]
        async def mine(req: ListMyHands) -> MyHands:
            found = [
                summary(r, req.user_id, 1_000_000 + int(r.hand_id.rsplit(".", 1)[1]))
                for r in held.values()
                if r.game == game and any(p.user_id == req.user_id for p in r.players)
            ]
            top = req.before_ms if req.before_ms is not None else 2**62
            return MyHands(hands=tuple(h for h in found if h.finished_ms < top))

        return mine

    for game in game_names():
        service.add(endpoints.engine_record(game), record)
        service.add(endpoints.engine_my_hands(game), mine_of(game))
    await service.start(nc)
    yield held
    await service.stop()


async def test_history_first_then_the_engines_copy(
    nc: NATS, engine: AsyncEngine, engines: dict[str, HandRecord], unique: str
) -> None:
    await store.store_hands(engine, [stored(unique, n) for n in range(3)])
    for n in (2, 3):  # hand 2 in both; hand 3 not in history yet
        engines[f"{unique}.{n}"] = stored(unique, n).record
    history = build_service(history_deps(engine))
    await history.start(nc)
    try:
        assert await find_record(nc, "tongits", f"{unique}.0") == stored(unique, 0).record
        assert await find_record(nc, "tongits", f"{unique}.3") == stored(unique, 3).record
        assert await find_record(nc, "tongits", f"{unique}.9") is None
        listed = await player_hands(nc, f"{unique}-a", game=None, before_ms=None, limit=10)
        assert [h.hand_id for h in listed] == [f"{unique}.{n}" for n in (3, 2, 1, 0)]
        older = await player_hands(nc, f"{unique}-a", game="tongits", before_ms=1_000_002, limit=1)
        assert [h.hand_id for h in older] == [f"{unique}.1"]
        assert await player_hands(nc, f"{unique}-a", game="mahjong", before_ms=None, limit=5) == []
    finally:
        await history.stop()

    # History down: the engines' copies still answer, and a hand they do not have is
    # "try again", not "no such hand".
    assert await find_record(nc, "tongits", f"{unique}.3") == stored(unique, 3).record
    with pytest.raises(RemoteError) as down:
        await find_record(nc, "tongits", f"{unique}.0")
    assert down.value.code == codes.UNAVAILABLE
    listed = await player_hands(nc, f"{unique}-a", game=None, before_ms=None, limit=10)
    assert [h.hand_id for h in listed] == [f"{unique}.3", f"{unique}.2"]
