"""Sitting down (balance, invite code, free seat), readiness with entropy, leaving."""

from __future__ import annotations

from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from kalaro.proto import subjects
from tests.integration.lobby.harness import LobbyHarness, refused


async def test_sit_takes_first_free_or_chosen_seat(lobby: LobbyHarness) -> None:
    table = (await lobby.create("tongits", 10)).table
    ana, ben, cris, dina = (lobby.user(n) for n in ("Ana", "Ben", "Cris", "Dina"))
    after = await lobby.sit(ben, table.table_id, seat=1)
    assert after.seats[1] == lb.SeatInfo(user_id=ben.user_id, display_name="Ben")
    after = await lobby.sit(ana, table.table_id)
    assert after.seats[0] is not None and after.seats[0].user_id == ana.user_id
    message = await refused(codes.CONFLICT, lobby.sit(cris, table.table_id, seat=1))
    assert "seat 1 is taken" in message
    message = await refused(codes.CONFLICT, lobby.sit(ana, table.table_id))
    assert "already sitting in seat 0" in message
    await refused(codes.BAD_REQUEST, lobby.sit(cris, table.table_id, seat=3))
    await lobby.sit(cris, table.table_id)
    message = await refused(codes.CONFLICT, lobby.sit(dina, table.table_id))
    assert "full" in message


async def test_sit_needs_the_max_loss_available(lobby: LobbyHarness) -> None:
    table = (await lobby.create("tongits", 50)).table  # max loss 200
    poor, exact = lobby.user("Poor"), lobby.user("Exact")
    lobby.peers.balances[poor.user_id] = 199
    lobby.peers.balances[exact.user_id] = 200
    message = await refused(codes.INSUFFICIENT_FUNDS, lobby.sit(poor, table.table_id))
    assert "200" in message and "199" in message
    assert (await lobby.get(table.table_id)).seats == (None, None, None)
    seated = await lobby.sit(exact, table.table_id)
    assert seated.seats[0] is not None
    assert [a.user_id for a in lobby.peers.balance_asks] == [poor.user_id, exact.user_id]


async def test_zero_bet_table_never_asks_the_wallet(lobby: LobbyHarness) -> None:
    table = (await lobby.create("tongits", 0)).table
    broke = lobby.user("Broke")
    lobby.peers.balances[broke.user_id] = 0
    await lobby.sit(broke, table.table_id)
    assert lobby.peers.balance_asks == []


async def test_private_table_needs_the_invite_code(lobby: LobbyHarness) -> None:
    created = await lobby.create("tongits", 10, private=True)
    table_id, code = created.table.table_id, created.invite_code
    assert code is not None
    ana, ben = lobby.user("Ana"), lobby.user("Ben")
    # Without the right code: exactly what a table that does not exist answers.
    unknown = await refused(codes.NOT_FOUND, lobby.sit(ana, "no-such-table"))
    assert await refused(codes.NOT_FOUND, lobby.sit(ana, table_id)) == unknown
    wrong = await refused(codes.NOT_FOUND, lobby.sit(ana, table_id, code=code[:-1] + "x"))
    assert wrong == unknown
    # A wrong code costs nothing at the wallet: refused before the balance is asked.
    assert lobby.peers.balance_asks == []
    seated = await lobby.sit(ana, table_id, code=code)
    assert seated.seats[0] is not None
    # The host runs the table and may sit at it without typing its code.
    hosted = await lobby.sit(lobby.host, table_id)
    assert hosted.seats[1] is not None
    await refused(codes.NOT_FOUND, lobby.sit(ben, table_id, code=""))


async def test_ready_with_entropy_kept_secret(lobby: LobbyHarness) -> None:
    table = (await lobby.create("tongits", 10)).table
    ana, ben = lobby.user("Ana"), lobby.user("Ben")
    await refused(codes.CONFLICT, lobby.ready(ana, table.table_id))  # not seated
    await lobby.sit(ana, table.table_id)
    info = await lobby.ready(ana, table.table_id)
    assert info.seats[0] is not None and info.seats[0].ready
    rec = await lobby.record(table.table_id)
    assert rec.entropy[0].startswith("entropy-" + ana.user_id)
    assert rec.entropy[1:] == ("", "")
    # Unready clears the entropy: a new Ready brings new entropy.
    info = await lobby.ready(ana, table.table_id, ready=False)
    assert info.seats[0] is not None and not info.seats[0].ready
    assert (await lobby.record(table.table_id)).entropy[0] == ""
    await lobby.sit(ben, table.table_id)
    too_long = lb.SetReady(caller=ben, table_id=table.table_id, ready=True, entropy="x" * 65)
    message = await refused(
        codes.BAD_REQUEST, lobby.call(subjects.LOBBY_SET_READY, too_long, lb.TableInfo)
    )
    assert "64" in message
    just_fits = lb.SetReady(caller=ben, table_id=table.table_id, ready=True, entropy="y" * 64)
    ok = await lobby.call(subjects.LOBBY_SET_READY, just_fits, lb.TableInfo)
    assert ok.seats[1] is not None and ok.seats[1].ready


async def test_leave_between_hands_frees_the_seat(lobby: LobbyHarness) -> None:
    table, (ana, ben, _) = await lobby.full_table("tongits", 10)
    left = await lobby.call(
        subjects.LOBBY_LEAVE, lb.Leave(caller=ana, table_id=table.table_id), lb.TableInfo
    )
    assert left.seats[0] is None
    assert (await lobby.record(table.table_id)).entropy[0] == ""
    message = await refused(
        codes.CONFLICT,
        lobby.call(
            subjects.LOBBY_LEAVE, lb.Leave(caller=ana, table_id=table.table_id), lb.TableInfo
        ),
    )
    assert "not sitting" in message
    # The free seat can be taken again.
    again = await lobby.sit(lobby.user("Eli"), table.table_id)
    assert again.seats[0] is not None and again.seats[1] is not None
    assert again.seats[1].user_id == ben.user_id


async def test_remove_player_is_for_the_host_between_hands(lobby: LobbyHarness) -> None:
    table, (ana, ben, _) = await lobby.full_table("tongits", 10)
    remove = lb.RemovePlayer(caller=ana, table_id=table.table_id, seat=1)
    await refused(codes.FORBIDDEN, lobby.call(subjects.LOBBY_REMOVE_PLAYER, remove, lb.TableInfo))
    by_host = lb.RemovePlayer(caller=lobby.host, table_id=table.table_id, seat=1)
    after = await lobby.call(subjects.LOBBY_REMOVE_PLAYER, by_host, lb.TableInfo)
    assert after.seats[1] is None and after.seats[0] is not None
    message = await refused(
        codes.CONFLICT, lobby.call(subjects.LOBBY_REMOVE_PLAYER, by_host, lb.TableInfo)
    )
    assert "empty" in message
    # Ben is gone: he sits down again only once the host allows it (issue 18), and then
    # by asking (and passing the checks) anew.
    await refused(codes.REMOVED_FROM_TABLE, lobby.sit(ben, table.table_id))
    allow = lb.AllowBack(caller=lobby.host, table_id=table.table_id, user_id=ben.user_id)
    await lobby.call(subjects.LOBBY_ALLOW_BACK, allow, lb.TableInfo)
    back = await lobby.sit(ben, table.table_id)
    assert back.seats[1] is not None and not back.seats[1].ready


async def test_leave_after_hand_flag(lobby: LobbyHarness) -> None:
    table, (ana, _, _) = await lobby.full_table("tongits", 10)
    flag = lb.LeaveAfterHand(caller=ana, table_id=table.table_id, leave=True)
    info = await lobby.call(subjects.LOBBY_LEAVE_AFTER_HAND, flag, lb.TableInfo)
    assert info.seats[0] is not None and info.seats[0].leave_after_hand
    assert info.seats[0].ready  # still playing the next hand
    unflag = lb.LeaveAfterHand(caller=ana, table_id=table.table_id, leave=False)
    info = await lobby.call(subjects.LOBBY_LEAVE_AFTER_HAND, unflag, lb.TableInfo)
    assert info.seats[0] is not None and not info.seats[0].leave_after_hand
    stranger = lb.LeaveAfterHand(caller=lobby.user("Zed"), table_id=table.table_id, leave=True)
    await refused(
        codes.CONFLICT, lobby.call(subjects.LOBBY_LEAVE_AFTER_HAND, stranger, lb.TableInfo)
    )
