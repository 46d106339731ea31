"""Private means private: a private table is listed, shown and chatted at only by those
it is for (its host, seated players, admins; spectators with its invite code watch)."""

from __future__ import annotations

from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from kalaro.proto import subjects
from tests.integration.lobby.harness import LobbyHarness, refused


async def _listed(lobby: LobbyHarness, caller: lb.Caller | None) -> list[str]:
    message = lb.ListTables(caller=caller)
    listed = await lobby.call(subjects.LOBBY_LIST_TABLES, message, lb.TableList)
    return [t.table_id for t in listed.tables]


async def _get(
    lobby: LobbyHarness, table_id: str, caller: lb.Caller | None, code: str | None = None
) -> lb.TableInfo:
    message = lb.GetTable(table_id=table_id, caller=caller, invite_code=code)
    return await lobby.call(subjects.LOBBY_GET_TABLE, message, lb.TableInfo)


async def test_a_private_table_is_listed_only_to_its_host_players_and_admins(
    lobby: LobbyHarness,
) -> None:
    public = (await lobby.create("tongits", 10)).table.table_id
    lobby.clock.advance(1)
    created = await lobby.create("tongits", 10, private=True)
    private = created.table.table_id
    ana, stranger = lobby.user("Ana"), lobby.user("Stranger")
    await lobby.sit(ana, private, code=created.invite_code)

    assert await _listed(lobby, stranger) == [public]
    assert await _listed(lobby, None) == [public]  # nobody in particular: public only
    for member in (lobby.host, ana, lobby.user("Root", "admin")):
        assert await _listed(lobby, member) == [private, public]
    lobby.assert_no_secret_leaked()


async def test_a_private_table_is_shown_only_with_its_code_or_to_its_members(
    lobby: LobbyHarness,
) -> None:
    created = await lobby.create("tongits", 10, private=True)
    table_id, code = created.table.table_id, created.invite_code
    assert code is not None
    ana, stranger = lobby.user("Ana"), lobby.user("Stranger")

    # Exactly what an unknown table answers: its existence is not told.
    unknown = await refused(codes.NOT_FOUND, _get(lobby, "0" * 16, stranger))
    message = await refused(codes.NOT_FOUND, _get(lobby, table_id, stranger))
    assert message == unknown.replace("0" * 16, table_id)
    await refused(codes.NOT_FOUND, _get(lobby, table_id, stranger, code[:-1] + "x"))
    await refused(codes.NOT_FOUND, _get(lobby, table_id, stranger, ""))
    # With the code a spectator sees it; its host and admins always do.
    assert (await _get(lobby, table_id, stranger, code)).table_id == table_id
    assert (await _get(lobby, table_id, lobby.host)).table_id == table_id
    assert (await _get(lobby, table_id, lobby.user("Root", "admin"))).table_id == table_id
    # A seated player no longer needs the code; once gone, they need it again.
    await refused(codes.NOT_FOUND, _get(lobby, table_id, ana))
    await lobby.sit(ana, table_id, code=code)
    assert (await _get(lobby, table_id, ana)).table_id == table_id
    await lobby.call(subjects.LOBBY_LEAVE, lb.Leave(caller=ana, table_id=table_id), lb.TableInfo)
    await refused(codes.NOT_FOUND, _get(lobby, table_id, ana))
    # Services asking for bookkeeping (no caller) are always answered.
    assert (await _get(lobby, table_id, None)).table_id == table_id
    # A public table is shown to anyone.
    public = (await lobby.create("tongits", 10)).table.table_id
    assert (await _get(lobby, public, stranger)).table_id == public
    lobby.assert_no_secret_leaked()


async def test_only_players_and_the_host_chat_at_a_private_table(lobby: LobbyHarness) -> None:
    created = await lobby.create("tongits", 10, private=True)
    table_id, code = created.table.table_id, created.invite_code
    ana, watcher = lobby.user("Ana"), lobby.user("Watcher")
    await lobby.sit(ana, table_id, code=code)

    async def chat(who: lb.Caller, text: str) -> lb.ChatSent:
        message = lb.SendChat(caller=who, table_id=table_id, text=text)
        return await lobby.call(subjects.LOBBY_SEND_CHAT, message, lb.ChatSent)

    # A spectator (with the code or not) reads the chat but does not post.
    message = await refused(codes.FORBIDDEN, chat(watcher, "hello"))
    assert "private" in message
    assert (await chat(ana, "hi")).text == "hi"
    assert (await chat(lobby.host, "welcome")).text == "welcome"
    assert (await chat(lobby.user("Root", "admin"), "moderating")).text == "moderating"
    # At a public table anyone subscribed may post, as before.
    public = (await lobby.create("tongits", 10)).table.table_id
    sent = await lobby.call(
        subjects.LOBBY_SEND_CHAT,
        lb.SendChat(caller=watcher, table_id=public, text="hello"),
        lb.ChatSent,
    )
    assert sent.text == "hello"
