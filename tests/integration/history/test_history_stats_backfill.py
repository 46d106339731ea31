"""Upgrading a history database that holds hands from before the stats (revision 0001):
``python -m services.history`` migrates it to the stats' schema and its start-up
backfill fills every stored player's figures from the records (progress in its log),
while it serves; the stats then equal the records' sums."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path

import msgspec
from nats.aio.client import Client as NATS
from sqlalchemy import text

from kalaro.devstack import NatsServer, RedisServer, free_port
from kalaro.sql import create_engine
from services.history import stats
from services.history.schema import migrate_history
from tests.history_played import stored_played
from tests.integration.history.history_helpers import eventually, stop_history
from tests.integration.history.test_history_stats import _expected

REPO = Path(__file__).resolve().parents[3]


async def test_the_service_backfills_rows_stored_before_the_stats(
    nc: NATS, nats_server: NatsServer, redis_server: RedisServer, tmp_path: Path, unique: str
) -> None:
    me, you = f"{unique}-me", f"{unique}-you"
    bot = f"{unique}-bot"
    hands = [stored_played("tongits", s, (me, you, bot), prefix=unique) for s in range(3)]
    hands += [stored_played("kawuxing", s, (you, bot, me), prefix=unique) for s in range(2)]
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'history.db'}"
    engine = create_engine(database_url)
    # The database as revision 0001 left it, with its rows.
    assert await migrate_history(engine, "0001") == "0001"
    async with engine.begin() as conn:
        for item in hands:
            r = item.record
            await conn.execute(
                text("INSERT INTO history_hands VALUES (:h, :g, :t, :p, :f, :r)"),
                {"h": r.hand_id, "g": r.game, "t": r.table_id, "p": item.practice,
                 "f": item.finished_ms, "r": msgspec.json.encode(r).decode()},
            )  # fmt: skip
            for user in (me, you):
                await conn.execute(
                    text("INSERT INTO history_player_hands VALUES (:u, :h, :g, :f)"),
                    {"u": user, "h": r.hand_id, "g": r.game, "f": item.finished_ms},
                )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "libs"), str(REPO)]),
        "KALARO_NATS_URL": nats_server.url,
        "KALARO_REDIS_URL": redis_server.url,
        "KALARO_DATABASE_URL": database_url,
        "KALARO_HEALTH_PORT": str(free_port()),
        "KALARO_HEALTH_HOST": "127.0.0.1",
    }
    log = tmp_path / "history.log"
    with log.open("wb") as out:
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "services.history", env=env, stdout=out, stderr=out
        )
    try:

        async def filled() -> bool:
            with contextlib.suppress(Exception):  # the columns appear with the migration
                return await stats.player_stats(engine, me) == _expected(hands, me)
            return False

        await eventually(filled, timeout=60)
        assert await stats.player_stats(engine, you) == _expected(hands, you)
        await eventually(lambda: _logged(log, "stats backfill done: 10 rows filled"), 30)
    finally:
        await stop_history(child, nc)
        await engine.dispose()
    assert child.returncode == 0, log.read_text(errors="replace")[-3000:]


async def _logged(log: Path, line: str) -> bool:
    return line in await asyncio.to_thread(log.read_text, errors="replace")
