"""Players' stats from history's SQL: after storing real hands of every game (played by
bots through the pure rules) they equal what summing the records gives; a redelivered
hand counts once; practice hands are apart; rows stored before migration 2 are filled by
the backfill; the bus endpoint answers the same, and an unknown player gets nothing."""

from __future__ import annotations

from collections import defaultdict

from nats.aio.client import Client as NATS
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import request
from kalaro.proto import endpoints
from kalaro.proto.history import GameStats, GetPlayerStats, PlayerStats, StoredHand
from services.history import stats, store
from services.history.bootstrap import build_service
from services.history.handlers import history_deps
from services.history.outcome import winning_seats
from services.history.schema import player_hands
from tests.history_played import stored_played


def _hands(unique: str) -> list[StoredHand]:
    me, you, bot = f"{unique}-me", f"{unique}-you", f"{unique}-bot"
    seats = {
        "tongits": (me, you, bot),
        "mahjong": (you, me, bot, f"{unique}-bot2"),
        "kawuxing": (me, bot, you),
    }
    hands = [
        stored_played(game, s, users, prefix=unique)
        for game, users in seats.items()
        for s in range(4)
    ]
    practice = [
        stored_played("tongits", 10 + s, seats["tongits"], practice=True, prefix=unique)
        for s in range(2)
    ]
    return hands + practice


def _expected(hands: list[StoredHand], user_id: str) -> PlayerStats:
    """The stats summed straight from the records."""
    sums: dict[tuple[str, bool], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for item in hands:
        r = item.record
        seat = [p.user_id for p in r.players].index(user_id)
        row = sums[(r.game, item.practice)]
        row[0] += 1
        row[1] += seat in winning_seats(r.result)
        row[2] += r.payments[seat]
        row[3] = max(row[3], r.payments[seat])
    games = {
        practice: tuple(
            GameStats(game=g, hands=n, won=w, net=net, biggest_win=best)
            for (g, p), (n, w, net, best) in sorted(sums.items())
            if p == practice
        )
        for practice in (False, True)
    }
    return PlayerStats(user_id=user_id, games=games[False], practice=games[True])


async def test_stats_equal_the_records_sums_and_duplicates_count_once(
    engine: AsyncEngine, unique: str
) -> None:
    hands = _hands(unique)
    await store.store_hands(engine, hands[:5])
    await store.store_hands(engine, [*hands, hands[0], hands[3]])  # redelivered, repeated
    for user in (f"{unique}-me", f"{unique}-you"):
        got = await stats.player_stats(engine, user)
        assert got == _expected(hands, user)
        assert {g.game for g in got.games} == {"tongits", "mahjong", "kawuxing"}
        assert [g.hands for g in got.practice] == [2]
        assert all(g.net == 0 for g in got.practice)  # no bet, nothing paid
    # Bots are not indexed: no stats.
    assert await stats.player_stats(engine, f"{unique}-bot") == PlayerStats(user_id=f"{unique}-bot")


async def test_backfill_fills_rows_stored_before_the_stats(
    engine: AsyncEngine, unique: str
) -> None:
    hands = _hands(unique)
    await store.store_hands(engine, hands)
    # As migration 2 leaves the rows stored before it: defaults, not derived.
    async with engine.begin() as conn:
        await conn.execute(
            update(player_hands)
            .where(player_hands.c.hand_id.like(f"{unique}%"))
            .values(won=False, net=0, practice=False, derived=False)
        )
    me = f"{unique}-me"
    assert await stats.player_stats(engine, me) != _expected(hands, me)
    filled = await stats.backfill(engine, batch=7)  # several batches
    assert filled >= 2 * len(hands)
    assert await stats.player_stats(engine, me) == _expected(hands, me)
    assert await stats.backfill(engine) == 0  # idempotent: nothing left to fill


async def test_the_bus_endpoint_answers_the_stats(
    nc: NATS, engine: AsyncEngine, unique: str
) -> None:
    hands = _hands(unique)
    await store.store_hands(engine, hands)
    service = build_service(history_deps(engine))
    await service.start(nc)
    try:
        me = f"{unique}-me"
        got = await request(nc, endpoints.HISTORY_PLAYER_STATS, GetPlayerStats(user_id=me))
        assert got == _expected(hands, me)
        nobody = await request(
            nc, endpoints.HISTORY_PLAYER_STATS, GetPlayerStats(user_id=f"{unique}-nobody")
        )
        assert nobody == PlayerStats(user_id=f"{unique}-nobody")
    finally:
        await service.stop()
