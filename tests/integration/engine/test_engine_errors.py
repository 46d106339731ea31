"""Refused moves: each gets its error code over NATS and leaves the hand exactly as it was.

The slot (state, log, version) is compared byte for byte before and after every refusal,
and no view is published for a refused move.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest
from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError, request
from kalaro.games.cards import DECK
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.engine import Act, Acted
from tests.integration.engine.engine_helpers import Feed, Replicas, start_hand, start_message


async def _refused(nc: NATS, message: Act) -> str:
    with pytest.raises(RemoteError) as refused:
        await request(nc, subjects.engine_act("tongits"), message, Acted)
    return refused.value.code


async def test_refused_actions_change_nothing(nc: NATS, workers: Replicas, unique: str) -> None:
    await workers.start("tongits")
    start = start_message("tongits", unique, dealer=0)
    feed = await Feed.open(nc, start.table_id, 3)
    started = await start_hand(nc, "tongits", start)
    await feed.wait_version(started.version)
    store = workers.store("tongits")
    key = store.key(start.table_id)
    log_key = store.log_key(start.table_id)
    before = await workers.redis.hgetall(key)
    log_before = await workers.redis.execute("LRANGE", log_key, 0, -1)
    v = started.version
    dealer = start.players[0].user_id
    other = start.players[1].user_id
    dealer_hand = feed.view(0, v)["hand"]
    other_hand = feed.view(1, v)["hand"]
    not_held = next(card for card in DECK if card not in dealer_hand)

    def act(user: str, action: Any, version: int = v) -> Act:
        raw = action if isinstance(action, bytes) else msgspec.json.encode(action)
        return Act(table_id=start.table_id, user_id=user, version=version, action=msgspec.Raw(raw))

    cases: list[tuple[Act, str]] = [
        # someone who is not in this hand
        (act(f"{unique}-stranger", {"type": "discard", "card": dealer_hand[0]}), codes.FORBIDDEN),
        # a seated player out of turn (the dealer's first turn is on)
        (act(other, {"type": "discard", "card": other_hand[0]}), "not_your_turn"),
        # the right player, against an old or a future version
        (act(dealer, {"type": "discard", "card": dealer_hand[0]}, v - 1), "stale_version"),
        (act(dealer, {"type": "discard", "card": dealer_hand[0]}, v + 1), "stale_version"),
        # malformed: not JSON, an unknown action, a bad card name, a missing field
        (act(dealer, b"{not json"), codes.BAD_REQUEST),
        (act(dealer, {"type": "shuffle"}), codes.BAD_REQUEST),
        (act(dealer, {"type": "discard", "card": "11X"}), codes.BAD_REQUEST),
        (act(dealer, {"type": "lay_off", "cards": []}), codes.BAD_REQUEST),
        # illegal by the rules: the engine's own codes
        (act(dealer, {"type": "discard", "card": not_held}), "card_not_in_hand"),
        (act(dealer, {"type": "draw"}), "already_drew"),
        (act(dealer, {"type": "fight"}), "no_draw_call"),
        # the time-out is the server's, never a client's
        (act(dealer, {"type": "time_out"}), codes.FORBIDDEN),
    ]
    for message, code in cases:
        assert await _refused(nc, message) == code, message
    assert await workers.redis.hgetall(key) == before
    assert await workers.redis.execute("LRANGE", log_key, 0, -1) == log_before
    await asyncio.sleep(0.05)
    assert set(feed.public_views) == {v}, "a refused move publishes nothing"

    # ...and the move that is legal still goes through, once.
    acted = await request(
        nc,
        subjects.engine_act("tongits"),
        act(dealer, {"type": "discard", "card": dealer_hand[0]}),
        Acted,
    )
    assert acted.version == v + 1
    code = await _refused(nc, act(dealer, {"type": "discard", "card": dealer_hand[1]}))
    assert code == "stale_version"
    await feed.close()


async def test_acting_where_no_hand_exists_is_not_found(
    nc: NATS, workers: Replicas, unique: str
) -> None:
    await workers.start("tongits")
    message = Act(
        table_id=f"{unique}-nowhere", user_id="u", version=1, action=msgspec.Raw(b'{"type":"draw"}')
    )
    assert await _refused(nc, message) == codes.NOT_FOUND
