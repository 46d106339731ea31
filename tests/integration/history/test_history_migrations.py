"""History's revision 0004 on data: hands stored before it stay counted in the stats.

What every service's schema goes through (empty to head, the old runner's databases
bridged, replicas racing) is in ``tests/integration/migrations``."""

from __future__ import annotations

from sqlalchemy import text

from kalaro.sql import create_engine
from services.history import stats
from services.history.schema import SCHEMA, migrate_history
from tests.integration.history.history_helpers import stored
from tests.integration.migrations.old_releases import empty_database, insert_history_hand


async def test_revision_0004_keeps_the_stored_hands_counted(database_url: str, unique: str) -> None:
    url = await empty_database(database_url, "at-0003")
    at_0003 = create_engine(url)
    try:
        assert await migrate_history(at_0003, "0003") == "0003"
        item = stored(unique, 0)  # seat 0 won: 20 credits
        r = item.record
        async with at_0003.begin() as conn:
            await insert_history_hand(conn, item)
            await conn.execute(
                text(
                    "INSERT INTO history_player_hands"
                    " (user_id, hand_id, game, finished_ms, won, net, practice, derived)"
                    " VALUES (:u, :h, :g, :f, TRUE, 20, FALSE, TRUE)"
                ),
                {"u": f"{unique}-a", "h": r.hand_id, "g": r.game, "f": item.finished_ms},
            )
        assert await migrate_history(at_0003) == SCHEMA.head()
        figures = await stats.player_stats(at_0003, f"{unique}-a")
        assert [(g.hands, g.won, g.net) for g in figures.games] == [(1, 1, 20)]
        async with at_0003.connect() as conn:
            assert await conn.scalar(text("SELECT voided FROM history_hands")) in (False, 0)
    finally:
        await at_0003.dispose()
