"""Players' stats from history's rows: one indexed aggregate per player, and the
start-up backfill of the rows stored before the stats existed (schema revision 0002).

What is shown, as a games platform would: a player's stats are public to any signed-in
player (like a profile's record), computed from the hands history holds. Practice hands
(no bet) are counted apart, never mixed into the totals. Hands at private tables count
in the totals like any other; stats carry no table or hand ids, so they reveal none.
Voided hands (cancelled before their end) are neither played nor won: left out.
"""

from __future__ import annotations

import logging

import msgspec
from sqlalchemy import Integer, and_, case, false, func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.proto.engine import HandRecord
from kalaro.proto.history import GameStats, PlayerStats
from services.history.outcome import outcome
from services.history.schema import hands, player_hands

log = logging.getLogger("kalaro.history")

#: Rows filled per transaction by the backfill.
BACKFILL_BATCH = 500

_decode_record = msgspec.json.Decoder(HandRecord).decode


async def player_stats(engine: AsyncEngine, user_id: str) -> PlayerStats:
    """The player's figures per game, bet hands and practice hands apart. A player
    with no hands (or no such player) gets empty lists, not an error."""
    ph = player_hands
    query = (
        select(
            ph.c.game,
            ph.c.practice,
            func.count(),
            func.sum(case((ph.c.won, 1), else_=0).cast(Integer)),
            func.sum(ph.c.net),
            func.max(ph.c.net),
        )
        .where(ph.c.user_id == user_id, ph.c.voided == false())
        .group_by(ph.c.game, ph.c.practice)
        .order_by(ph.c.game)
    )
    async with engine.connect() as conn:
        rows = (await conn.execute(query)).all()
    bet: list[GameStats] = []
    practice: list[GameStats] = []
    for game, is_practice, played, won, net, best in rows:
        figures = GameStats(
            game=game,
            hands=int(played),
            won=int(won or 0),
            net=int(net or 0),
            biggest_win=max(0, int(best or 0)),
        )
        (practice if is_practice else bet).append(figures)
    return PlayerStats(user_id=user_id, games=tuple(bet), practice=tuple(practice))


async def backfill(engine: AsyncEngine, *, batch: int = BACKFILL_BATCH) -> int:
    """Fill (won, net, practice) of rows stored before revision 0002, from their records;
    returns how many. Idempotent: a filled row is marked ``derived`` and not read again,
    so an interrupted run resumes where it stopped."""
    ph = player_hands
    done = 0
    while True:
        query = (
            select(ph.c.user_id, ph.c.hand_id, hands.c.practice, hands.c.record)
            .join(hands, hands.c.hand_id == ph.c.hand_id)
            .where(ph.c.derived.is_(False))
            .limit(batch)
        )
        async with engine.begin() as conn:
            rows = (await conn.execute(query)).all()
            for user_id, hand_id, is_practice, data in rows:
                won, net = outcome(_decode_record(data), user_id)
                await conn.execute(
                    update(ph)
                    .where(and_(ph.c.user_id == user_id, ph.c.hand_id == hand_id))
                    .values(won=won, net=net, practice=is_practice, derived=True)
                )
        done += len(rows)
        if rows:
            log.info("stats backfill: %d rows filled so far", done)
        if len(rows) < batch:
            return done
