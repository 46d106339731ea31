"""A ranked table's spectators see it late (services/gateway/watch_delay.py): each
audience frame reaches them only after DELAY_MOVES more moves, seated players get
theirs at once, and the hand's end releases the rest."""

from __future__ import annotations

import asyncio
from typing import cast

from msgspec.structs import replace
from nats.aio.client import Client as NATS

from services.gateway.table_feed import TableFeed
from services.gateway.watch_delay import DELAY_MOVES, AudienceDelay
from tests.unit.test_gateway_fanout import Sink, _steps, _table


async def test_a_watcher_of_a_ranked_table_lags_by_the_delay_and_catches_up_at_the_end() -> None:
    steps, hand = _steps("tongits", seed=5, count=12)
    assert len(hand) > DELAY_MOVES + 2
    table = replace(_table(steps.rules.seats), ranked=True)
    feed = TableFeed(cast(NATS, None), table)
    player, watcher = Sink("u0"), Sink("w")
    feed.attach(player.conn)
    feed.attach(watcher.conn)
    audiences = [steps.audience_frame(s) for s in hand]
    for index, stepped in enumerate(hand):
        feed.fan_out(steps.table_frames(stepped, watched=True))
        await asyncio.sleep(0)
        assert player.take() == [dict(stepped.frames)[0]]  # the player: at once
        lagged = index - DELAY_MOVES
        assert watcher.take() == ([audiences[lagged]] if lagged >= 0 else [])
        assert feed.delayed_view() == (audiences[lagged] if lagged >= 0 else None)
    # The hand ends (the lobby's table frame): what was held is shown, in order.
    await feed.take_table(replace(table, status="waiting", hand_id=None, version=2))
    await asyncio.sleep(0)
    assert watcher.take() == audiences[len(hand) - DELAY_MOVES :]
    assert feed.delayed_view() == audiences[-1]


async def test_an_ordinary_tables_watchers_are_not_delayed() -> None:
    steps, hand = _steps("tongits", seed=5, count=4)
    feed = TableFeed(cast(NATS, None), _table(steps.rules.seats))
    watcher = Sink("w")
    feed.attach(watcher.conn)
    feed.fan_out(steps.table_frames(hand[0], watched=True))
    await asyncio.sleep(0)
    assert watcher.take() == [steps.audience_frame(hand[0])]
    assert feed.delay is None and feed.delayed_view() is None


def test_a_new_hand_shows_nothing_of_the_last() -> None:
    delay = AudienceDelay(moves=2)
    assert [delay.hold(f) for f in (b"1", b"2", b"3")] == [None, None, b"1"]
    assert delay.release() == [b"2", b"3"] and delay.shown == b"3"
    delay.forget()
    assert delay.shown is None and delay.hold(b"4") is None
