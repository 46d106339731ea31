"""Ranked play through a real gateway (uvicorn, the session's NATS and Redis): six
players queue from their own addresses (behind a trusted proxy), two of them from one
address, and are seated at two tables with the pair apart, each told on its socket;
queue and admin routes refuse bad input with a 4xx; fair play is for admins only."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import msgspec
import pytest
import websockets
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import Service, ServiceError
from kalaro.bus.codec import decode, encode
from kalaro.bus.redislink import RedisLink
from kalaro.devstack import NatsServer
from kalaro.proto import auth as a
from kalaro.proto import endpoints, subjects
from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from kalaro.proto import wallet as w
from services.ranked.bootstrap import build_service
from services.ranked.handlers import RankedDeps
from services.ranked.matcher import Matcher
from services.ranked.names import NameCache
from services.ranked.queue import RankedQueue
from services.ranked.store import SqlRankedStore
from tests.integration.gateway.world import World, world_of


@dataclass
class Stack:
    world: World
    http: httpx.AsyncClient
    matcher: Matcher
    opened: list[lb.OpenRankedTable]


@pytest.fixture
async def stack(
    nc: NATS, redis: RedisLink, nats_server: NatsServer, engine: AsyncEngine, unique: str
) -> AsyncIterator[Stack]:
    queue = RankedQueue(redis, namespace=f"{unique}:")
    deps = RankedDeps(
        store=SqlRankedStore(engine), queue=queue, nc=nc, names=NameCache(nc, timeout=0.3),
        timeout=0.5,
    )  # fmt: skip
    opened: list[lb.OpenRankedTable] = []

    async def balance(msg: Msg) -> None:
        user = decode(msg.data, w.GetBalance).user_id
        await msg.respond(encode(w.Balance(user_id=user, balance=9999, held=0, available=9999)))

    async def open_table(msg: Msg) -> None:
        ask = decode(msg.data, lb.OpenRankedTable)
        opened.append(ask)
        await msg.respond(encode(lb.RankedTableOpened(table_id=f"rt-{ask.match_id}")))

    async def profile(ask: a.GetProfile) -> a.UserProfile:
        if ask.user_id.startswith("ghost"):
            raise ServiceError(codes.NOT_FOUND, "no such user")
        return a.UserProfile(
            user_id=ask.user_id, email="x@example.com", display_name=ask.user_id,
            roles=("player",), created_at="2026-12-05T00:00:00Z",
        )  # fmt: skip

    auth = Service("ranked-test-auth")
    auth.add(endpoints.AUTH_PROFILE, profile)
    await auth.start(nc)
    subs = [
        await nc.subscribe(subjects.WALLET_BALANCE, cb=balance),
        await nc.subscribe(subjects.LOBBY_OPEN_RANKED, cb=open_table),
    ]
    service = build_service(deps)
    await service.start(nc)
    try:
        async with (
            world_of(nc, redis, nats_server, unique, trusted_proxies=("127.0.0.1",)) as world,
            httpx.AsyncClient(base_url=f"http://{world.url}", timeout=10) as http,
        ):
            yield Stack(world, http, Matcher(nc, queue), opened)
    finally:
        await service.stop()
        await auth.stop()
        for sub in subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()


def _as(stack: Stack, name: str, address: str = "", *roles: str) -> dict[str, str]:
    headers = stack.world.headers(name, *roles)
    if address:
        headers["X-Forwarded-For"] = address
    return headers


async def test_six_players_queue_and_sit_at_two_tables_with_the_pair_apart(stack: Stack) -> None:
    names = [f"P{n}" for n in range(6)]
    user_ids = {n: f"{n}-{stack.world.unique}" for n in names}
    sockets = {}
    async with contextlib.AsyncExitStack() as exits:
        for name in names:
            ws = await exits.enter_async_context(
                websockets.connect(
                    f"ws://{stack.world.url}/ws", additional_headers=stack.world.headers(name)
                )
            )
            assert msgspec.json.decode(await ws.recv())["type"] == "welcome"
            sockets[name] = ws
        for n, name in enumerate(names):
            address = "198.51.100.9" if n < 2 else f"203.0.113.{n}"
            joined = await stack.http.post(
                "/api/queue", json={"game": "tongits", "bet": 5}, headers=_as(stack, name, address)
            )
            assert joined.status_code == 200, joined.text
            assert joined.json()["status"] == "waiting" and "waited_s" in joined.json()
        assert await stack.matcher.lease.hold()
        assert len(await stack.matcher.tick()) == 2
        pair = {user_ids["P0"], user_ids["P1"]}
        assert all(len(pair & set(o.players)) == 1 for o in stack.opened)
        for name in names:
            frame = msgspec.json.decode(await asyncio.wait_for(sockets[name].recv(), 5))
            table = next(o for o in stack.opened if user_ids[name] in o.players)
            assert frame == {
                "type": "seated", "table_id": f"rt-{table.match_id}", "game": "tongits", "bet": 5,
            }  # fmt: skip
            status = (await stack.http.get("/api/queue", headers=_as(stack, name))).json()
            assert status == {
                "status": "seated", "game": "tongits", "bet": 5, "table_id": frame["table_id"],
            }  # fmt: skip


async def test_queue_routes_refuse_bad_input_and_leave(stack: Stack) -> None:
    me = _as(stack, "Quinn", "203.0.113.50")
    for body in ({"game": "chess", "bet": 5}, {"game": "tongits", "bet": "5"},
                 {"game": "tongits", "bet": 0}, {"game": "tongits", "bet": 5, "x": 1}):  # fmt: skip
        refused = await stack.http.post("/api/queue", json=body, headers=me)
        assert refused.status_code == 400, (body, refused.text)
        assert refused.json()["error"]["code"] == "bad_request"
    assert (
        await stack.http.post("/api/queue", json={"game": "tongits", "bet": 5})
    ).status_code == 401
    assert (await stack.http.get("/api/queue", headers=me)).json() == {"status": "idle"}
    joined = await stack.http.post("/api/queue", json={"game": "tongits", "bet": 5}, headers=me)
    assert joined.status_code == 200 and joined.json()["status"] == "waiting"
    left = await stack.http.delete("/api/queue", headers=me)
    assert left.status_code == 200 and left.json() == {"status": "idle"}
    board = await stack.http.get("/api/leaderboard?game=tongits&period=week", headers=me)
    assert board.status_code == 200 and board.json()["me"] is None
    wrong = await stack.http.get("/api/leaderboard?game=tongits&period=year", headers=me)
    assert wrong.status_code == 400
    mine = await stack.http.get(f"/api/ratings/Quinn-{stack.world.unique}", headers=me)
    assert mine.status_code == 200 and {g["game"] for g in mine.json()["games"]} == {
        "tongits", "mahjong", "kawuxing",
    }  # fmt: skip


async def test_fair_play_and_admin_actions_are_for_admins_only(stack: Stack) -> None:
    player, admin = _as(stack, "Pia"), _as(stack, "Ada", "", "admin")
    assert (await stack.http.get("/api/admin/fair-play", headers=player)).status_code == 403
    report = await stack.http.get("/api/admin/fair-play", headers=admin)
    assert report.status_code == 200, report.text
    assert set(report.json()) >= {"findings", "hands_read", "audit"}
    target = f"/api/admin/players/Pia-{stack.world.unique}"
    refused = await stack.http.post(f"{target}/freeze", json={"reason": "x"}, headers=player)
    assert refused.status_code == 403
    assert (await stack.http.post(f"{target}/freeze", json={}, headers=admin)).status_code == 400
    blank = await stack.http.post(f"{target}/freeze", json={"reason": "   "}, headers=admin)
    assert blank.status_code == 400
    ghost = await stack.http.post(
        "/api/admin/players/ghost-1/warn", json={"reason": "x"}, headers=admin
    )
    assert ghost.status_code == 404 and ghost.json()["error"]["code"] == "not_found"
    assert (
        await stack.http.post(f"{target}/explode", json={"reason": "x"}, headers=admin)
    ).status_code in (400, 404)
    frozen = await stack.http.post(
        f"{target}/freeze", json={"reason": "chip dumping"}, headers=admin
    )
    assert frozen.status_code == 200, frozen.text
    assert frozen.json()["standing"]["frozen"] is True
    assert frozen.json()["audit"]["reason"] == "chip dumping"
    queued = await stack.http.post("/api/queue", json={"game": "tongits", "bet": 5}, headers=player)
    assert queued.status_code == 403
    report = await stack.http.get("/api/admin/fair-play", headers=admin)
    assert report.json()["audit"][0]["action"] == "freeze"
