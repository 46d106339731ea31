"""The wallet's reconciler against real engine workers, a real database and NATS.

Nothing stays held: each hand left open is settled from the engine's record, voided,
left alone while it is played, or released once the engine has no trace of it. The
engine's results reach no wallet consumer here, exactly as if the RESULTS stream had
lost them.
"""

from __future__ import annotations

import random
import time
from collections.abc import AsyncIterator

import pytest
from nats.aio.client import Client as NATS
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import request
from kalaro.bus.redislink import RedisLink
from kalaro.devstack import NatsServer
from kalaro.games.registry import rules_for
from kalaro.proto import subjects
from kalaro.proto.engine import CancelHand, GetHandRecord, HandCancelled, StartHand
from kalaro.proto.wallet import HoldRequest
from kalaro.sql import create_engine
from services.engine import handlers
from services.history.bootstrap import build_service as build_history
from services.history.handlers import history_deps
from services.history.schema import migrate_history
from services.wallet import ledger
from services.wallet.reconciler import OLDEST_HOLD, Reconciler
from services.wallet.schema import holds, transactions
from tests.integration.engine.engine_helpers import (
    BET,
    FakeClock,
    Feed,
    Replicas,
    play_random,
    start_hand,
    start_message,
)
from tests.integration.wallet.wallet_helpers import Wallet

FUNDS = 1000


class _Clock:
    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


@pytest.fixture
async def history(nc: NATS, database_url: str, unique: str) -> AsyncIterator[None]:
    """The history service, holding no hand: an engine says "unknown" (the holds may be
    released) only when history, which keeps every finished hand, has none either."""
    engine = create_engine(database_url)
    await migrate_history(engine)
    service = build_history(history_deps(engine))
    await service.start(nc)
    yield
    await service.stop()
    await engine.dispose()


@pytest.fixture
async def workers(
    nats_server: NatsServer, redis: RedisLink, unique: str
) -> AsyncIterator[Replicas]:
    replicas = Replicas(nats_server.url, redis, f"t{unique}:", FakeClock())
    yield replicas
    await replicas.stop_all()


async def _held_for(wallet: Wallet, start: StartHand, game: str) -> int:
    """Fund the hand's players and hold their maximum loss, as the lobby's deal does."""
    rules = rules_for(game)
    max_loss = rules.max_loss_units(rules.options(start.options)) * start.bet
    for player in start.players:
        await wallet.fund(player.user_id, FUNDS)
    await ledger.place_holds(
        wallet.engine,
        start.table_id,
        start.hand_id,
        tuple(HoldRequest(user_id=p.user_id, amount=max_loss) for p in start.players),
        game,
    )
    return max_loss


async def _statuses(engine: AsyncEngine, hand_id: str) -> list[str]:
    async with engine.connect() as conn:
        rows = await conn.execute(select(holds.c.status).where(holds.c.hand_id == hand_id))
        return sorted(r.status for r in rows)


async def test_a_finished_hand_whose_settlement_was_lost_is_settled_from_its_record(
    wallet: Wallet, workers: Replicas, nc: NATS, unique: str
) -> None:
    replica = await workers.start("tongits")
    start = start_message("tongits", unique, bet=BET)
    await _held_for(wallet, start, "tongits")
    feed = await Feed.open(nc, start.table_id, 3)
    started = await start_hand(nc, "tongits", start)
    await play_random(nc, "tongits", start, feed, random.Random(5), started.version)
    await feed.close()
    record = await handlers.get_record(GetHandRecord(hand_id=start.hand_id), replica.worker)

    reconciler = Reconciler(wallet.engine, nc, settle_after=0)
    done = await reconciler.run_once()
    assert (done.looked_at, done.settled) == (1, 1)
    for player, credits in zip(start.players, record.payments, strict=True):
        balance = await wallet.balance(player.user_id)
        assert (balance.balance, balance.held) == (FUNDS + credits, 0)
    assert await _statuses(wallet.engine, start.hand_id) != ["held"] * 3
    again = await reconciler.run_once()
    assert again.looked_at == 0  # settled once; nothing left open
    report = await wallet.assert_books_balance()
    assert report.open_hold_count == 0 and OLDEST_HOLD._value.get() == 0


async def test_cancelled_voided_playing_kept_unknown_released_only_when_old(
    wallet: Wallet, workers: Replicas, nc: NATS, unique: str, history: None
) -> None:
    await workers.start("tongits")
    await workers.start("mahjong")
    cancelled = start_message("tongits", unique, table="t1", hand="cancelled")
    playing = start_message("mahjong", unique, table="t2", hand="playing")
    never = start_message("tongits", unique, table="t3", hand="never-started")
    # No Ka Wu Xing engine runs in this test: nobody can say what became of this one.
    unanswered = start_message("kawuxing", unique, table="t4", hand="unanswered")
    for start, game in (
        (cancelled, "tongits"),
        (playing, "mahjong"),
        (never, "tongits"),
        (unanswered, "kawuxing"),
    ):
        await _held_for(wallet, start, game)
    await start_hand(nc, "tongits", cancelled)
    await start_hand(nc, "mahjong", playing)
    voided = await request(
        nc,
        subjects.engine_cancel("tongits"),
        CancelHand(table_id=cancelled.table_id, hand_id=cancelled.hand_id),
        HandCancelled,
    )
    assert voided.voided

    clock = _Clock()
    reconciler = Reconciler(wallet.engine, nc, settle_after=0, release_after=600, clock=clock)
    first = await reconciler.run_once()
    assert (first.looked_at, first.voided, first.released, first.waiting) == (4, 1, 0, 3)
    assert await _statuses(wallet.engine, cancelled.hand_id) == ["released"] * 3
    assert await _statuses(wallet.engine, never.hand_id) == ["held"] * 3  # too young

    clock.offset = 601  # ten minutes on, the engine still has no trace of it
    later = await reconciler.run_once()
    assert (later.looked_at, later.released, later.waiting) == (3, 1, 2)
    assert await _statuses(wallet.engine, never.hand_id) == ["released"] * 3
    assert await _statuses(wallet.engine, playing.hand_id) == ["held"] * 4  # a live hand
    assert await _statuses(wallet.engine, unanswered.hand_id) == ["held"] * 3  # unknowable
    async with wallet.engine.connect() as conn:
        memo = await conn.scalar(
            select(transactions.c.memo).where(
                transactions.c.hand_id == never.hand_id, transactions.c.kind == "void"
            )
        )
    assert memo is not None and "released by the reconciler" in memo
    report = await wallet.assert_books_balance()
    assert report.open_hold_count == 7
    assert [h.hand_id for h in report.open_holds] == [playing.hand_id] * 4 + [
        unanswered.hand_id
    ] * 3  # oldest first
    assert OLDEST_HOLD._value.get() >= 600
