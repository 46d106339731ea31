"""Presence at the lobby: gateways report their seated sockets (``lobby.presence``), the
lobby derives each seat's connected / reconnecting / offline and publishes the table only
when that changes; its sweep downgrades reconnecting seats and forgets silent gateways.

The gateways are played by the test, sending the reports real gateways send (see
``tests/integration/gateway`` for the gateway's side).
"""

from __future__ import annotations

import msgspec

from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from kalaro.proto import subjects
from services.lobby.tables import PRESENCE_FORGET_PERIODS
from tests.integration.lobby.harness import LobbyHarness, eventually, refused


async def report(
    lobby: LobbyHarness, gateway: str, table_id: str, *users: lb.Caller
) -> lb.PresenceNoted:
    message = lb.ReportPresence(
        gateway_id=gateway, table_id=table_id, user_ids=tuple(u.user_id for u in users)
    )
    return await lobby.call(subjects.LOBBY_PRESENCE, message, lb.PresenceNoted)


def presence(table: lb.TableInfo) -> list[str | None]:
    return [s.presence if s is not None else None for s in table.seats]


async def published(lobby: LobbyHarness, table_id: str, count: int) -> list[lb.TableInfo]:
    """The table frames published so far, once there are ``count`` of them."""
    await lobby.nc.flush()
    await eventually(lambda: len(lobby.frames.tables(table_id)) >= count)
    return lobby.frames.tables(table_id)


async def test_seats_show_who_is_connected_reconnecting_or_offline(
    lobby: LobbyHarness,
) -> None:
    table, (ana, ben, _cris) = await lobby.full_table("tongits", 10, ready=False)
    tid = table.table_id
    assert presence(await lobby.get(tid)) == ["offline"] * 3  # nobody has a socket yet
    frames = len(await published(lobby, tid, 4))  # created + three sits

    # Ana has sockets on two gateways, Ben on one: both connected, one frame each change.
    noted = await report(lobby, "gw-a", tid, ana)
    assert noted.changed
    assert not (await report(lobby, "gw-b", tid, ana)).changed  # already connected
    assert (await report(lobby, "gw-b", tid, ana, ben)).changed
    assert presence(await lobby.get(tid)) == ["connected", "connected", "offline"]
    tables = await published(lobby, tid, frames + 2)
    assert [presence(t) for t in tables[frames:]] == [
        ["connected", "offline", "offline"],
        ["connected", "connected", "offline"],
    ]
    frames += 2

    # Re-announcing what the lobby already knows publishes nothing.
    assert not (await report(lobby, "gw-a", tid, ana)).changed
    assert not (await report(lobby, "gw-b", tid, ana, ben)).changed
    # Ana's socket on gw-b goes: she still has the one on gw-a.
    assert not (await report(lobby, "gw-b", tid, ben)).changed
    # ... and that one goes too: reconnecting (for the grace period), then offline.
    assert (await report(lobby, "gw-a", tid)).changed
    assert presence(await lobby.get(tid)) == ["reconnecting", "connected", "offline"]
    assert await lobby.lobby.sweep_presence() == 0  # not due yet
    lobby.clock.advance(lobby.lobby.presence_grace_seconds - 5)
    assert await lobby.lobby.sweep_presence() == 0
    assert presence(await lobby.get(tid)) == ["reconnecting", "connected", "offline"]
    lobby.clock.advance(6)
    assert await lobby.lobby.sweep_presence() == 1
    assert presence(await lobby.get(tid)) == ["offline", "connected", "offline"]
    assert await lobby.lobby.sweep_presence() == 0  # said once

    # Back again: connected.
    assert (await report(lobby, "gw-b", tid, ana, ben)).changed
    assert presence(await lobby.get(tid)) == ["connected", "connected", "offline"]
    tables = await published(lobby, tid, frames + 3)
    assert [presence(t) for t in tables[frames:]] == [
        ["reconnecting", "connected", "offline"],
        ["offline", "connected", "offline"],
        ["connected", "connected", "offline"],
    ]
    await lobby.nc.flush()
    assert len(lobby.frames.tables(tid)) == frames + 3  # nothing else was published

    # Other changes keep presence: a Ready tap is published with it unchanged.
    ready = await lobby.ready(ana, tid)
    assert presence(ready) == ["connected", "connected", "offline"]
    # Whoever leaves takes no presence along; the seat is empty.
    message = lb.Leave(caller=ben, table_id=tid)
    left = await lobby.call(subjects.LOBBY_LEAVE, message, lb.TableInfo)
    assert presence(left) == ["connected", None, "offline"]


async def test_a_gateway_that_died_is_forgotten(lobby: LobbyHarness) -> None:
    table, (ana, ben, _) = await lobby.full_table("tongits", 10, ready=False)
    tid = table.table_id
    await report(lobby, "gw-dies", tid, ana)
    await report(lobby, "gw-lives", tid, ben)
    period = lobby.lobby.presence_forget_seconds / PRESENCE_FORGET_PERIODS
    # gw-lives re-announces every period; gw-dies never speaks again.
    for _ in range(PRESENCE_FORGET_PERIODS - 1):
        lobby.clock.advance(period)
        await report(lobby, "gw-lives", tid, ben)
        await lobby.lobby.sweep_presence()
        assert presence(await lobby.get(tid)) == ["connected", "connected", "offline"]
    lobby.clock.advance(period)
    await report(lobby, "gw-lives", tid, ben)
    await lobby.lobby.sweep_presence()
    # Ana's gateway was last heard three periods ago, longer than the grace: offline.
    assert presence(await lobby.get(tid)) == ["offline", "connected", "offline"]
    rec = await lobby.record(tid)
    assert [g.gateway_id for g in rec.gateways] == ["gw-lives"]
    # Without re-announcing, gw-lives is forgotten as well in the end.
    lobby.clock.advance(lobby.lobby.presence_forget_seconds)
    await lobby.lobby.sweep_presence()
    assert presence(await lobby.get(tid)) == ["offline"] * 3
    assert (await lobby.record(tid)).gateways == ()


async def test_only_seated_players_have_presence(lobby: LobbyHarness) -> None:
    table = (await lobby.create("tongits", 0)).table
    tid = table.table_id
    ana, watcher = lobby.user("Ana"), lobby.user("Watcher")
    await lobby.sit(ana, tid, seat=1)
    # A gateway's report names only seated players; a name that is not seated shows nowhere.
    assert not (await report(lobby, "gw-0a1b2c", tid, watcher)).changed
    assert presence(await lobby.get(tid)) == [None, "offline", None]
    await report(lobby, "gw-0a1b2c", tid, ana, watcher)
    assert presence(await lobby.get(tid)) == [None, "connected", None]
    # Once the watcher sits (their gateway then reports them seated), they are connected.
    seated = await lobby.sit(watcher, tid, seat=0)
    assert presence(seated) == ["connected", "connected", None]
    # Presence lives in the record per gateway, never in the public info.
    rec = await lobby.record(tid)
    assert rec.gateways[0].gateway_id == "gw-0a1b2c"
    assert b"gw-0a1b2c" not in msgspec.json.encode(await lobby.get(tid))
    assert not set(lb.TableInfo.__struct_fields__) & {"gateways", "last_connected"}


async def test_reports_for_missing_or_closed_tables(lobby: LobbyHarness) -> None:
    message = await refused(codes.NOT_FOUND, report(lobby, "gw", "nosuchtable", lobby.user("Ana")))
    assert message == lb.NO_SUCH_TABLE  # as any unknown table (no id: see lobby.py)
    table, (ana, _, _) = await lobby.full_table("tongits", 10, ready=False)
    await lobby.call(
        subjects.LOBBY_END_TABLE,
        lb.EndTable(caller=lobby.host, table_id=table.table_id),
        lb.TableInfo,
    )
    before = await lobby.get(table.table_id)
    assert not (await report(lobby, "gw", table.table_id, ana)).changed
    assert await lobby.get(table.table_id) == before
