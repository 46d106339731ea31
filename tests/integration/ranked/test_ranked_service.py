"""The ranked service over real NATS, Redis and SQL: queue join/leave/status with the
balance check, the matcher seating six players (two sharing an address) at two tables
with the pair apart and telling each on their notify subject, the leaderboard with the
caller's place and names from auth, admin actions (a frozen account cannot queue) and
the fair-play report. The wallet, the lobby and auth are tiny real NATS responders."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import msgspec
import pytest
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import RemoteError
from kalaro.bus import request as bus_request
from kalaro.bus.codec import decode, encode
from kalaro.bus.redislink import RedisLink
from kalaro.proto import auth as a
from kalaro.proto import endpoints, subjects, ws
from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from kalaro.proto import ranked as rk
from kalaro.proto import wallet as w
from services.ranked.bootstrap import build_service, listen_seen
from services.ranked.handlers import RankedDeps, seat_credits
from services.ranked.matcher import Matcher
from services.ranked.names import NameCache
from services.ranked.queue import STALE_MATCH_MS, RankedQueue, Seat
from services.ranked.store import SqlRankedStore
from tests.integration.ranked.ranked_helpers import eventually, ranked_record


@dataclass
class World:
    nc: NATS
    deps: RankedDeps
    matcher: Matcher
    balances: dict[str, int] = field(default_factory=dict)
    opened: list[lb.OpenRankedTable] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)


async def _responder(nc: NATS, subject: str, answer: object) -> object:
    async def on_request(msg: Msg) -> None:
        await msg.respond(encode(answer(msg.data)))  # type: ignore[operator]

    return await nc.subscribe(subject, cb=on_request)


@pytest.fixture
async def world(
    nc: NATS, redis: RedisLink, engine: AsyncEngine, unique: str
) -> AsyncIterator[World]:
    queue = RankedQueue(redis, namespace=f"{unique}:")
    deps = RankedDeps(
        store=SqlRankedStore(engine), queue=queue, nc=nc, names=NameCache(nc, timeout=0.3),
        timeout=0.5,
    )  # fmt: skip
    found = World(nc, deps, Matcher(nc, queue, rng=random.Random(7)))

    def balance(data: bytes) -> w.Balance:
        user = decode(data, w.GetBalance).user_id
        have = found.balances.get(user, 0)
        return w.Balance(user_id=user, balance=have, held=0, available=have)

    def open_table(data: bytes) -> lb.RankedTableOpened:
        ask = decode(data, lb.OpenRankedTable)
        if ask.match_id not in {o.match_id for o in found.opened}:
            found.opened.append(ask)
        return lb.RankedTableOpened(table_id=f"rt-{ask.match_id}")

    def profile(data: bytes) -> a.UserProfile | object:
        user = decode(data, a.GetProfile).user_id
        return a.UserProfile(
            user_id=user, email="x@example.com", display_name=found.names.get(user, "?"),
            roles=("player",), created_at="2026-01-01",
        )  # fmt: skip

    subs = [
        await _responder(nc, subjects.WALLET_BALANCE, balance),
        await _responder(nc, subjects.LOBBY_OPEN_RANKED, open_table),
        await _responder(nc, subjects.AUTH_PROFILE, profile),
        await listen_seen(nc, deps),
    ]
    service = build_service(deps)
    await service.start(nc)
    yield found
    await service.stop()
    for sub in subs:
        with contextlib.suppress(Exception):
            await sub.unsubscribe()  # type: ignore[attr-defined]


async def _join(world: World, user: str, bet: int = 10, address: str = "") -> rk.QueueStatus:
    ask = rk.JoinQueue(user_id=user, game="tongits", bet=bet, address=address)
    return await bus_request(world.nc, endpoints.RANKED_QUEUE_JOIN, ask)


async def _status(world: World, user: str) -> rk.QueueStatus:
    return await bus_request(
        world.nc, endpoints.RANKED_QUEUE_STATUS, rk.GetQueueStatus(user_id=user)
    )


async def test_join_status_and_leave_with_the_balance_check(world: World, unique: str) -> None:
    user = f"{unique}p"
    need = seat_credits("tongits", 10)
    assert need > 10
    world.balances[user] = need - 1
    with pytest.raises(RemoteError) as refused:
        await _join(world, user)
    assert refused.value.code == codes.INSUFFICIENT_FUNDS and str(need) in refused.value.message
    world.balances[user] = need
    for bad in (
        rk.JoinQueue(user_id=user, game="chess", bet=10),
        rk.JoinQueue(user_id=user, game="tongits", bet=0),
    ):
        with pytest.raises(RemoteError) as wrong:
            await bus_request(world.nc, endpoints.RANKED_QUEUE_JOIN, bad)
        assert wrong.value.code == codes.BAD_REQUEST
    assert (await _status(world, user)).status == "idle"
    joined = await _join(world, user)
    assert joined.status == "waiting" and joined.game == "tongits" and joined.bet == 10
    await asyncio.sleep(0.3)
    again = await _join(world, user)  # asked twice: the first wait goes on
    assert again.status == "waiting" and again.waited_s is not None and again.waited_s >= 0.2
    waiting = await _status(world, user)
    assert waiting.status == "waiting" and waiting.table_id is None
    assert msgspec.json.decode(encode(waiting))["status"] == "waiting"
    assert "table_id" not in msgspec.json.decode(encode(waiting))
    left = await bus_request(world.nc, endpoints.RANKED_QUEUE_LEAVE, rk.LeaveQueue(user_id=user))
    assert left.status == "idle" and (await _status(world, user)).status == "idle"


async def test_six_players_two_sharing_an_address_sit_at_two_tables_apart(
    world: World, unique: str
) -> None:
    players = [f"{unique}p{n}" for n in range(6)]
    pair = {players[0], players[1]}
    told: dict[str, ws.Seated] = {}

    async def on_notice(msg: Msg) -> None:
        told[msg.subject.rsplit(".", 1)[1]] = decode(msg.data, ws.Seated)

    notices = await world.nc.subscribe(subjects.USER_NOTIFY_ALL, cb=on_notice)
    for n, user in enumerate(players):
        world.balances[user] = 10_000
        address = "198.51.100.7" if user in pair else f"203.0.113.{n}"
        assert (await _join(world, user, address=address)).status == "waiting"
    # The matcher's tick as the lease holder runs it.
    assert await world.matcher.lease.hold()
    tables = await world.matcher.tick()
    assert len(tables) == 2 and len(world.opened) == 2
    for opened in world.opened:
        assert opened.game == "tongits" and opened.bet == 10 and len(opened.players) == 3
        assert len(pair & set(opened.players)) == 1, "the pair sharing an address sits apart"
    assert sorted(u for o in world.opened for u in o.players) == sorted(players)
    for user in players:
        status = await _status(world, user)
        table = next(o for o in world.opened if user in o.players)
        assert status.status == "seated" and status.table_id == f"rt-{table.match_id}"
    await eventually(lambda: _all_told(told, players))
    assert all(told[u].table_id.startswith("rt-") and told[u].game == "tongits" for u in players)
    assert await world.matcher.tick() == []  # nobody waits any more
    await notices.unsubscribe()


async def _all_told(told: dict[str, ws.Seated], players: list[str]) -> bool:
    return all(u in told for u in players)


async def test_one_matcher_at_a_time_holds_the_lease(world: World) -> None:
    other = Matcher(world.nc, world.deps.queue)
    assert await world.matcher.lease.hold()
    assert not await other.lease.hold()
    await world.matcher.lease.release()
    assert await other.lease.hold()
    await other.lease.release()


async def test_the_leaderboard_orders_by_rating_with_the_callers_place(
    world: World, unique: str
) -> None:
    a_, b_, c_ = (f"{unique}{x}" for x in "abc")
    world.names[a_] = "Alicia"  # auth's name wins over the one the hand showed
    store = world.deps.store
    now = world.deps.now_ms()
    await store.apply_hand(ranked_record(f"{unique}.1", (a_, b_, c_), (20, -5, -15)), now)
    await store.apply_hand(ranked_record(f"{unique}.2", (a_, b_, c_), (20, -5, -15)), now)
    ask = rk.GetLeaderboard(game="tongits", period="all", caller_id=c_)
    board = await bus_request(world.nc, endpoints.RANKED_LEADERBOARD, ask)
    mine = [r for r in board.top if r.user_id in (a_, b_, c_)]
    assert [r.user_id for r in mine] == [a_, b_, c_]
    assert [r.rank for r in board.top] == list(range(1, len(board.top) + 1))
    assert mine[0].display_name == "Alicia" and mine[0].hands == 2
    assert board.me is not None and board.me.user_id == c_ and board.me.rank == mine[2].rank
    week = rk.GetLeaderboard(game="tongits", period="week", caller_id=f"{unique}nobody")
    weekly = await bus_request(world.nc, endpoints.RANKED_LEADERBOARD, week)
    assert weekly.me is None and {a_, b_, c_} <= {r.user_id for r in weekly.top}
    with pytest.raises(RemoteError) as wrong:
        await bus_request(world.nc, endpoints.RANKED_LEADERBOARD, rk.GetLeaderboard(game="go"))
    assert wrong.value.code == codes.BAD_REQUEST
    ratings = await bus_request(world.nc, endpoints.RANKED_RATINGS, rk.GetRatings(user_id=a_))
    by_game = {g.game: g for g in ratings.games}
    assert set(by_game) == {"tongits", "mahjong", "kawuxing"}
    assert by_game["tongits"].hands == 2 and by_game["tongits"].last_change > 0
    assert by_game["mahjong"].hands == 0 and by_game["mahjong"].rating == 1000


async def test_admin_actions_freeze_blocks_the_queue_and_fair_play_lists_shared_access(
    world: World, unique: str
) -> None:
    user, twin, admin = f"{unique}u", f"{unique}t", f"{unique}admin"
    world.balances[user] = 10_000
    await _join(world, user)
    for action in ("warn", "freeze"):
        act = rk.AdminAct(admin_id=admin, user_id=user, action=action, reason=f"{action}: test")
        acted = await bus_request(world.nc, endpoints.RANKED_ADMIN_ACT, act)
        assert acted.audit.action == action and acted.audit.admin_id == admin
    standing = await bus_request(world.nc, endpoints.RANKED_STANDING, rk.GetStanding(user_id=user))
    assert standing.frozen and standing.warnings == 1
    assert (await _status(world, user)).status == "idle", "freezing takes them out of the queue"
    with pytest.raises(RemoteError) as frozen:
        await _join(world, user)
    assert frozen.value.code == codes.FORBIDDEN
    act = rk.AdminAct(admin_id=admin, user_id=user, action="warn", reason="  ")
    with pytest.raises(RemoteError) as no_reason:
        await bus_request(world.nc, endpoints.RANKED_ADMIN_ACT, act)
    assert no_reason.value.code == codes.BAD_REQUEST
    own = rk.AdminAct(admin_id=admin, user_id=admin, action="freeze", reason="me")
    with pytest.raises(RemoteError) as self_act:
        await bus_request(world.nc, endpoints.RANKED_ADMIN_ACT, own)
    assert self_act.value.code == codes.FORBIDDEN
    # Two accounts signed in on one device (the gateway's note), one of them from an address.
    for who in (user, twin):
        note = rk.SeenFrom(user_id=who, address="", device_id=f"dev-{unique}")
        await world.nc.publish(subjects.RANKED_SEEN, encode(note))
    ask = rk.GetFairPlay(admin_id=admin)

    async def listed() -> bool:
        report = await bus_request(world.nc, endpoints.RANKED_FAIR_PLAY, ask, timeout=10)
        return any(f.kind == "shared_device" and {user, twin} <= set(f.accounts)
                   for f in report.findings)  # fmt: skip

    await eventually(listed)
    report = await bus_request(world.nc, endpoints.RANKED_FAIR_PLAY, ask, timeout=10)
    assert report.hands_read == 0 and "history" in report.note  # no history here
    assert [e.action for e in report.audit[:2]] == ["freeze", "warn"]


async def test_a_player_being_seated_still_waits_and_a_dead_matchers_take_goes_back(
    world: World, unique: str
) -> None:
    """Between "taken out of the queue" and "seated" (the lobby opening the table) a
    player is waiting, never idle; a take whose matcher died goes back to the queue."""
    users = [f"{unique}-m{i}" for i in range(3)]
    for user in users:
        world.balances[user] = 10_000
        assert (await _join(world, user)).status == "waiting"
    queue = world.deps.queue
    now_ms = world.deps.now_ms()
    taken = await queue.take(users, now_ms)
    assert taken is not None and set(taken) == set(users)
    assert await queue.take(users, now_ms) is None  # nobody is taken twice
    for user in users:
        status = await _status(world, user)
        assert status.status == "waiting" and status.waited_s is not None, status
    # Asking to join again meanwhile, for another stake, is refused, not a second wait.
    with pytest.raises(RemoteError) as refused:
        await _join(world, users[0], bet=20)
    assert refused.value.code == codes.CONFLICT

    # Nobody opened their table (the matcher died): later they are back in the queue.
    assert await queue.put_back_stale(now_ms + 1_000) == []
    back = await queue.put_back_stale(now_ms + STALE_MATCH_MS + 1)
    assert sorted(back) == sorted(users)
    assert {e.user_id for e in await queue.entries(now_ms)} >= set(users)

    # Taken again and seated: "seated", and out of matching.
    assert await queue.take(users, now_ms) is not None
    seat = Seat(table_id="rt-x", game="tongits", bet=10, match_id="m-x")
    await queue.mark_seated(users, seat)
    for user in users:
        status = await _status(world, user)
        assert (status.status, status.table_id) == ("seated", "rt-x"), status
    assert await queue.put_back_stale(now_ms + STALE_MATCH_MS + 1) == []
