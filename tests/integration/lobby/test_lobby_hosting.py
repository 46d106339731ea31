"""Hosting: removed players stay out until the host allows them back, the invite code
can be asked for again by its host alone, and ending a table is told to everyone."""

from __future__ import annotations

from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from kalaro.proto import subjects
from tests.integration.lobby.harness import LobbyHarness, eventually, refused


async def _remove(lobby: LobbyHarness, who: lb.Caller, table_id: str, seat: int) -> lb.TableInfo:
    message = lb.RemovePlayer(caller=who, table_id=table_id, seat=seat)
    return await lobby.call(subjects.LOBBY_REMOVE_PLAYER, message, lb.TableInfo)


async def _allow(lobby: LobbyHarness, who: lb.Caller, table_id: str, user_id: str) -> lb.TableInfo:
    message = lb.AllowBack(caller=who, table_id=table_id, user_id=user_id)
    return await lobby.call(subjects.LOBBY_ALLOW_BACK, message, lb.TableInfo)


async def _code(lobby: LobbyHarness, who: lb.Caller, table_id: str) -> lb.InviteCode:
    message = lb.GetInviteCode(caller=who, table_id=table_id)
    return await lobby.call(subjects.LOBBY_INVITE_CODE, message, lb.InviteCode)


async def test_removed_player_cannot_sit_again_until_the_host_allows(lobby: LobbyHarness) -> None:
    table, players = await lobby.full_table("tongits", 10, ready=False)
    table_id = table.table_id
    ben = players[1]

    after = await _remove(lobby, lobby.host, table_id, 1)
    assert after.seats[1] is None
    assert after.removed == (lb.RemovedPlayer(user_id=ben.user_id, display_name="Ben"),)
    # Everyone watching learns it from the usual table frame: Ben's screen can tell him.
    await eventually(lambda: any(t.removed for t in lobby.frames.tables(table_id)))
    told = next(t for t in lobby.frames.tables(table_id) if t.removed)
    assert told.seats[1] is None and told.removed[0].user_id == ben.user_id

    message = await refused(codes.REMOVED_FROM_TABLE, lobby.sit(ben, table_id))
    assert "host" in message
    await refused(codes.REMOVED_FROM_TABLE, lobby.sit(ben, table_id, seat=1))
    # Only the host (or an admin) lets them back, and only someone who was removed.
    await refused(codes.FORBIDDEN, _allow(lobby, players[0], table_id, ben.user_id))
    await refused(codes.NOT_REMOVED, _allow(lobby, lobby.host, table_id, players[0].user_id))
    assert (await lobby.get(table_id)).removed == after.removed  # refusals changed nothing

    allowed = await _allow(lobby, lobby.host, table_id, ben.user_id)
    assert allowed.removed == ()
    back = await lobby.sit(ben, table_id)
    assert back.seats[1] is not None and back.seats[1].user_id == ben.user_id


async def test_an_admin_may_allow_back_and_other_players_are_unaffected(
    lobby: LobbyHarness,
) -> None:
    table, players = await lobby.full_table("tongits", 10, ready=False)
    table_id = table.table_id
    await _remove(lobby, lobby.host, table_id, 0)
    await _remove(lobby, lobby.host, table_id, 2)
    assert [r.user_id for r in (await lobby.get(table_id)).removed] == [
        players[0].user_id,
        players[2].user_id,
    ]
    stranger = lobby.user("Dodong")
    assert (await lobby.sit(stranger, table_id)).seats[0] is not None  # not barred
    root = lobby.user("Root", "admin")
    after = await _allow(lobby, root, table_id, players[2].user_id)
    assert [r.user_id for r in after.removed] == [players[0].user_id]
    await refused(codes.REMOVED_FROM_TABLE, lobby.sit(players[0], table_id))
    assert (await lobby.sit(players[2], table_id)).seats[2] is not None


async def test_the_host_asks_for_the_invite_code_again_and_nobody_else_can(
    lobby: LobbyHarness,
) -> None:
    created = await lobby.create("tongits", 10, private=True)
    table_id, code = created.table.table_id, created.invite_code
    assert code is not None
    again = await _code(lobby, lobby.host, table_id)
    assert again == lb.InviteCode(table_id=table_id, invite_code=code)
    assert (await _code(lobby, lobby.host, table_id)).invite_code == code  # any number of times
    root = lobby.user("Root", "admin")
    assert (await _code(lobby, root, table_id)).invite_code == code

    # The host sits at their own private table without it.
    assert (await lobby.sit(lobby.host, table_id)).seats[0] is not None
    ana, stranger = lobby.user("Ana"), lobby.user("Stranger")
    await lobby.sit(ana, table_id, code=code)
    await refused(codes.FORBIDDEN, _code(lobby, ana, table_id))  # a player: no
    await refused(codes.NOT_FOUND, _code(lobby, stranger, table_id))  # not even told it exists

    public = (await lobby.create("tongits", 10)).table.table_id
    await refused(codes.CONFLICT, _code(lobby, lobby.host, public))
    await lobby.call(
        subjects.LOBBY_END_TABLE, lb.EndTable(caller=lobby.host, table_id=table_id), lb.TableInfo
    )
    await refused(codes.CONFLICT, _code(lobby, lobby.host, table_id))  # closed: no more


async def test_ending_the_table_is_told_to_everyone_watching(lobby: LobbyHarness) -> None:
    table, players = await lobby.full_table("tongits", 10, ready=False)
    table_id = table.table_id
    await refused(
        codes.FORBIDDEN,
        lobby.call(
            subjects.LOBBY_END_TABLE,
            lb.EndTable(caller=players[0], table_id=table_id),
            lb.TableInfo,
        ),
    )
    ended = await lobby.call(
        subjects.LOBBY_END_TABLE, lb.EndTable(caller=lobby.host, table_id=table_id), lb.TableInfo
    )
    assert ended.status == "ended"
    # One frame on the table's events subject, which every socket on the table (seated
    # or watching) receives through its gateway.
    await eventually(lambda: lobby.frames.tables(table_id)[-1].status == "ended")
    last = lobby.frames.tables(table_id)[-1]
    assert [s.user_id for s in last.seats if s] == [p.user_id for p in players]
    await refused(codes.CONFLICT, lobby.sit(lobby.user("Late"), table_id))
    await refused(codes.CONFLICT, _allow(lobby, lobby.host, table_id, players[0].user_id))
