"""Money at sit time: one balance covers every table a player sits at with a bet.

A player whose credits cover one table's maximum loss may not sit at a second table
with a bet (``committed_elsewhere``, naming the first) until they leave the first, are
removed there, or it closes; two Sits racing at two tables never both pass. Zero-bet
and practice tables commit nothing. The wallet is the stand-in peer (its balance is
all available); the real wallet's holds are in ``test_lobby_real_wallet``.
"""

from __future__ import annotations

import asyncio

from kalaro.bus import RemoteError
from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from kalaro.proto import subjects
from services.lobby.money import PENDING_STAKE_SECONDS
from tests.integration.lobby.harness import LobbyHarness, refused


async def _leave(lobby: LobbyHarness, who: lb.Caller, table_id: str) -> lb.TableInfo:
    message = lb.Leave(caller=who, table_id=table_id)
    return await lobby.call(subjects.LOBBY_LEAVE, message, lb.TableInfo)


async def _stakes(lobby: LobbyHarness, who: lb.Caller) -> set[str]:
    raw = await lobby.lobby.stakes._store.redis.hgetall(lobby.lobby.stakes.key(who.user_id))
    return {k.decode() for k in raw}


async def test_a_second_table_is_refused_until_the_first_is_left(lobby: LobbyHarness) -> None:
    first = (await lobby.create("tongits", 50)).table  # max loss 200
    second = (await lobby.create("tongits", 50)).table
    ana = lobby.user("Ana")
    lobby.peers.balances[ana.user_id] = 300  # one table's 200, not two
    await lobby.sit(ana, first.table_id)

    message = await refused(codes.COMMITTED_ELSEWHERE, lobby.sit(ana, second.table_id))
    assert first.table_id in message and second.table_id not in message
    assert "400" in message and "300" in message  # what it would need, what she has
    assert (await lobby.get(second.table_id)).seats == (None, None, None)
    assert await _stakes(lobby, ana) == {first.table_id}  # the refused Sit let go

    # A zero-bet table commits nothing: she may sit there meanwhile.
    free = (await lobby.create("tongits", 0)).table
    await lobby.sit(ana, free.table_id)

    await _leave(lobby, ana, first.table_id)
    sat = await lobby.sit(ana, second.table_id)
    assert sat.seats[0] is not None and sat.seats[0].user_id == ana.user_id
    # The stake at the table she left was forgotten when the second Sit counted.
    assert await _stakes(lobby, ana) == {second.table_id}
    # And now the first is the one refused.
    message = await refused(codes.COMMITTED_ELSEWHERE, lobby.sit(ana, first.table_id))
    assert second.table_id in message


async def test_removed_or_closed_tables_stop_counting(lobby: LobbyHarness) -> None:
    tables = [(await lobby.create("tongits", 25)).table for _ in range(3)]  # 100 each
    ben = lobby.user("Ben")
    lobby.peers.balances[ben.user_id] = 100
    await lobby.sit(ben, tables[0].table_id)
    await refused(codes.COMMITTED_ELSEWHERE, lobby.sit(ben, tables[1].table_id))

    remove = lb.RemovePlayer(caller=lobby.host, table_id=tables[0].table_id, seat=0)
    await lobby.call(subjects.LOBBY_REMOVE_PLAYER, remove, lb.TableInfo)
    await lobby.sit(ben, tables[1].table_id)
    await refused(codes.COMMITTED_ELSEWHERE, lobby.sit(ben, tables[2].table_id))

    end = lb.EndTable(caller=lobby.host, table_id=tables[1].table_id)
    await lobby.call(subjects.LOBBY_END_TABLE, end, lb.TableInfo)
    await lobby.sit(ben, tables[2].table_id)
    assert await _stakes(lobby, ben) == {tables[2].table_id}


async def test_two_sits_at_once_never_both_pass(lobby: LobbyHarness) -> None:
    # The wallet answers slowly, so both Sits are between their reservation and their
    # table write at once: the window a check-then-act race would slip through.
    lobby.peers.balance_delay = 0.2
    for round_no in range(4):
        one, two = [(await lobby.create("tongits", 10)).table for _ in range(2)]  # 40 each
        cris = lobby.user(f"Cris{round_no}")
        lobby.peers.balances[cris.user_id] = 40
        outcomes = await asyncio.gather(
            lobby.sit(cris, one.table_id), lobby.sit(cris, two.table_id), return_exceptions=True
        )
        passed = [o for o in outcomes if isinstance(o, lb.TableInfo)]
        failed = [o for o in outcomes if isinstance(o, RemoteError)]
        assert len(passed) + len(failed) == 2, outcomes
        assert len(passed) <= 1, "both Sits passed with credits for one table"
        assert all(f.code == codes.COMMITTED_ELSEWHERE for f in failed), failed
        seated_at = [
            t.table_id
            for t in (await lobby.get(one.table_id), await lobby.get(two.table_id))
            if any(s is not None and s.user_id == cris.user_id for s in t.seats)
        ]
        assert len(seated_at) == len(passed)
        if not passed:
            # Both saw the other in flight and stepped back; the reservations went with
            # them, so a Sit now passes at once.
            await lobby.sit(cris, one.table_id)


async def test_a_sit_that_died_in_flight_is_forgotten(lobby: LobbyHarness) -> None:
    one, two = [(await lobby.create("tongits", 10)).table for _ in range(2)]
    dina = lobby.user("Dina")
    lobby.peers.balances[dina.user_id] = 40
    # A replica reserved a stake at ``one`` and died before its seat was written.
    stakes = lobby.lobby.stakes
    await stakes._store.redis.hset(
        stakes.key(dina.user_id), one.table_id, b'["dead",%f,false]' % lobby.clock()
    )
    message = await refused(codes.COMMITTED_ELSEWHERE, lobby.sit(dina, two.table_id))
    assert "sitting down now" in message and one.table_id in message
    lobby.clock.advance(PENDING_STAKE_SECONDS)
    await lobby.sit(dina, two.table_id)
    assert await _stakes(lobby, dina) == {two.table_id}
