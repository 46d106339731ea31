"""Ranked tables and minimum ratings on real NATS and Redis (issue 34).

Besides the harness's wallet and engine peers, a stand-in auth answers profiles (the
lobby names the matched players from them) and a stand-in ranked service answers
ratings, both on the test's nats-server.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from msgspec.structs import replace

from kalaro.bus import RemoteError, Service, ServiceError, request
from kalaro.proto import endpoints, subjects
from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from kalaro.proto.auth import GetProfile, UserProfile
from kalaro.proto.ranked import GameRating, GetRatings, GetStanding, Ratings, Standing
from services.lobby import handlers, ranked
from services.lobby.records import TableRecord
from tests.integration.lobby.harness import LobbyHarness, refused


@dataclass
class Others:
    """Auth's profiles and the ranked service's ratings, as the lobby asks for them."""

    bots: set[str] = field(default_factory=set)
    frozen: set[str] = field(default_factory=set)
    ratings: dict[str, float] = field(default_factory=dict)  # tongits ratings by user id

    def service(self) -> Service:
        service = Service("lobby-ranked-test-peers")
        service.add(endpoints.AUTH_PROFILE, self._profile)
        service.add(endpoints.RANKED_RATINGS, self._ratings)
        service.add(endpoints.RANKED_STANDING, self._standing)
        return service

    async def _standing(self, req: GetStanding) -> Standing:
        return Standing(user_id=req.user_id, frozen=req.user_id in self.frozen)

    async def _profile(self, req: GetProfile) -> UserProfile:
        if req.user_id.startswith("ghost"):
            raise ServiceError(codes.NOT_FOUND, "no such user")
        return UserProfile(
            user_id=req.user_id,
            email=f"{req.user_id}@example.com",
            display_name=req.user_id.split("-")[0].title(),
            roles=("bot",) if req.user_id in self.bots else ("player",),
            created_at="2026-12-05T00:00:00Z",
            email_verified=True,
        )

    async def _ratings(self, req: GetRatings) -> Ratings:
        rating = self.ratings.get(req.user_id)
        games = (
            ()
            if rating is None
            else (
                GameRating(
                    game="tongits",
                    rating=round(rating),
                    mu=25.0,
                    sigma=8.0,
                    tier="Silver",
                    hands=10,
                    last_change=0,
                ),
            )
        )
        return Ratings(user_id=req.user_id, games=games)


@pytest.fixture
async def others(lobby: LobbyHarness) -> AsyncIterator[Others]:
    found = Others()
    service = found.service()
    await service.start(lobby.nc)
    try:
        yield found
    finally:
        await service.stop()


async def _open(
    lobby: LobbyHarness, names: tuple[str, ...] = ("Ana", "Ben", "Cris"), match: str = "m1"
) -> tuple[lb.TableInfo, list[lb.Caller]]:
    players = [lobby.user(n) for n in names]
    message = lb.OpenRankedTable(
        game="tongits",
        bet=10,
        players=tuple(p.user_id for p in players),
        match_id=lobby.unique + match,
    )
    opened = await request(lobby.nc, endpoints.LOBBY_OPEN_RANKED, message, timeout=10)
    return await lobby.get(opened.table_id), players


async def test_a_match_opens_a_ranked_table_seated_in_order_once(
    lobby: LobbyHarness, others: Others
) -> None:
    table, players = await _open(lobby)
    assert table.ranked and not table.private and table.host_id == ""
    assert [s.user_id for s in table.seats if s is not None] == [p.user_id for p in players]
    assert table.status == "waiting" and table.ready_by is not None
    # The balance check of a Sit ran for each of them.
    assert {a.user_id for a in lobby.peers.balance_asks} == {p.user_id for p in players}
    again, _ = await _open(lobby)  # the ranked service retried: the same table
    assert again.table_id == table.table_id
    listed = await lobby.call(subjects.LOBBY_LIST_TABLES, lb.ListTables(), lb.TableList)
    assert table.table_id in [t.table_id for t in listed.tables]  # public to watch


async def test_it_deals_itself_when_everyone_is_ready_and_its_hands_are_ranked(
    lobby: LobbyHarness, others: Others
) -> None:
    table, players = await _open(lobby)
    for p in players[:-1]:
        assert (await lobby.ready(p, table.table_id)).status == "waiting"
    dealt = await lobby.ready(players[-1], table.table_id)
    assert dealt.status == "playing" and dealt.ready_by is None
    [start] = lobby.peers.starts
    assert start.ranked and start.bet == 10
    assert [h.user_id for h in lobby.peers.holds[0].holds] == [p.user_id for p in players]
    # The hand ends: the ready clock starts again for the next one.
    finished = lb.HandFinished(table_id=table.table_id, hand_id=start.hand_id, next_dealer=1)
    await handlers.hand_finished(finished, lobby.lobby)
    after = await lobby.get(table.table_id)
    assert after.status == "waiting" and after.ready_by is not None
    assert after.ready_by >= lobby.clock() + ranked.READY_SECONDS - 1


async def test_nobody_else_sits_no_bot_comes_and_a_leaver_ends_it(
    lobby: LobbyHarness, others: Others
) -> None:
    table, players = await _open(lobby)
    message = await refused(codes.FORBIDDEN, lobby.sit(lobby.user("Dina"), table.table_id))
    assert "ranked queue" in message
    admin = lobby.user("Ada", "admin")
    bot = lb.AddBot(caller=admin, table_id=table.table_id)
    await refused(codes.FORBIDDEN, lobby.call(subjects.LOBBY_ADD_BOT, bot, lb.TableInfo))
    left = await lobby.call(
        subjects.LOBBY_LEAVE, lb.Leave(caller=players[1], table_id=table.table_id), lb.TableInfo
    )
    assert left.status == "ended"


async def test_the_ready_clock_stands_up_the_late_and_the_table_ends(
    lobby: LobbyHarness, others: Others
) -> None:
    table, players = await _open(lobby)
    await lobby.ready(players[0], table.table_id)
    assert await lobby.lobby.ranked.sweep_clocks() == 0  # nothing due yet
    lobby.clock.advance(ranked.READY_SECONDS + 1)
    assert await lobby.lobby.ranked.sweep_clocks() >= 1
    ended = await lobby.get(table.table_id)
    assert ended.status == "ended"
    assert [s is not None for s in ended.seats] == [True, False, False]
    assert lobby.peers.starts == []


async def test_all_ready_at_the_sweep_deals(lobby: LobbyHarness, others: Others) -> None:
    table, players = await _open(lobby)
    for p in players:
        # Readied straight in the store, as if the last Ready's own deal was lost.
        await lobby.lobby.writer.update(table.table_id, lambda rec, p=p: _ready(rec, p.user_id))
    lobby.clock.advance(ranked.READY_SECONDS + 1)
    await lobby.lobby.ranked.sweep_clocks()
    assert (await lobby.get(table.table_id)).status == "playing"
    assert len(lobby.peers.starts) == 1


def _ready(rec: TableRecord, user_id: str) -> TableRecord:
    seats = tuple(
        replace(s, ready=True) if s is not None and s.user_id == user_id else s
        for s in rec.info.seats
    )
    return replace(rec, info=replace(rec.info, seats=seats))


async def test_a_player_who_cannot_afford_it_fails_the_open_and_nobody_stays_seated(
    lobby: LobbyHarness, others: Others
) -> None:
    lobby.peers.balances[lobby.user("Cris").user_id] = 5  # max loss is more than the bet
    with pytest.raises(RemoteError) as error:
        await _open(lobby)
    assert error.value.code == codes.INSUFFICIENT_FUNDS
    assert error.value.user_ids == (lobby.user("Cris").user_id,)
    assert "Cris" in error.value.message
    opened = [t for t in _all_tables(lobby) if t.ranked]
    assert opened and opened[-1].status == "cancelled"
    assert opened[-1].seats == (None, None, None)
    # A retry after the failure tries again (and with the balance there, opens).
    lobby.peers.balances.clear()
    table, _ = await _open(lobby)
    assert table.status == "waiting" and table.table_id != opened[-1].table_id


async def test_a_bot_or_unknown_account_is_never_seated(
    lobby: LobbyHarness, others: Others
) -> None:
    others.bots.add(lobby.user("Ben").user_id)
    with pytest.raises(RemoteError) as error:
        await _open(lobby)
    assert error.value.code == codes.FORBIDDEN
    with pytest.raises(RemoteError) as error:
        await _open(lobby, ("Ana", "Ghost", "Cris"), match="m2")
    # "Ghost-…" has no account (the stand-in auth answers not_found for it).
    assert error.value.code in (codes.NOT_FOUND, codes.FORBIDDEN)


def _all_tables(lobby: LobbyHarness) -> list[lb.TableInfo]:
    seen: dict[str, lb.TableInfo] = {}
    for subject, _ in lobby.frames.raw:
        table_id = subject.split(".")[1]
        for info in lobby.frames.tables(table_id):
            seen[table_id] = info
    return list(seen.values())


async def test_a_minimum_rating_refuses_a_lower_player_and_counts_unknown_as_start(
    lobby: LobbyHarness, others: Others
) -> None:
    ana, ben, cris = lobby.user("Ana"), lobby.user("Ben"), lobby.user("Cris")
    others.ratings.update({ana.user_id: 1250.0, ben.user_id: 1150.0})
    created = await lobby.create("tongits", 10, min_rating=1200)
    table_id = created.table.table_id
    assert created.table.min_rating == 1200
    await lobby.sit(ana, table_id)
    message = await refused(codes.RATING_TOO_LOW, lobby.sit(ben, table_id))
    assert "1200" in message and "1150" in message
    await refused(codes.RATING_TOO_LOW, lobby.sit(cris, table_id))  # unrated: 1000
    lowered = lb.SetMinRating(caller=lobby.host, table_id=table_id, min_rating=1000)
    changed = await lobby.call(subjects.LOBBY_SET_MIN_RATING, lowered, lb.TableInfo)
    assert changed.min_rating == 1000
    await lobby.sit(cris, table_id)
    not_host = lb.SetMinRating(caller=ben, table_id=table_id, min_rating=None)
    await refused(
        codes.FORBIDDEN, lobby.call(subjects.LOBBY_SET_MIN_RATING, not_host, lb.TableInfo)
    )


async def test_a_frozen_account_sits_nowhere(lobby: LobbyHarness, others: Others) -> None:
    ana, ben = lobby.user("Ana"), lobby.user("Ben")
    others.frozen.add(ana.user_id)
    table = (await lobby.create("tongits", 0)).table
    message = await refused(codes.FORBIDDEN, lobby.sit(ana, table.table_id))
    assert "frozen" in message
    assert (await lobby.sit(ben, table.table_id)).seats[0] is not None


async def test_without_the_ranked_service_a_sit_still_works(lobby: LobbyHarness) -> None:
    # No stand-in answers ranked.standing.get here: ordinary play goes on.
    table = (await lobby.create("tongits", 0)).table
    sat = await lobby.sit(lobby.user("Ana"), table.table_id)
    assert sat.seats[0] is not None


async def test_racing_retries_of_one_match_answer_one_table(
    lobby: LobbyHarness, others: Others
) -> None:
    lobby.peers.balance_delay = 0.05  # widen the race
    players = tuple(lobby.user(n).user_id for n in ("Ana", "Ben", "Cris"))
    message = lb.OpenRankedTable(game="tongits", bet=10, players=players, match_id="race")
    answers = await asyncio.gather(
        *(request(lobby.nc, endpoints.LOBBY_OPEN_RANKED, message, timeout=10) for _ in range(3)),
        return_exceptions=True,
    )
    opened = {a.table_id for a in answers if isinstance(a, lb.RankedTableOpened)}
    assert len(opened) == 1, answers
    assert all(isinstance(a, lb.RankedTableOpened) for a in answers), answers
    [table_id] = opened
    assert (await lobby.get(table_id)).status == "waiting"
    # Every other table opened on the way was cancelled with nobody at it.
    others_opened = [t for t in _all_tables(lobby) if t.ranked and t.table_id != table_id]
    assert all(t.status == "cancelled" and not any(t.seats) for t in others_opened)
