"""A bot's decision loop against a real engine worker on NATS, timers running.

Each bot is a :class:`~services.bots.player.BotSeat` whose socket is wired straight to
the engine (see ``bots_helpers``), so whole hands are bots only: they must finish, with
no time-out ever applied to a bot (Fight/Fold answers and Mahjong claims land inside
their windows), and concurrent answers in one call window must be retried after a
``stale_version`` until the window closes.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import msgspec
import pytest
from msgspec.structs import replace
from nats.aio.client import Client as NATS

from kalaro.bus import request
from kalaro.bus.redislink import RedisLink
from kalaro.devstack import NatsServer
from kalaro.proto import subjects
from kalaro.proto.engine import GetHandRecord, HandRecord, Player, StartHand
from services.bots.player import BotSeat, think_seconds
from tests.integration.bots.bots_helpers import (
    EngineSocket,
    FakeAccount,
    Tables,
    table_info,
    until,
)
from tests.integration.engine.engine_helpers import (
    FakeClock,
    Feed,
    Replicas,
    start_hand,
    wall_clock,
)


@pytest.fixture
async def workers(
    nats_server: NatsServer, redis: RedisLink, unique: str
) -> AsyncIterator[Replicas]:
    """Engine workers on the wall clock, so their timers run as in production."""
    replicas = Replicas(nats_server.url, redis, f"t{unique}:", FakeClock())
    yield replicas
    await replicas.stop_all()


@dataclass
class BotTable:
    """Bots (one per seat) at one table, their tasks, and the table's frames."""

    game: str
    table_id: str
    tables: Tables
    bots: list[BotSeat]
    tasks: list[asyncio.Task[None]]
    feed: Feed
    left: list[BotSeat] = field(default_factory=list)

    @property
    def sockets(self) -> list[EngineSocket]:
        return [bot.account.sock for bot in self.bots]  # type: ignore[attr-defined]

    def stale(self) -> int:
        return sum(outcome == "stale_version" for s in self.sockets for *_, outcome in s.acts)

    async def close(self, status: str = "ended") -> None:
        """The table closes: every bot must leave by itself."""
        info = self.tables.infos[self.table_id]
        await self.tables.publish(replace(info, status=status))  # type: ignore[arg-type]
        await asyncio.wait_for(asyncio.gather(*self.tasks), 5)
        assert len(self.left) == len(self.bots)
        await self.feed.close()


async def seat_bots(
    nc: NATS, game: str, table_id: str, seats: int, *, think_ms: int, status: str = "playing"
) -> BotTable:
    tables = Tables(nc)
    players = [f"{table_id}-bot{s}" for s in range(seats)]
    await tables.publish(table_info(table_id, game, players, status))
    feed = await Feed.open(nc, table_id, seats)
    left: list[BotSeat] = []

    async def on_leave(bot: BotSeat) -> None:
        left.append(bot)

    bots = [
        BotSeat(
            FakeAccount(user, f"Bot {seat}", EngineSocket(nc, game, user, tables), tables),  # type: ignore[arg-type]
            table_id,
            seat,
            game,
            think_ms=think_ms,
            on_leave=on_leave,
        )
        for seat, user in enumerate(players)
    ]
    tasks = [asyncio.create_task(bot.run()) for bot in bots]
    await asyncio.wait_for(asyncio.gather(*(b.settled.wait() for b in bots)), 5)
    return BotTable(game, table_id, tables, bots, tasks, feed, left)


def start(table: BotTable, hand_id: str, options: dict[str, object]) -> StartHand:
    info = table.tables.infos[table.table_id]
    return StartHand(
        table_id=table.table_id,
        hand_id=hand_id,
        options=options,
        bet=0,
        players=tuple(
            Player(user_id=s.user_id, display_name=s.display_name, is_bot=True)
            for s in info.seats
            if s
        ),
        server_seed=hashlib.sha256(hand_id.encode()).hexdigest(),
        entropy=tuple("" for _ in info.seats),
        dealer=0,
    )


async def record(nc: NATS, game: str, hand_id: str) -> HandRecord:
    message = GetHandRecord(hand_id=hand_id)
    return await request(nc, subjects.engine_record(game), message, HandRecord)


def time_outs(rec: HandRecord) -> list[int]:
    return [seat for seat, action in rec.actions if action["type"] == "time_out"]


async def test_bots_play_tongits_and_answer_draw_calls_inside_the_window(
    nc: NATS, workers: Replicas, unique: str
) -> None:
    await workers.start("tongits", background=True, now_ms=wall_clock)
    calls = 0
    for hand in range(6):  # smart bots call Draw in most hands; two calls are plenty
        table = await seat_bots(nc, "tongits", f"{unique}-t{hand}", 3, think_ms=30)
        hand_id = f"{unique}-h{hand}"
        await start_hand(nc, "tongits", start(table, hand_id, {"fight_seconds": 1}))
        await until(lambda t=table: bool(t.feed.results), 30, "the hand to end")
        rec = await record(nc, "tongits", hand_id)
        assert time_outs(rec) == [], rec.actions
        call = rec.result.get("draw_call")
        if call is not None:
            calls += 1
            assert call["timed_out"] == [False, False, False]
            answers = [call["answers"][s] for s in range(3) if s != call["caller"]]
            assert all(a in ("fight", "fold", "burned") for a in answers), call
        assert sum(bot.moves for bot in table.bots) == len(rec.actions)
        await table.close()
        if calls >= 2:
            break
    assert calls >= 1, "no Draw call in six hands of smart bots"


async def test_bots_play_mahjong_and_retry_answers_that_came_second(
    nc: NATS, workers: Replicas, unique: str
) -> None:
    await workers.start("mahjong", background=True, now_ms=wall_clock)
    stale = 0
    for hand in range(8):
        # No thinking at all: every seat a window waits on answers at the same moment,
        # so usually all but one get stale_version and must decide again on the newer
        # view. "Usually": on a busy machine the answers can happen to line up one after
        # another, so play on (up to eight hands) until the race has been seen.
        table = await seat_bots(nc, "mahjong", f"{unique}-m{hand}", 4, think_ms=0)
        hand_id = f"{unique}-h{hand}"
        await start_hand(nc, "mahjong", start(table, hand_id, {"call_seconds": 1}))
        await until(lambda t=table: bool(t.feed.results), 45, "the hand to end")
        rec = await record(nc, "mahjong", hand_id)
        assert time_outs(rec) == [], "a bot let a call window run out"
        answers = [a["type"] for _, a in rec.actions if a["type"] in ("claim", "pass")]
        assert answers, "no call window in a whole hand"
        stale += table.stale()
        await table.close("cancelled")
        if stale:
            break
    assert stale, "eight hands and never two answers at once"


async def test_a_slow_thinker_still_moves_inside_every_time_limit(
    nc: NATS, workers: Replicas, redis: RedisLink, unique: str
) -> None:
    """Ten seconds of 'thinking' against two-second limits: the limit wins, every time."""
    await workers.start("mahjong", background=True, now_ms=wall_clock)
    table = await seat_bots(nc, "mahjong", f"{unique}-slow", 4, think_ms=10_000)
    hand_id = f"{unique}-slow"
    options = {"call_seconds": 2, "turn_seconds": 2}
    await start_hand(nc, "mahjong", start(table, hand_id, options))
    store = workers.store("mahjong")

    async def actions() -> list[tuple[int, dict[str, object]]]:
        _, slot = await store.load(table.table_id)
        assert slot is not None
        return [(seat, msgspec.json.decode(a)) for seat, a in slot.actions]

    await asyncio.sleep(4.5)
    done = await actions()
    assert len(done) >= 6, done  # two moves a turn, each in a quarter of what is left
    assert [a for _, a in done if a["type"] == "time_out"] == []
    await table.close("cancelled")


async def test_a_bot_readies_between_hands_and_backs_off_when_deals_fail(
    nc: NATS, unique: str
) -> None:
    table = await seat_bots(nc, "tongits", f"{unique}-r", 3, think_ms=50, status="waiting")
    info = table.tables.infos[table.table_id]
    # Seated at a waiting table: each bot tapped Ready at once (before it settled).
    assert sorted(u for _, u in table.tables.readies) == sorted(s.user_id for s in info.seats if s)
    # A hand was played: everyone un-readied; the bots ready again after a short pause.
    info = table.tables.infos[table.table_id]
    unready = tuple(replace(s, ready=False) for s in info.seats if s)
    await table.tables.publish(replace(info, seats=unready, hand_no=1))
    await until(lambda: len(table.tables.readies) == 6, 3, "Ready after the hand")
    # A deal that fails un-readies everyone with no hand played: back off (>= 1 s).
    info = table.tables.infos[table.table_id]
    unready = tuple(replace(s, ready=False) for s in info.seats if s)
    await table.tables.publish(replace(info, seats=unready))
    await asyncio.sleep(0.5)
    assert len(table.tables.readies) == 6
    await until(lambda: len(table.tables.readies) == 9, 3, "Ready again after the backoff")
    await table.close()


async def test_a_removed_bot_leaves_the_table(nc: NATS, unique: str) -> None:
    table = await seat_bots(nc, "tongits", f"{unique}-x", 3, think_ms=50)
    info = table.tables.infos[table.table_id]
    removed = tuple(None if i == 2 else s for i, s in enumerate(info.seats))
    await table.tables.publish(replace(info, seats=removed))
    await asyncio.wait_for(table.tasks[2], 5)
    assert table.left == [table.bots[2]]
    assert table.table_id not in table.sockets[2].tables  # unsubscribed
    assert not table.tasks[0].done()
    await table.tables.publish(replace(info, status="cancelled"))
    await asyncio.wait_for(asyncio.gather(*table.tasks[:2]), 5)
    await table.feed.close()


def test_thinking_time_stays_inside_the_limit() -> None:
    now = 1_000_000
    assert think_seconds(800, 5, None, now) == 0.8
    assert think_seconds(800, 1, None, now) == 0.2  # a forced move (a draw): quicker
    assert think_seconds(800, 3, now + 2000, now) == 0.5  # a quarter of what is left
    assert think_seconds(800, 3, now + 10_000, now) == 0.8
    assert think_seconds(800, 3, now - 50, now) == 0.0  # late already: at once
