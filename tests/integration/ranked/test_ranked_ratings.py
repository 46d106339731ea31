"""Ratings from the RECORDS stream: each rated hand applied exactly once, whatever is
published twice, redelivered after a failure, or published while ranked is down; only
rateable hands change a rating; the rating changes within seconds of the record."""

from __future__ import annotations

import itertools

from nats.aio.client import Client as NATS
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus.jetstream import DurableConsumer, ensure_stream, publish_once
from kalaro.proto import subjects
from kalaro.proto.engine import HandRecord
from kalaro.proto.history import StoredHand
from kalaro.settings import Settings
from services.ranked.ingest import start_ratings_consumer
from services.ranked.ratings import shown_rating
from services.ranked.schema import rated_hands
from services.ranked.store import SqlRankedStore
from tests.integration.ranked.ranked_helpers import eventually, ranked_record


async def _publish(nc: NATS, record: HandRecord, msg_id: str | None = None) -> None:
    await ensure_stream(nc.jetstream(), subjects.RECORDS_STREAM)
    message = StoredHand(record=record, finished_ms=1_000, practice=record.practice)
    await publish_once(
        nc.jetstream(), subjects.hand_record(record.hand_id), message, msg_id or record.hand_id
    )


async def _drained(nc: NATS, durable: str) -> bool:
    info = await nc.jetstream().consumer_info(subjects.RECORDS_STREAM, durable)
    return bool(info.num_pending == 0 and info.num_ack_pending == 0)


async def _hands(store: SqlRankedStore, user_id: str) -> int:
    row = (await store.ratings_of(user_id)).get("tongits")
    return 0 if row is None else row.rating.hands


async def _rated_count(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return int(await conn.scalar(select(func.count()).select_from(rated_hands)) or 0)


async def test_a_hand_is_rated_once_through_duplicates_redelivery_and_restarts(
    nc: NATS, engine: AsyncEngine, settings: Settings, names: dict[str, str], unique: str
) -> None:
    store = SqlRankedStore(engine)
    players = (f"{unique}a", f"{unique}b", f"{unique}c")
    first = ranked_record(f"{unique}.1", players, (20, -10, -10))

    consumer = await start_ratings_consumer(
        nc, store, settings, durable=names["durable"], subject=names["subject"]
    )
    await _publish(nc, first)
    took = await eventually(lambda: _has_hands(store, players[0], 1))
    assert took < 5.0, "a rated hand's rating changes within seconds of its record"
    winner = (await store.ratings_of(players[0]))["tongits"]
    assert winner.rating.last_change > 0 and winner.shown == shown_rating(winner.rating)
    loser = (await store.ratings_of(players[1]))["tongits"]
    assert loser.rating.hands == 1 and loser.rating.last_hand_id == first.hand_id

    # The same record again under another message id: JetStream stores and delivers it.
    await _publish(nc, first, msg_id=f"again-{first.hand_id}")
    await eventually(lambda: _drained(nc, names["durable"]))
    assert [await _hands(store, u) for u in players] == [1, 1, 1]
    await consumer.stop()

    # Ranked is down while two more hands finish (one of them published twice); a new
    # process with the same durable picks them up, each once.
    second = ranked_record(f"{unique}.2", players, (-10, 20, -10))
    third = ranked_record(f"{unique}.3", players, (-10, -10, 20))
    for record in (second, third, second):
        await _publish(nc, record, msg_id=f"{record.hand_id}-{id(record)}-{record is second}")
    await _publish(nc, second, msg_id=f"late-{second.hand_id}")
    consumer = await start_ratings_consumer(
        nc, store, settings, durable=names["durable"], subject=names["subject"]
    )
    await eventually(lambda: _drained(nc, names["durable"]))
    await consumer.stop()
    assert [await _hands(store, u) for u in players] == [3, 3, 3]
    assert await _rated_count(engine) == 3


async def _has_hands(store: SqlRankedStore, user_id: str, hands: int) -> bool:
    return await _hands(store, user_id) >= hands


async def test_a_record_redelivered_after_its_commit_changes_nothing(
    nc: NATS, engine: AsyncEngine, names: dict[str, str], unique: str
) -> None:
    """The crash between commit and ack: the handler applies the hand, then fails
    before the ack, so JetStream delivers the record again; the mark stops the repeat."""
    store = SqlRankedStore(engine)
    players = (f"{unique}a", f"{unique}b", f"{unique}c")
    record = ranked_record(f"{unique}.1", players, (20, -10, -10))
    calls = itertools.count(1)
    applied: list[int] = []

    async def crash_after_commit(message: StoredHand) -> None:
        changes = await store.apply_hand(message.record, 1_000)
        applied.append(len(changes))
        if next(calls) == 1:
            raise RuntimeError("the process died before its ack")

    await ensure_stream(nc.jetstream(), subjects.RECORDS_STREAM)
    consumer = DurableConsumer(
        nc, stream=subjects.RECORDS_STREAM, subject=names["subject"], durable=names["durable"],
        message_type=StoredHand, handler=crash_after_commit,
    )  # fmt: skip
    await consumer.start()
    await _publish(nc, record)
    await eventually(lambda: _delivered_twice(applied))
    await eventually(lambda: _drained(nc, names["durable"]))
    await consumer.stop()
    assert applied[:2] == [3, 0], "delivered twice, applied the first time only"
    assert [await _hands(store, u) for u in players] == [1, 1, 1]


async def _delivered_twice(applied: list[int]) -> bool:
    return len(applied) >= 2


async def test_only_rateable_hands_change_ratings(
    nc: NATS, engine: AsyncEngine, settings: Settings, names: dict[str, str], unique: str
) -> None:
    store = SqlRankedStore(engine)
    players = (f"{unique}a", f"{unique}b", f"{unique}c")
    unrated = [
        ranked_record(f"{unique}.1", players, (20, -10, -10), ranked=False),  # public table
        ranked_record(f"{unique}.2", players, (0, 0, 0), practice=True),
        ranked_record(f"{unique}.3", players, (20, -10, -10), private=True),
        ranked_record(f"{unique}.4", players, (0, 0, 0), voided=True),
    ]
    consumer = await start_ratings_consumer(
        nc, store, settings, durable=names["durable"], subject=names["subject"]
    )
    for record in unrated:
        await _publish(nc, record)
    await eventually(lambda: _drained(nc, names["durable"]))
    assert await store.ratings_of(players[0]) == {}
    assert await _rated_count(engine) == 0
    rated = ranked_record(f"{unique}.5", players, (20, -10, -10))
    await _publish(nc, rated)
    await eventually(lambda: _has_hands(store, players[0], 1))
    await consumer.stop()
    assert await _rated_count(engine) == 1
