"""Ranked play through the whole stack (issue 34), with the SDK.

Six players sign up and queue for ranked Tongits from their own addresses, two of them
from one address (behind a proxy the gateway trusts, as a carrier's NAT or a café
would look). The matcher seats them at two tables of three with that pair apart and
no bot; each table deals itself once everyone taps Ready, and each plays a hand. The
ranked service rates both hands from their records: each player has one rated hand,
and each table's winner's rating rose. A practice hand against bots and a hand at a
private table change nobody's rating. The leaderboard is in rating order and tells a
player their own place. Fair play is for admins only.
"""

from __future__ import annotations

import asyncio
import random
import time

import pytest

from kalaro.client import ApiError, KalaroClient
from kalaro.proto import ranked as rk
from tests.e2e.stack import Stack
from tests.e2e.tables import LiveTable, admin, play_hand, signed_up

pytestmark = pytest.mark.timeout(300)

GAME = "tongits"
BET = 10
SEATED_WITHIN_S = 20
RATED_WITHIN_S = 30
SHARED_ADDRESS = "198.51.100.77"


def _tongits(ratings: rk.Ratings) -> rk.GameRating:
    return next(g for g in ratings.games if g.game == GAME)


async def _seated(player: KalaroClient) -> str:
    deadline = time.monotonic() + SEATED_WITHIN_S
    while True:
        status = await player.queue_status()
        if status.status == "seated" and status.table_id is not None:
            return status.table_id
        assert status.status == "waiting", status
        assert time.monotonic() < deadline, f"{player.user.display_name} never seated"
        await asyncio.sleep(0.2)


async def _rated(player: KalaroClient, hands: int) -> rk.GameRating:
    deadline = time.monotonic() + RATED_WITHIN_S
    while True:
        rating = _tongits(await player.ratings())
        if rating.hands >= hands:
            return rating
        assert time.monotonic() < deadline, f"not rated in {RATED_WITHIN_S}s: {rating}"
        await asyncio.sleep(0.5)


async def _hand_over_at_the_lobby(player: KalaroClient, table_id: str) -> None:
    """The lobby learns of a hand's end through JetStream, a moment after the result."""
    deadline = time.monotonic() + 10
    while (await player.get_table(table_id)).status != "waiting":
        assert time.monotonic() < deadline, "the hand never ended at the lobby"
        await asyncio.sleep(0.1)


async def _play_ranked(table_id: str, players: list[KalaroClient], seed: int) -> list[int]:
    """Everyone taps Ready (the table deals itself) and the hand is played, again after
    a drawn hand (nobody paid: not rated), until one is won; its payments by player."""
    by_user = {p.user.user_id: p for p in players}
    info = await players[0].get_table(table_id)
    assert info.ranked and not info.private
    assert all(s is not None and not s.is_bot for s in info.seats), info.seats
    seated = [by_user[s.user_id] for s in info.seats if s is not None]
    sockets = []
    for seat, player in enumerate(seated):
        socket = player.table_socket()
        await socket.connect()
        assert (await socket.subscribe(table_id)).seat == seat
        sockets.append(socket)
    live = LiveTable(table_id, seated[0], seated, sockets)
    try:
        for attempt in range(3):
            if attempt:
                await _hand_over_at_the_lobby(seated[0], table_id)
            await live.ready_all()
            await live.wait_for_hand()
            result = await play_hand(live, GAME, rng=random.Random(seed * 10 + attempt))
            if max(result.payments) > 0:
                break
        else:
            raise AssertionError("three drawn hands in a row")
    finally:
        await live.close()
    assert list(result.players) == [p.user.user_id for p in seated]
    # One player leaving ends a ranked table (a ranked hand needs all its players):
    # nobody stays seated, or committed, there.
    await _hand_over_at_the_lobby(seated[0], table_id)
    await seated[0].leave(table_id)
    assert (await seated[1].get_table(table_id)).status == "ended"
    return [result.payments[result.players.index(p.user.user_id)] for p in players]


async def test_ranked_queue_seats_strangers_apart_and_rates_only_ranked_hands(
    stack: Stack, unique: str
) -> None:
    url = stack.start_gateway("gateway-ranked-sdk", KALARO_TRUSTED_PROXIES="127.0.0.1")
    try:
        addresses = [SHARED_ADDRESS, SHARED_ADDRESS, *(f"203.0.113.{20 + i}" for i in range(4))]
        players = [
            await signed_up(stack, f"Rk{i}", unique, base_url=url, address=address)
            for i, address in enumerate(addresses)
        ]
        before = {p.user.user_id: _tongits(await p.ratings()) for p in players}
        assert all(r.hands == 0 for r in before.values())

        # --- the queue: two tables of three, the pair apart, no bots -----------------
        for player in players:
            joined = await player.join_queue(GAME, BET)
            assert joined.status in ("waiting", "seated")
        tables: dict[str, list[KalaroClient]] = {}
        for player in players:
            tables.setdefault(await _seated(player), []).append(player)
        assert sorted(len(group) for group in tables.values()) == [3, 3], tables
        pair = {players[0].user.user_id, players[1].user.user_id}
        for group in tables.values():
            assert len(pair & {p.user.user_id for p in group}) <= 1, "the pair sat together"

        # --- each table plays a hand; the winner's rating rises ------------------------
        for seed, (table_id, group) in enumerate(tables.items()):
            paid = await _play_ranked(table_id, group, seed)
            assert sum(paid) == 0 and max(paid) > 0, paid
            winner = group[paid.index(max(paid))]
            rated = await _rated(winner, 1)
            assert rated.last_change > 0 and rated.rating > before[winner.user.user_id].rating
            for player in group:
                assert (await _rated(player, 1)).hands == 1

        # --- practice and private hands rate nobody -----------------------------------
        ratings = {p.user.user_id: _tongits(await p.ratings()) for p in players}
        practice = await players[2].create_practice(GAME)
        practice_id = practice.table.table_id
        socket = players[2].table_socket()
        await socket.connect()
        await socket.subscribe(practice_id)
        live = LiveTable(practice_id, players[2], [players[2]], [socket])
        await players[2].ready(practice_id, True, "practice-entropy")
        await live.wait_for_hand(timeout=20)
        await play_hand(live, GAME, rng=random.Random(5))  # the bots play the other seats
        await live.close()

        root = await admin(stack)
        private = await root.create_table(GAME, 1, private=True)
        trio = [players[0], players[3], players[4]]
        live_private = await open_table_private(private.table.table_id, private.invite_code, trio)
        live_private.host = root
        await live_private.deal()
        await play_hand(live_private, GAME, rng=random.Random(7))
        await live_private.close()
        await asyncio.sleep(3)  # the records reach the ranked service within a second
        for player in players:
            assert _tongits(await player.ratings()) == ratings[player.user.user_id]

        # --- the leaderboard: rating order, and my own place --------------------------
        board = await players[0].leaderboard(GAME, "all")
        shown = [row.rating for row in board.top]
        assert shown == sorted(shown, reverse=True)
        assert [row.rank for row in board.top] == list(range(1, len(board.top) + 1))
        for player in players:
            mine = (await player.leaderboard(GAME, "week")).me
            assert mine is not None and mine.user_id == player.user.user_id
            assert mine.rating == ratings[player.user.user_id].rating
            higher = [
                r for r in (await player.leaderboard(GAME, "week")).top if r.rating > mine.rating
            ]
            assert mine.rank >= len(higher) + 1

        # --- fair play: admins only ----------------------------------------------------
        with pytest.raises(ApiError) as refused:
            await players[0].call("GET", "/api/admin/fair-play", rk.FairPlayReport, game=GAME)
        assert refused.value.status == 403
        report = await root.call("GET", "/api/admin/fair-play", rk.FairPlayReport, game=GAME)
        assert isinstance(report, rk.FairPlayReport)
    finally:
        stack.stop("gateway-ranked-sdk")


async def open_table_private(
    table_id: str, invite_code: str | None, players: list[KalaroClient]
) -> LiveTable:
    """Seat ``players`` at a private table with its code and connect their sockets."""
    sockets = []
    for seat, player in enumerate(players):
        await player.sit(table_id, seat, invite_code=invite_code)
        socket = player.table_socket()
        await socket.connect()
        assert (await socket.subscribe(table_id)).seat == seat
        sockets.append(socket)
    return LiveTable(table_id, players[0], players, sockets)
