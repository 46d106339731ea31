"""Table chat: offensive words masked (English and Tagalog), a rate limit, chat off."""

from __future__ import annotations

import pytest

from kalaro.bus import RemoteError
from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from kalaro.proto import subjects
from services.lobby.chat import compile_wordlist, mask, parse_wordlist
from tests.integration.lobby.harness import LobbyHarness, eventually


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("Gago ka talaga", "**** ka talaga"),
        ("g@g0", "****"),
        ("GAAAGO!", "******!"),
        ("putangina mo", "********* mo"),
        ("Putang ina mo", "********** mo"),
        ("tang-ina naman", "******** naman"),
        ("ang tanga mo, bobo", "ang ***** mo, ****"),
        ("ul0l", "****"),
        ("tarantado ka", "********* ka"),
        ("leche!", "*****!"),
        ("puta", "****"),
        ("pakyu", "*****"),
        ("what the fuck", "what the ****"),
        ("Fucking shit", "******* ****"),
        ("you b1tch", "you *****"),
        ("$hit happens", "**** happens"),
    ],
)
def test_mask_offensive_words_keeping_length(text: str, masked: str) -> None:
    assert mask(text) == masked
    assert len(mask(text)) == len(text)


@pytest.mark.parametrize(
    "clean",
    [
        "class is in session",  # "ass" only as a whole word
        "pass the tiles",
        "tangal ko na",
        "computer",
        "as good as it gets",
        "salamat po, ang galing!",
        "Tongits! Panalo ako",
    ],
)
def test_mask_leaves_ordinary_words_alone(clean: str) -> None:
    assert mask(clean) == clean


def test_wordlist_syntax() -> None:
    pattern = compile_wordlist(parse_wordlist("# comment\nfoo*\nbar baz  # trailing\n\n"))
    assert mask("foobar barbaz bar--baz foo", pattern) == "****** ****** ******** ***"
    assert mask("afoo bar", pattern) == "afoo bar"


async def test_chat_is_masked_and_published(lobby: LobbyHarness) -> None:
    table = (await lobby.create("tongits", 10)).table
    ana = lobby.user("Ana")
    sent = await lobby.call(
        subjects.LOBBY_SEND_CHAT,
        lb.SendChat(caller=ana, table_id=table.table_id, text="  ang swerte mo gago  "),
        lb.ChatSent,
    )
    assert sent.text == "ang swerte mo ****"
    await eventually(lambda: len(lobby.frames.chats(table.table_id)) == 1)
    (posted,) = lobby.frames.chats(table.table_id)
    assert (posted.table_id, posted.user_id, posted.display_name, posted.text) == (
        table.table_id,
        ana.user_id,
        "Ana",
        "ang swerte mo ****",
    )
    assert posted.at.startswith(table.created_at[:10])


async def test_chat_rate_limit_per_player(lobby: LobbyHarness) -> None:
    table = (await lobby.create("tongits", 10)).table
    ana, ben = lobby.user("Ana"), lobby.user("Ben")

    async def say(who: lb.Caller, text: str) -> lb.ChatSent:
        message = lb.SendChat(caller=who, table_id=table.table_id, text=text)
        return await lobby.call(subjects.LOBBY_SEND_CHAT, message, lb.ChatSent)

    for n in range(5):
        await say(ana, f"hello {n}")
    with pytest.raises(RemoteError) as throttled:
        await say(ana, "one too many")
    assert throttled.value.code == codes.THROTTLED
    assert "5 messages every 10 seconds" in throttled.value.message
    assert 1 <= throttled.value.retry_after <= 10  # until the oldest leaves the window
    await say(ben, "my budget is my own")
    lobby.clock.advance(10.5)
    await say(ana, "the window has passed")
    texts = [c.text for c in lobby.frames.chats(table.table_id)]
    assert "one too many" not in texts and "the window has passed" in texts


async def test_chat_off_and_bad_messages(lobby: LobbyHarness) -> None:
    table = (await lobby.create("tongits", 10, chat_enabled=False)).table
    ana = lobby.user("Ana")
    message = lb.SendChat(caller=ana, table_id=table.table_id, text="hello")
    with pytest.raises(RemoteError) as off:
        await lobby.call(subjects.LOBBY_SEND_CHAT, message, lb.ChatSent)
    assert off.value.code == codes.FORBIDDEN
    assert off.value.message == "chat is off at this table"

    with pytest.raises(RemoteError) as not_host:
        await lobby.call(
            subjects.LOBBY_SET_CHAT,
            lb.SetChat(caller=ana, table_id=table.table_id, enabled=True),
            lb.TableInfo,
        )
    assert not_host.value.code == codes.FORBIDDEN
    on = await lobby.call(
        subjects.LOBBY_SET_CHAT,
        lb.SetChat(caller=lobby.host, table_id=table.table_id, enabled=True),
        lb.TableInfo,
    )
    assert on.chat_enabled and lobby.frames.tables(table.table_id)[-1].chat_enabled
    sent = await lobby.call(subjects.LOBBY_SEND_CHAT, message, lb.ChatSent)
    assert sent.text == "hello"

    for text in ("   ", "x" * 301):
        with pytest.raises(RemoteError) as bad:
            await lobby.call(
                subjects.LOBBY_SEND_CHAT,
                lb.SendChat(caller=ana, table_id=table.table_id, text=text),
                lb.ChatSent,
            )
        assert bad.value.code == codes.BAD_REQUEST
    assert [c.text for c in lobby.frames.chats(table.table_id)] == ["hello"]
