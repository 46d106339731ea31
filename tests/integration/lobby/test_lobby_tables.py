"""Creating, listing and reading tables; TableChanged frames; no secret in a TableInfo."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kalaro.bus import RemoteError
from kalaro.games.registry import game_names, rules_for
from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from kalaro.proto import subjects
from tests.integration.lobby.harness import LobbyHarness, commitment, eventually, refused


async def test_create_needs_host_or_admin(lobby: LobbyHarness) -> None:
    with pytest.raises(RemoteError) as refused:
        await lobby.create(host=lobby.user("Pia"))
    assert refused.value.code == codes.FORBIDDEN
    assert "host" in refused.value.message

    by_admin = await lobby.create(host=lobby.user("Root", "admin"))
    assert by_admin.table.status == "waiting"


async def test_create_tongits_table(lobby: LobbyHarness) -> None:
    created = await lobby.create("tongits", 25)
    table = created.table
    assert created.invite_code is None
    assert (table.game, table.ruleset, table.bet, table.status) == (
        "tongits",
        "kalaro",
        25,
        "waiting",
    )
    assert table.seats == (None, None, None)
    assert table.max_loss == 4 * 25  # the kalaro Tongits ruleset loses at most 4x the bet
    assert table.host_id == lobby.host.user_id and table.host_name == "Host"
    assert table.options["ruleset"] == "kalaro" and table.options["payments"] == "table_a"
    assert table.hand_no == 0 and table.hand_id is None and table.version == 1
    # The commitment is sha256 of the stored seed's bytes (flow 6).
    rec = await lobby.record(table.table_id)
    assert table.seed_commitment == commitment(rec.server_seed)
    assert len(rec.server_seed) == 64


async def test_create_mahjong_with_house_rules(lobby: LobbyHarness) -> None:
    created = await lobby.create("mahjong", 5)
    assert len(created.table.seats) == 4
    assert created.table.max_loss == 10 * 5
    classic = await lobby.create("tongits", 10, ruleset="classic", options={"fight_seconds": 30})
    assert classic.table.options["fight_seconds"] == 30
    assert classic.table.options["payments"] == "table_b"
    # Table B's true worst case, with secret sets played: 17 units.
    assert classic.table.max_loss == 17 * 10


@pytest.mark.parametrize("game", game_names())
async def test_every_registered_game_gets_a_table(lobby: LobbyHarness, game: str) -> None:
    rules = rules_for(game)
    table = (await lobby.create(game, 7)).table  # type: ignore[arg-type]
    assert len(table.seats) == rules.seats
    assert table.max_loss == rules.max_loss_units(rules.options(table.options)) * 7


@pytest.mark.parametrize(
    ("game", "bet", "ruleset", "options", "says"),
    [
        ("poker", 10, "kalaro", {}, "poker"),  # not a game of the contract at all
        ("tongits", 10, "nope", {}, "ruleset"),
        ("tongits", 10, "kalaro", {"jokers": True}, "jokers"),
        ("tongits", 10, "kalaro", {"fight_seconds": 0}, "fight_seconds"),
        ("tongits", -1, "kalaro", {}, "bet"),
        ("tongits", 100_001, "kalaro", {}, "bet"),
        ("tongits", 10, "kalaro", {"ruleset": "classic"}, "ruleset"),
    ],
)
async def test_create_refuses_bad_input(
    lobby: LobbyHarness, game: str, bet: int, ruleset: str, options: dict[str, object], says: str
) -> None:
    message = {
        "caller": msgspec.to_builtins(lobby.host),
        "game": game,
        "bet": bet,
        "ruleset": ruleset,
        "options": options,
    }
    reply = await lobby.nc.request(
        subjects.LOBBY_CREATE_TABLE, msgspec.json.encode(message), timeout=5
    )
    assert reply.headers is not None and reply.headers["Kalaro-Error"] == codes.BAD_REQUEST
    assert says in msgspec.json.decode(reply.data)["message"]


async def test_zero_bet_and_upper_bound_allowed(lobby: LobbyHarness) -> None:
    free = await lobby.create("tongits", 0)
    assert free.table.bet == 0 and free.table.max_loss == 0
    top = await lobby.create("tongits", 100_000)
    assert top.table.max_loss == 400_000


async def test_private_table_code_shown_once_never_in_info(lobby: LobbyHarness) -> None:
    created = await lobby.create("tongits", 10, private=True)
    code = created.invite_code
    assert code is not None and len(code) >= 8
    again = await lobby.get(created.table.table_id)
    assert again.private is True
    assert code.encode() not in msgspec.json.encode(again)
    other = await lobby.create("tongits", 10, private=True)
    assert other.invite_code != code
    # TableInfo has no field for any secret at all.
    fields = set(lb.TableInfo.__struct_fields__)
    assert not fields & {"invite_code", "server_seed", "entropy"}


async def test_get_unknown_table(lobby: LobbyHarness) -> None:
    with pytest.raises(RemoteError) as missing:
        await lobby.get("nosuchtable")
    assert missing.value.code == codes.NOT_FOUND


async def test_list_filters_and_orders_newest_first(lobby: LobbyHarness) -> None:
    # Other tests' tables live under other key prefixes: this lobby sees only its own.
    t1 = (await lobby.create("tongits", 10)).table
    lobby.clock.advance(1)
    m1 = (await lobby.create("mahjong", 10)).table
    lobby.clock.advance(1)
    t2, _ = await lobby.full_table("tongits", 10)
    lobby.clock.advance(1)
    ended = (await lobby.create("tongits", 10)).table
    await lobby.call(
        subjects.LOBBY_END_TABLE,
        lb.EndTable(caller=lobby.host, table_id=ended.table_id),
        lb.TableInfo,
    )

    async def ids(**kw: Any) -> list[str]:
        listed = await lobby.call(subjects.LOBBY_LIST_TABLES, lb.ListTables(**kw), lb.TableList)
        return [t.table_id for t in listed.tables]

    assert await ids() == [t2.table_id, m1.table_id, t1.table_id]
    assert await ids(game="tongits") == [t2.table_id, t1.table_id]
    assert await ids(game="mahjong") == [m1.table_id]
    assert await ids(open_seats_only=True) == [m1.table_id, t1.table_id]
    assert await ids(game="tongits", open_seats_only=True) == [t1.table_id]
    assert await ids(limit=2) == [t2.table_id, m1.table_id]
    listed = await lobby.call(subjects.LOBBY_LIST_TABLES, lb.ListTables(), lb.TableList)
    assert listed.tables[0].version == (await lobby.get(t2.table_id)).version
    for bad in (0, 201):
        with pytest.raises(RemoteError) as refused:
            await ids(limit=bad)
        assert refused.value.code == codes.BAD_REQUEST


async def test_table_changed_frames_follow_every_change(lobby: LobbyHarness) -> None:
    created = await lobby.create("tongits", 10)
    table_id = created.table.table_id
    ana = lobby.user("Ana")
    sat = await lobby.sit(ana, table_id)
    ready = await lobby.ready(ana, table_id)
    await eventually(lambda: len(lobby.frames.tables(table_id)) >= 3)
    seen = lobby.frames.tables(table_id)
    assert [t.version for t in seen] == [1, sat.version, ready.version]
    assert seen[-1] == ready
    assert seen[-1].seats[0] == lb.SeatInfo(user_id=ana.user_id, display_name="Ana", ready=True)
    # The gateway recognises a TableChanged by its first bytes; keep that true.
    raw = [d for s, d in lobby.frames.raw if s == subjects.table_events(table_id)]
    assert all(d.startswith(b'{"type":"table"') for d in raw)


@pytest.mark.parametrize(
    ("game", "bet", "private"),
    [
        ("mahjong", 10, False),
        ("mahjong", 0, False),  # free, but public: strangers must not wait for ever
        ("mahjong", 10, True),  # private, but for credits
        ("tongits", 10, False),
    ],
)
async def test_a_table_without_a_turn_clock_is_refused(
    lobby: LobbyHarness, game: lb.Game, bet: int, private: bool
) -> None:
    create = lobby.create(game, bet, private=private, options={"turn_seconds": None})
    message = await refused(codes.BAD_REQUEST, create)
    assert "turn_seconds" in message and "private" in message
    assert lobby.frames.raw == []  # no table was made


async def test_only_private_free_tables_may_turn_the_clock_off(lobby: LobbyHarness) -> None:
    off = await lobby.create("mahjong", 0, private=True, options={"turn_seconds": None})
    assert off.table.options["turn_seconds"] is None
    tongits = await lobby.create("tongits", 0, private=True, options={"turn_seconds": None})
    assert tongits.table.options["turn_seconds"] is None
    clocked = await lobby.create("mahjong", 10, options={"turn_seconds": 20})
    assert clocked.table.options["turn_seconds"] == 20
