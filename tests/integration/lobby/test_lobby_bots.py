"""Practice tables and bots in the lobby: who may sit where, auto-deal, and failures.

The bots service is played by :class:`BotsPeer`, a real service on the test's NATS that
answers ``bots.seat`` the way the real one does: it sits a bot (a caller with the
``bot`` role) through the lobby's own ``Sit``, then says which bot it seated.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Literal

import pytest
from nats.aio.client import Client as NATS

from kalaro.bus import Service, ServiceError, request
from kalaro.proto import endpoints, subjects
from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from kalaro.proto.bots import BotSeated, SeatBot
from services.lobby import handlers
from tests.integration.lobby.harness import LobbyHarness, eventually, refused

Mode = Literal["sit", "refuse", "answer-only"]


@dataclass
class BotsPeer:
    """``bots.seat`` as the lobby sees it. ``mode``: ``sit`` (a bot sits, like the real
    service), ``refuse`` (answers bad_request), ``answer-only`` (answers without sitting,
    so the seat stays kept for a bot)."""

    nc: NATS
    unique: str
    mode: Mode = "sit"
    asked: list[SeatBot] = field(default_factory=list)
    seated: list[lb.Caller] = field(default_factory=list)

    def bot(self, n: int) -> lb.Caller:
        return lb.Caller(
            user_id=f"bot{n}-{self.unique}", display_name=f"Bot {n}", roles=("player", "bot")
        )

    async def seat(self, req: SeatBot) -> BotSeated:
        self.asked.append(req)
        if self.mode == "refuse":
            raise ServiceError(codes.BAD_REQUEST, f"no bots for game {req.game!r}")
        bot = self.bot(len(self.asked))
        if self.mode == "sit":
            message = lb.Sit(caller=bot, table_id=req.table_id, seat=req.seat)
            await request(self.nc, subjects.LOBBY_SIT, message, lb.TableInfo)
            self.seated.append(bot)
        return BotSeated(
            table_id=req.table_id, seat=req.seat, user_id=bot.user_id, display_name=bot.display_name
        )


@pytest.fixture
async def bots(nc: NATS, unique: str) -> AsyncIterator[BotsPeer]:
    peer = BotsPeer(nc, unique)
    service = Service("lobby-test-bots")
    service.add(endpoints.BOTS_SEAT, peer.seat)
    await service.start(nc)
    yield peer
    await service.stop()


async def practice(
    lobby: LobbyHarness, who: lb.Caller, game: lb.Game = "tongits", **kw: object
) -> lb.TableCreated:
    message = lb.CreatePractice(caller=who, game=game, **kw)  # type: ignore[arg-type]
    return await lobby.call(subjects.LOBBY_CREATE_PRACTICE, message, lb.TableCreated)


async def add_bot(
    lobby: LobbyHarness, who: lb.Caller, table_id: str, seat: int | None = None
) -> lb.TableInfo:
    message = lb.AddBot(caller=who, table_id=table_id, seat=seat)
    return await lobby.call(subjects.LOBBY_ADD_BOT, message, lb.TableInfo)


async def test_practice_table_seats_its_host_and_bots_and_is_not_listed(
    lobby: LobbyHarness, bots: BotsPeer
) -> None:
    ana = lobby.user("Ana")  # a plain player: no host role needed to practise
    created = await practice(lobby, ana, "mahjong")
    table = created.table
    assert created.invite_code is None
    assert (table.practice, table.bet, table.max_loss, table.host_id) == (True, 0, 0, ana.user_id)
    assert table.seats[0] == lb.SeatInfo(user_id=ana.user_id, display_name="Ana")
    # The bots were asked for all at once, so they sat in any order.
    assert {s.user_id if s else None for s in table.seats[1:]} == {b.user_id for b in bots.seated}
    assert all(s is not None and s.is_bot for s in table.seats[1:])
    assert sorted((r.seat, r.game) for r in bots.asked) == [
        (1, "mahjong"),
        (2, "mahjong"),
        (3, "mahjong"),
    ]
    listed = await lobby.call(subjects.LOBBY_LIST_TABLES, lb.ListTables(), lb.TableList)
    assert table.table_id not in {t.table_id for t in listed.tables}
    assert (await lobby.record(table.table_id)).bot_seats == ()  # every kept seat is taken


async def test_practice_deals_itself_when_the_last_seat_is_ready(
    lobby: LobbyHarness, bots: BotsPeer
) -> None:
    ana = lobby.user("Ana")
    table = (await practice(lobby, ana)).table
    for bot in bots.seated:
        after = await lobby.ready(bot, table.table_id)
        assert after.status == "waiting"
    dealt = await lobby.ready(ana, table.table_id)
    assert dealt.status == "playing" and dealt.hand_no == 1
    [start] = lobby.peers.starts
    assert start.bet == 0 and [p.is_bot for p in start.players] == [False, True, True]
    assert lobby.peers.holds == [] and lobby.peers.balance_asks == []  # no credits touched

    # After the hand everyone is un-readied; again the last Ready deals (here: a bot's).
    finished = lb.HandFinished(table_id=table.table_id, hand_id=start.hand_id, next_dealer=1)
    await handlers.hand_finished(finished, lobby.lobby)
    await lobby.ready(ana, table.table_id)
    await lobby.ready(bots.seated[0], table.table_id)
    again = await lobby.ready(bots.seated[1], table.table_id)
    assert again.status == "playing" and again.hand_no == 2
    assert len(lobby.peers.starts) == 2


async def test_a_practice_table_is_for_its_host_and_bots(
    lobby: LobbyHarness, bots: BotsPeer
) -> None:
    ana, ben = lobby.user("Ana"), lobby.user("Ben")
    table = (await practice(lobby, ana)).table
    bot = bots.seated[0]
    # A bot leaves a seat free; still nobody but the host (or a bot sent for) sits there.
    await lobby.call(
        subjects.LOBBY_LEAVE, lb.Leave(caller=bot, table_id=table.table_id), lb.TableInfo
    )
    message = await refused(codes.FORBIDDEN, lobby.sit(ben, table.table_id))
    assert "practice" in message
    message = await refused(codes.FORBIDDEN, lobby.sit(bots.bot(9), table.table_id, seat=1))
    assert "kept for a bot" in message
    refilled = await add_bot(lobby, ana, table.table_id)
    assert refilled.seats[1] is not None and refilled.seats[1].is_bot
    bot_practice = lb.CreatePractice(caller=bots.bot(8), game="tongits")
    message = await refused(
        codes.FORBIDDEN,
        lobby.call(subjects.LOBBY_CREATE_PRACTICE, bot_practice, lb.TableCreated),
    )
    assert "bots" in message


async def test_a_practice_table_ends_when_its_host_leaves(
    lobby: LobbyHarness, bots: BotsPeer
) -> None:
    ana = lobby.user("Ana")
    table = (await practice(lobby, ana)).table
    left = await lobby.call(
        subjects.LOBBY_LEAVE, lb.Leave(caller=ana, table_id=table.table_id), lb.TableInfo
    )
    assert left.status == "ended"
    # The bots see it on the table's events and go.
    await eventually(lambda: lobby.frames.tables(table.table_id)[-1].status == "ended")


async def test_an_idle_practice_table_between_hands_is_ended(
    lobby: LobbyHarness, bots: BotsPeer
) -> None:
    core = lobby.lobby
    idle = core.practice_idle_seconds
    ana = lobby.user("Ana")
    quiet = (await practice(lobby, ana)).table
    lobby.clock.advance(idle / 2)
    busy = (await practice(lobby, lobby.user("Ben"))).table
    lobby.clock.advance(idle / 2 - 1)
    assert await core.end_idle_practice() == []

    lobby.clock.advance(2)
    assert await core.end_idle_practice() == [quiet.table_id]
    assert (await lobby.get(quiet.table_id)).status == "ended"
    await eventually(lambda: lobby.frames.tables(quiet.table_id)[-1].status == "ended")
    # Any change at a table is activity: a bot's Ready pushes the second one's time on.
    await lobby.ready(bots.seated[-1], busy.table_id)
    lobby.clock.advance(idle / 2)
    assert await core.end_idle_practice() == []
    assert (await lobby.get(busy.table_id)).status == "waiting"
    lobby.clock.advance(idle / 2)
    assert await core.end_idle_practice() == [busy.table_id]
    lobby.clock.advance(idle * 2)
    assert await core.end_idle_practice() == [], "an ended table is not swept again"
    # Only practice tables are swept: a table with a bet stays however quiet it is.
    table, _ = await lobby.full_table("tongits", 10)
    lobby.clock.advance(idle * 2)
    assert await core.end_idle_practice() == []
    assert (await lobby.get(table.table_id)).status == "waiting"


async def test_an_idle_practice_hand_is_cancelled_only_if_its_moves_stopped(
    lobby: LobbyHarness, bots: BotsPeer
) -> None:
    core = lobby.lobby
    idle = core.practice_idle_seconds
    ana = lobby.user("Ana")
    table = (await practice(lobby, ana)).table
    for who in [*bots.seated, ana]:
        dealt = await lobby.ready(who, table.table_id)
    assert dealt.status == "playing"
    [start] = lobby.peers.starts

    # Quiet at the lobby, but the moves go on at the engine: it stays.
    for version in (1, 7, 12):
        lobby.peers.hand_versions[table.table_id] = version
        lobby.clock.advance(idle + 1)
        assert await core.end_idle_practice() == []
        assert (await lobby.get(table.table_id)).status == "playing"
    # No move for a whole idle period after the last look: the hand is cancelled.
    lobby.clock.advance(idle + 1)
    assert await core.end_idle_practice() == [table.table_id]
    assert (await lobby.get(table.table_id)).status == "cancelled"
    assert [c.hand_id for c in lobby.peers.cancels] == [start.hand_id]
    assert lobby.peers.voids == []  # zero bet: no holds to release


async def test_practice_without_bots_is_cancelled_with_the_reason(
    lobby: LobbyHarness, bots: BotsPeer
) -> None:
    bots.mode = "refuse"
    message = await refused(codes.BAD_REQUEST, practice(lobby, lobby.user("Ana"), "kawuxing"))
    assert "could not seat the bots" in message and "kawuxing" in message
    table_id = bots.asked[0].table_id
    await eventually(lambda: lobby.frames.tables(table_id)[-1].status == "cancelled")
    assert (await lobby.get(table_id)).practice


async def test_practice_when_the_bots_service_is_down(lobby: LobbyHarness) -> None:
    started = time.monotonic()
    message = await refused(codes.UNAVAILABLE, practice(lobby, lobby.user("Ana")))
    assert "bots" in message
    assert time.monotonic() - started < 5  # asked again only within its wait (2 s here)


async def test_practice_waits_for_a_bots_service_that_is_still_starting(
    lobby: LobbyHarness, nc: NATS, unique: str
) -> None:
    """The bots service answers bots.seat only once its accounts exist (after make run
    that took a while): the lobby asks again within its wait instead of failing."""
    peer = BotsPeer(nc, unique)
    service = Service("lobby-test-bots")
    service.add(endpoints.BOTS_SEAT, peer.seat)

    async def start_late() -> None:
        await asyncio.sleep(0.8)  # nobody answers bots.seat meanwhile
        await service.start(nc)

    late = asyncio.create_task(start_late())
    try:
        created = await practice(lobby, lobby.user("Ana"), "mahjong")
        assert created.table.status == "waiting"
        assert all(s is not None and s.is_bot for s in created.table.seats[1:])
        assert sorted(r.seat for r in peer.asked) == [1, 2, 3]  # each asked once it answered
    finally:
        await late
        await service.stop()


async def test_practice_tables_may_play_without_a_clock(
    lobby: LobbyHarness, bots: BotsPeer
) -> None:
    # Zero bet and their host's alone, like a private free table.
    created = await practice(lobby, lobby.user("Ana"), "mahjong", options={"turn_seconds": None})
    assert created.table.options["turn_seconds"] is None


async def test_add_bot_is_for_the_host_at_zero_bet_tables_only(
    lobby: LobbyHarness, bots: BotsPeer
) -> None:
    ben = lobby.user("Ben")
    bet_table = (await lobby.create("tongits", 10)).table
    message = await refused(codes.FORBIDDEN, add_bot(lobby, lobby.host, bet_table.table_id))
    assert "never play for credits" in message
    assert bots.asked == []  # refused before the bots service is asked

    table = (await lobby.create("tongits", 0, private=True)).table
    await refused(codes.FORBIDDEN, add_bot(lobby, ben, table.table_id))
    # Bots need no invite code: their seat was kept for them by the host.
    first = await add_bot(lobby, lobby.host, table.table_id)
    assert first.seats[0] is not None and first.seats[0].is_bot
    message = await refused(codes.CONFLICT, add_bot(lobby, lobby.host, table.table_id, seat=0))
    assert "taken" in message
    await refused(codes.BAD_REQUEST, add_bot(lobby, lobby.host, table.table_id, seat=5))
    admin = lobby.user("Root", "admin")
    second = await add_bot(lobby, admin, table.table_id, seat=2)
    assert second.seats[2] is not None and second.seats[2].is_bot
    third = await add_bot(lobby, lobby.host, table.table_id)
    assert third.seats[1] is not None and third.seats[1].is_bot
    message = await refused(codes.CONFLICT, add_bot(lobby, lobby.host, table.table_id))
    assert "no free seat" in message


async def test_a_bot_sits_only_in_a_kept_seat_at_a_zero_bet_table(
    lobby: LobbyHarness, bots: BotsPeer
) -> None:
    bot = bots.bot(1)
    bet_table = (await lobby.create("tongits", 10)).table
    message = await refused(codes.FORBIDDEN, lobby.sit(bot, bet_table.table_id))
    assert "never play for credits" in message
    assert lobby.peers.balance_asks == []

    table = (await lobby.create("mahjong", 0)).table
    message = await refused(codes.FORBIDDEN, lobby.sit(bot, table.table_id))
    assert "kept for a bot" in message

    bots.mode = "answer-only"  # the seat stays kept, as while a bot is on its way
    await add_bot(lobby, lobby.host, table.table_id, seat=1)
    ana = lobby.user("Ana")
    message = await refused(codes.CONFLICT, lobby.sit(ana, table.table_id, seat=1))
    assert "kept for a bot" in message
    skipped = await lobby.sit(ana, table.table_id, seat=None)  # the first free seat ...
    assert skipped.seats[0] is not None and skipped.seats[0].user_id == ana.user_id
    ben = lobby.user("Ben")
    after_ben = await lobby.sit(ben, table.table_id)  # ... and the next, past the kept one
    assert after_ben.seats[2] is not None and after_ben.seats[2].user_id == ben.user_id
    seated = await lobby.sit(bot, table.table_id)
    assert seated.seats[1] == lb.SeatInfo(
        user_id=bot.user_id, display_name=bot.display_name, is_bot=True
    )

    # A kept seat is kept only for a while: a bot that never came does not block it.
    await add_bot(lobby, lobby.host, table.table_id, seat=3)
    lobby.clock.advance(31)
    message = await refused(codes.FORBIDDEN, lobby.sit(bots.bot(2), table.table_id, seat=3))
    assert "kept for a bot" in message
    assert (await lobby.sit(lobby.user("Cris"), table.table_id, seat=3)).seats[3] is not None


async def test_a_refused_bot_frees_its_seat(lobby: LobbyHarness, bots: BotsPeer) -> None:
    table = (await lobby.create("tongits", 0)).table
    bots.mode = "refuse"
    await refused(codes.BAD_REQUEST, add_bot(lobby, lobby.host, table.table_id, seat=1))
    assert (await lobby.record(table.table_id)).bot_seats == ()
    ana = lobby.user("Ana")
    assert (await lobby.sit(ana, table.table_id, seat=1)).seats[1] is not None


async def test_bots_at_a_host_table_wait_for_the_host_to_deal(
    lobby: LobbyHarness, bots: BotsPeer
) -> None:
    table = (await lobby.create("tongits", 0)).table
    ana = lobby.user("Ana")
    await lobby.sit(ana, table.table_id)
    await add_bot(lobby, lobby.host, table.table_id)
    await add_bot(lobby, lobby.host, table.table_id)
    for who in (ana, *bots.seated):
        ready = await lobby.ready(who, table.table_id)
    assert ready.status == "waiting" and not ready.practice  # no auto-deal here
    dealt = await lobby.deal(lobby.host, table.table_id)
    assert dealt.status == "playing"
    [start] = lobby.peers.starts
    assert [p.is_bot for p in start.players] == [False, True, True]


async def test_bots_still_connected_do_not_keep_an_abandoned_practice_table(
    lobby: LobbyHarness, bots: BotsPeer
) -> None:
    """The host closed the tab; the bots' sockets stay, and their gateway re-announces
    them every period. That is presence, not activity: the table still ends when idle."""
    core = lobby.lobby
    ana = lobby.user("Ana")
    table = (await practice(lobby, ana)).table
    gone = lb.ReportPresence(
        gateway_id="gw", table_id=table.table_id, user_ids=tuple(b.user_id for b in bots.seated)
    )
    period = core.presence_forget_seconds / 3
    waited = 0.0
    while waited <= core.practice_idle_seconds:
        await lobby.call(subjects.LOBBY_PRESENCE, gone, lb.PresenceNoted)
        lobby.clock.advance(period)
        waited += period
    assert [s.presence for s in (await lobby.get(table.table_id)).seats if s] == [
        "offline",
        "connected",
        "connected",
    ]
    assert await core.end_idle_practice() == [table.table_id]
