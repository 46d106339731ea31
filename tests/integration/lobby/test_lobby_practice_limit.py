"""How many practice tables one player may have open (default 3, the lobby's
``practice_per_player``): one more is refused with ``practice_limit`` naming the limit
and the tables; a table that ended (left, idle, cancelled) stops counting, and racing
creates never overshoot. Bots are the stand-in bots service of ``test_lobby_bots``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError, Service
from kalaro.proto import endpoints, subjects
from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from services.lobby.practice import CLAIM_SECONDS
from services.lobby.records import PRACTICE_TABLES_PER_PLAYER
from tests.integration.lobby.harness import LobbyHarness, refused
from tests.integration.lobby.test_lobby_bots import BotsPeer, practice


@pytest.fixture
async def bots(nc: NATS, unique: str) -> AsyncIterator[BotsPeer]:
    peer = BotsPeer(nc, unique)
    service = Service("lobby-test-bots")
    service.add(endpoints.BOTS_SEAT, peer.seat)
    await service.start(nc)
    yield peer
    await service.stop()


async def _hosted(lobby: LobbyHarness, who: lb.Caller) -> set[str]:
    key = lobby.lobby.practice._hosted(who.user_id)
    return {m.decode() for m in await lobby.lobby.practice._store.redis.zrange(key, 0, -1)}


async def test_one_practice_table_too_many_is_refused_until_one_ends(
    lobby: LobbyHarness, bots: BotsPeer
) -> None:
    assert lobby.lobby.practice.per_player == PRACTICE_TABLES_PER_PLAYER == 3
    ana, ben = lobby.user("Ana"), lobby.user("Ben")
    games: tuple[lb.Game, ...] = ("tongits", "mahjong", "kawuxing")
    tables = [(await practice(lobby, ana, game)).table for game in games]
    asked = len(bots.asked)

    message = await refused(codes.PRACTICE_LIMIT, practice(lobby, ana))
    assert "3 practice tables" in message
    assert all(t.table_id in message for t in tables)
    assert "30 minutes" in message  # when an idle one closes by itself
    assert len(bots.asked) == asked, "no table (and no bot) for a refused create"
    assert await _hosted(lobby, ana) == {t.table_id for t in tables}
    # The limit is per player.
    await practice(lobby, ben)

    # Leaving a practice table ends it: it no longer counts.
    leave = lb.Leave(caller=ana, table_id=tables[0].table_id)
    assert (await lobby.call(subjects.LOBBY_LEAVE, leave, lb.TableInfo)).status == "ended"
    fourth = (await practice(lobby, ana)).table
    await refused(codes.PRACTICE_LIMIT, practice(lobby, ana))

    # Nothing happens at any of them: the idle sweep ends them all (the setting
    # KALARO_PRACTICE_IDLE_MINUTES), and the count follows.
    lobby.clock.advance(lobby.lobby.practice_idle_seconds + 1)
    ended = set(await lobby.lobby.end_idle_practice())
    assert {tables[1].table_id, tables[2].table_id, fourth.table_id} <= ended
    for t in (tables[1], tables[2], fourth):
        assert (await lobby.get(t.table_id)).status == "ended"
    again = [(await practice(lobby, ana)).table for _ in range(3)]
    message = await refused(codes.PRACTICE_LIMIT, practice(lobby, ana))
    assert all(t.table_id in message for t in again)
    assert await _hosted(lobby, ana) == {t.table_id for t in again}  # the ended forgotten

    # A cancelled one stops counting too.
    cancel = lb.CancelTable(caller=ana, table_id=again[0].table_id)
    await lobby.call(subjects.LOBBY_CANCEL_TABLE, cancel, lb.TableInfo)
    await practice(lobby, ana)


async def test_racing_creates_never_overshoot(lobby: LobbyHarness, bots: BotsPeer) -> None:
    cris = lobby.user("Cris")
    outcomes = await asyncio.gather(
        *(practice(lobby, cris) for _ in range(6)), return_exceptions=True
    )
    made = [o for o in outcomes if isinstance(o, lb.TableCreated)]
    refusals = [o for o in outcomes if isinstance(o, RemoteError)]
    assert len(made) == 3 and len(refusals) == 3, outcomes
    assert all(r.code == codes.PRACTICE_LIMIT for r in refusals)
    assert await _hosted(lobby, cris) == {m.table.table_id for m in made}


async def test_a_claim_whose_create_died_is_forgotten(lobby: LobbyHarness, bots: BotsPeer) -> None:
    dina = lobby.user("Dina")
    key = lobby.lobby.practice._hosted(dina.user_id)
    redis = lobby.lobby.practice._store.redis
    # Three creates claimed a slot on a replica that then died.
    await redis.zadd(key, {f"+dead{i}": lobby.clock() for i in range(3)})
    message = await refused(codes.PRACTICE_LIMIT, practice(lobby, dina))
    assert "3 being opened right now" in message
    lobby.clock.advance(CLAIM_SECONDS)
    made = (await practice(lobby, dina)).table
    assert await _hosted(lobby, dina) == {made.table_id}


async def test_an_idle_table_that_cannot_end_does_not_block_the_sweep(
    lobby: LobbyHarness, bots: BotsPeer
) -> None:
    """The sweep looks at ``limit`` tables at a time, oldest first: one it cannot end
    now (its engine cannot say whether the hand moves) goes behind the others."""
    core = lobby.lobby
    ana, ben = lobby.user("Ana"), lobby.user("Ben")
    stuck = (await practice(lobby, ana)).table
    for who in [*bots.seated, ana]:
        dealt = await lobby.ready(who, stuck.table_id)
    assert dealt.status == "playing"
    lobby.clock.advance(1)
    quiet = (await practice(lobby, ben)).table
    lobby.peers.view_error = codes.UNAVAILABLE
    lobby.clock.advance(core.practice_idle_seconds + 1)

    assert await core.end_idle_practice(limit=1) == []  # the stuck one, oldest
    assert await core.end_idle_practice(limit=1) == [quiet.table_id]
    assert (await lobby.get(stuck.table_id)).status == "playing"
    # Once the engine answers again, the stuck one is ended on a later look.
    lobby.peers.view_error = None
    lobby.clock.advance(120)
    await core.end_idle_practice()  # first look at its hand's version
    lobby.clock.advance(core.practice_idle_seconds + 1)
    assert await core.end_idle_practice() == [stuck.table_id]
    assert (await lobby.get(stuck.table_id)).status == "cancelled"
