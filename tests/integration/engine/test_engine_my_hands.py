"""A player's finished hands (``engine.<game>.myhands``, for "My hands"), on the
session's NATS and Redis: every human player's hands newest first, paged by the time
they finished; bots keep no index; a bad page size is refused."""

from __future__ import annotations

import random

import msgspec
import pytest
from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError, request
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.engine import ListMyHands, MyHands, Player
from tests.integration.engine.engine_helpers import (
    BET,
    FakeClock,
    Feed,
    Replicas,
    play_random,
    start_hand,
    start_message,
)


async def my_hands(nc: NATS, user_id: str, **page: int) -> MyHands:
    message = ListMyHands(user_id=user_id, **page)
    return await request(nc, subjects.engine_my_hands("tongits"), message, MyHands)


async def test_each_players_hands_newest_first(
    js_nc: NATS, workers: Replicas, clock: FakeClock, unique: str
) -> None:
    nc = js_nc
    await workers.start("tongits")
    payments = {}
    for n, hand in enumerate(["h1", "h2"]):
        start = start_message("tongits", unique, table="t", hand=hand, dealer=n)
        # Seat 2 is a bot: it keeps no hand history.
        players = (
            *start.players[:2],
            Player(user_id=f"{unique}-bot", display_name="Bot", is_bot=True),
        )
        start = msgspec.structs.replace(start, players=players)
        feed = await Feed.open(nc, start.table_id, 3)
        started = await start_hand(nc, "tongits", start)
        await play_random(nc, "tongits", start, feed, random.Random(n), started.version)
        await feed.close()
        record = await workers.store("tongits").load_record(start.hand_id)
        assert record is not None
        payments[start.hand_id] = record.payments
        clock.advance(1000)

    page = await my_hands(nc, f"{unique}-u1")
    assert [h.hand_id for h in page.hands] == [f"{unique}-h2", f"{unique}-h1"]
    newest = page.hands[0]
    assert newest.seat == 1 and newest.game == "tongits" and newest.bet == BET
    assert newest.table_id == f"{unique}-t"
    assert newest.players == ("Player 0", "Player 1", "Bot")
    assert newest.credits == payments[newest.hand_id][1]
    assert newest.finished_ms > page.hands[1].finished_ms

    first = await my_hands(nc, f"{unique}-u0", limit=1)
    assert [h.hand_id for h in first.hands] == [f"{unique}-h2"]
    older = await my_hands(nc, f"{unique}-u0", limit=1, before_ms=first.hands[0].finished_ms)
    assert [h.hand_id for h in older.hands] == [f"{unique}-h1"]
    assert (await my_hands(nc, f"{unique}-bot")).hands == ()
    assert (await my_hands(nc, f"{unique}-nobody")).hands == ()
    for limit in (0, 101):
        with pytest.raises(RemoteError) as refused:
            await my_hands(nc, f"{unique}-u0", limit=limit)
        assert refused.value.code == codes.BAD_REQUEST
