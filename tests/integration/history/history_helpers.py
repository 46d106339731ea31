"""Records to store, publish and count in the history tests."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Awaitable, Callable

import msgspec
import pytest
from nats.aio.client import Client as NATS
from nats.js.errors import NotFoundError
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus.codec import encode
from kalaro.proto import subjects
from kalaro.proto.engine import HandRecord, Player
from kalaro.proto.history import StoredHand
from services.history.schema import hands, player_hands


def stored(unique: str, n: int, *, game: str = "tongits", finished_ms: int = 0) -> StoredHand:
    """Hand ``<unique>.<n>`` of two players and a bot; seat ``n % 3`` won."""
    players = (
        Player(user_id=f"{unique}-a", display_name="A"),
        Player(user_id=f"{unique}-b", display_name="B"),
        Player(user_id=f"{unique}-bot", display_name="Bot", is_bot=True),
    )
    winner = n % 3
    record = HandRecord(
        game=game,
        table_id=f"{unique}-t",
        hand_id=f"{unique}.{n}",
        options={},
        bet=10,
        players=players,
        dealer=0,
        seed_commitment="c" * 64,
        server_seed="s" * 64,
        entropy=("e1",),
        actions=((0, {"type": "draw"}),),
        initial_hands=([], [], []),
        result={"winner": winner, "ending": "tongits"},
        payments=tuple(20 if i == winner else -10 for i in range(3)),
    )
    return StoredHand(record=record, finished_ms=finished_ms or 1_000_000 + n)


def voided(unique: str, n: int, *, finished_ms: int = 0) -> StoredHand:
    """Hand ``<unique>.<n>`` as :func:`stored` has it, but voided before its end: the
    actions played so far, no result, nothing paid."""
    item = stored(unique, n, finished_ms=finished_ms)
    record = msgspec.structs.replace(item.record, result=None, payments=(0, 0, 0), voided=True)
    return msgspec.structs.replace(item, record=record)


async def publish(nc: NATS, item: StoredHand, msg_id: str | None = None) -> None:
    hand_id = item.record.hand_id
    await nc.jetstream().publish(
        subjects.hand_record(hand_id), encode(item), headers={"Nats-Msg-Id": msg_id or hand_id}
    )


async def counts(engine: AsyncEngine, unique: str) -> tuple[int, int]:
    """Rows of this test's hands in (history_hands, history_player_hands)."""
    async with engine.connect() as conn:
        h = await conn.scalar(select(func.count()).where(hands.c.hand_id.like(f"{unique}.%")))
        p = await conn.scalar(
            select(func.count()).where(player_hands.c.hand_id.like(f"{unique}.%"))
        )
    return int(h or 0), int(p or 0)


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout}s")
        await asyncio.sleep(0.05)


async def stop_history(child: asyncio.subprocess.Process, nc: NATS) -> None:
    """Stop a ``python -m services.history`` child (SIGTERM, kill after 30 s) and delete
    its durable consumer, so the next test starts from the stream's beginning."""
    if child.returncode is None:
        child.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(child.wait(), 30)
        except TimeoutError:
            child.kill()
            await child.wait()
    with contextlib.suppress(NotFoundError):
        await nc.jetstream().delete_consumer(
            subjects.RECORDS_STREAM, subjects.HISTORY_RECORDS_CONSUMER
        )
