"""The gateway's own moves (services/gateway/local_moves.py) on real NATS and Redis.

An engine worker (in-process, a Redis namespace of the test's) deals a Tongits hand; a
Hub on a ``no_echo`` connection holds one socket per seat; another connection listens
on the seat subjects as a second gateway would. Moves go through ``LocalMoves``.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import msgspec
import pytest
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from prometheus_client import REGISTRY

from kalaro.bus import RemoteError
from kalaro.bus.redislink import RedisLink
from kalaro.bus.runner import connect
from kalaro.devstack import NatsServer, free_port
from kalaro.proto import subjects
from kalaro.proto import ws as w
from kalaro.proto.engine import Act, StartHand
from kalaro.proto.lobby import SeatInfo, TableInfo
from kalaro.settings import load_settings
from services.gateway.hub import Connection, Hub, TableFeed
from services.gateway.local_moves import LocalMoves
from tests.integration.engine.engine_helpers import FakeClock, Replicas, legal, start_message

_json = msgspec.json.Encoder()
_view = msgspec.json.Decoder(w.HandView)


@dataclass
class Table:
    start: StartHand
    hub: Hub
    feed: TableFeed
    sockets: list[list[bytes]]  # what each seat's socket was sent
    heard: dict[int, list[bytes]]  # what another gateway got on each seat subject
    listed: str  # the table's seat-gateways key, where that other gateway is listed
    replicas: Replicas
    namespace: str

    def views(self, seat: int) -> list[w.HandView]:
        """The views the seat's socket was sent (results and table frames left out)."""
        return [_view.decode(f) for f in self.sockets[seat] if f.startswith(b'{"type":"view"')]

    def newest(self) -> w.HandView:
        return max((self.views(seat)[-1] for seat in range(3)), key=lambda v: v.version)

    def mover(self) -> tuple[int, w.HandView, list[dict[str, object]]] | None:
        """A seat whose newest view is the hand's newest and offers moves."""
        newest = self.newest().version
        for seat in range(3):
            own = self.views(seat)[-1]
            moves = legal(msgspec.json.decode(own.view))
            if own.version == newest and moves:
                return seat, own, moves
        return None

    def act(self, seat: int, version: int, action: object) -> Act:
        return Act(
            table_id=self.start.table_id,
            user_id=self.start.players[seat].user_id,
            version=version,
            action=msgspec.Raw(_json.encode(action)),
        )


def _table_info(start: StartHand) -> TableInfo:
    seats = tuple(SeatInfo(user_id=p.user_id, display_name=p.display_name) for p in start.players)
    return TableInfo(
        table_id=start.table_id, game="tongits", ruleset="classic", options={}, bet=start.bet,
        max_loss=0, private=False, chat_enabled=True, host_id="h", host_name="H", seats=seats,
        status="playing", hand_no=1, created_at="2026-12-02T00:00:00Z",
    )  # fmt: skip


@pytest.fixture
async def tables_nc(nats_server: NatsServer) -> AsyncIterator[NATS]:
    nc = await connect(nats_server.url, "test-gateway-tables", no_echo=True)
    yield nc
    await nc.drain()


@pytest.fixture
async def table(
    nats_server: NatsServer, redis: RedisLink, tables_nc: NATS, nc: NATS, unique: str
) -> AsyncIterator[Table]:
    namespace = f"test:{unique}:"
    replicas = Replicas(nats_server.url, redis, namespace, FakeClock())
    engine = await replicas.start("tongits", audience="watched")
    hub = Hub(tables_nc, redis=redis, namespace=namespace)
    start = start_message("tongits", unique, bet=0)
    sockets: list[list[bytes]] = [[] for _ in start.players]
    conns = []
    for seat, player in enumerate(start.players):
        sent = sockets[seat]

        async def send(frame: bytes, sent: list[bytes] = sent) -> None:
            sent.append(frame)

        conn = Connection(player.user_id, player.display_name, send)
        conn.start()
        assert await hub.join(conn, _table_info(start)) == seat
        conns.append(conn)
    heard: dict[int, list[bytes]] = {seat: [] for seat in range(len(start.players))}

    async def on_seat(msg: Msg) -> None:
        heard[int(msg.subject.rsplit(".", 1)[1])].append(msg.data)

    other_gateway = await nc.subscribe(subjects.table_seat(start.table_id, "*"), cb=on_seat)
    await nc.flush()
    # ... and lists itself as holding seat sockets of the table, as a gateway's hub does.
    listed = namespace + subjects.table_seat_gateways_key(start.table_id)
    await redis.execute("ZADD", listed, time.time_ns() // 1_000_000 + 60_000, "other-gateway")
    await engine.worker.start_hand(start)
    feed = hub.feed(start.table_id)
    assert feed is not None
    made = Table(start, hub, feed, sockets, heard, listed, replicas, namespace)
    await _settle(made, 1)
    yield made
    await other_gateway.unsubscribe()
    for conn in conns:
        conn.close()
        await conn.wait_closed()
    await replicas.stop_all()


def _counted(where: str) -> float:
    return REGISTRY.get_sample_value("kalaro_gateway_moves_total", {"where": where}) or 0.0


async def _settle(table: Table, version: int) -> None:
    """Until every seat's socket has the view at ``version``."""
    for _ in range(500):
        if all((v := table.views(seat)) and v[-1].version >= version for seat in range(3)):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the sockets never got version {version}")


async def test_moves_are_applied_here_and_the_hands_end_by_the_engine(
    table: Table, tables_nc: NATS, redis: RedisLink
) -> None:
    local = LocalMoves(tables_nc, redis, table.hub, load_settings({}), namespace=table.namespace)
    engine = table.replicas.running[0].worker
    rng = random.Random(4)
    here = 0
    for _ in range(300):
        if msgspec.json.decode(table.newest().view).get("result") is not None:
            break
        found = table.mover()
        if found is None:
            await asyncio.sleep(0.01)
            continue
        seat, own, moves = found
        message = table.act(seat, own.version, rng.choice(moves))
        acted = await local.act(table.feed, message)
        if acted is None:  # only a move that ends the hand goes to the engine
            acted = await engine.act(message)
            await _settle(table, acted.version)
            assert msgspec.json.decode(table.newest().view).get("result") is not None
            break
        here += 1
        assert acted.version == own.version + 1
        await _settle(table, acted.version)
    else:
        raise AssertionError("the hand did not end")
    assert here >= 5
    await asyncio.sleep(0.2)  # anything still on its way from NATS
    for seat in range(3):
        views = table.views(seat)
        versions = [v.version for v in views]
        assert versions == sorted(set(versions)), f"seat {seat}: a view twice or out of order"
        assert {v.seat for v in views} == {seat}
        # Another gateway's socket of the same seat got the very same frames.
        sent = [f for f in table.sockets[seat] if f.startswith(b'{"type":"view"')]
        assert table.heard[seat] == sent, f"seat {seat}: NATS and the socket differ"


async def test_a_move_the_rules_refuse_is_answered_here(
    table: Table, tables_nc: NATS, redis: RedisLink
) -> None:
    local = LocalMoves(tables_nc, redis, table.hub, load_settings({}), namespace=table.namespace)
    found = table.mover()
    assert found is not None
    seat, view, _ = found
    with pytest.raises(RemoteError) as stale:
        await local.act(table.feed, table.act(seat, view.version - 1, {"type": "draw"}))
    assert stale.value.code == "stale_version"
    other = (seat + 1) % 3
    with pytest.raises(RemoteError) as refused:
        await local.act(table.feed, table.act(other, view.version, {"type": "draw"}))
    assert refused.value.code == "not_your_turn"
    await asyncio.sleep(0.1)
    assert all(len(sent) == 1 for sent in table.sockets)  # nothing changed


async def test_a_table_not_all_here_or_no_redis_goes_to_the_engine(
    table: Table, tables_nc: NATS, caplog: pytest.LogCaptureFixture
) -> None:
    dead = RedisLink(f"redis://127.0.0.1:{free_port()}/0")
    local = LocalMoves(tables_nc, dead, table.hub, load_settings({}), namespace=table.namespace)
    found = table.mover()
    assert found is not None
    seat, own, moves = found
    move = moves[0]
    trouble_before = _counted("trouble")
    with caplog.at_level(logging.WARNING, logger="kalaro.gateway.moves"):
        for _ in range(3):
            assert await local.act(table.feed, table.act(seat, own.version, move)) is None
    warnings = [r for r in caplog.records if "could not apply" in r.getMessage()]
    assert len(warnings) == 1, "one warning, not one per move"
    assert _counted("trouble") - trouble_before == 3  # what the operators' alert watches
    # One seat's socket leaves: the table is no longer all here (and Redis is not asked).
    caplog.clear()
    gone = next(iter(table.feed.seated[(seat + 1) % 3]))
    table.feed.detach(gone)
    engine_before = _counted("engine")
    assert await local.act(table.feed, table.act(seat, own.version, move)) is None
    assert not caplog.records
    assert _counted("engine") - engine_before == 1
    await dead.aclose()


async def test_seat_frames_reach_nats_only_while_another_gateway_is_listed(
    table: Table, tables_nc: NATS, redis: RedisLink
) -> None:
    local = LocalMoves(tables_nc, redis, table.hub, load_settings({}), namespace=table.namespace)
    assert await redis.execute("ZSCORE", table.listed, table.hub.gateway_id), (
        "the hub listed itself"
    )
    await redis.execute("ZREM", table.listed, "other-gateway")
    rng = random.Random(2)
    for listed in (False, True):
        if listed:
            await redis.execute("ZADD", table.listed, time.time_ns() // 10**6 + 60_000, "other")
        for _ in range(3):
            found = table.mover()
            assert found is not None
            seat, own, moves = found
            before = {s: len(h) for s, h in table.heard.items()}
            acted = await local.act(table.feed, table.act(seat, own.version, rng.choice(moves)))
            assert acted is not None
            await _settle(table, acted.version)
            await asyncio.sleep(0.05)
            published = sum(len(h) - before[s] for s, h in table.heard.items())
            assert published == (3 if listed else 0), (listed, published)


async def test_a_gateway_is_listed_while_it_holds_seat_sockets(
    table: Table, redis: RedisLink
) -> None:
    """The hub's seat mark: listed when a seat socket joins (before the view is asked for),
    still listed while any seat socket stays, gone when the last one leaves, and listed
    again by the periodic refresh with a later expiry."""
    me = table.hub.gateway_id
    first = await redis.execute("ZSCORE", table.listed, me)
    assert first is not None and float(first) > time.time() * 1000
    sockets = [c for conns in table.feed.seated.values() for c in conns]
    for conn in sockets[:-1]:
        await table.hub.leave(conn, table.start.table_id)
        assert await redis.execute("ZSCORE", table.listed, me) is not None
    await table.hub.leave(sockets[-1], table.start.table_id)
    assert await redis.execute("ZSCORE", table.listed, me) is None
    assert await redis.execute("ZSCORE", table.listed, "other-gateway") is not None
    # Back, then refreshed: the reaper's pass lists every table with seat sockets again.
    await table.hub.join(sockets[0], _table_info(table.start))
    again = float(await redis.execute("ZSCORE", table.listed, me))
    await asyncio.sleep(0.01)
    reaper = asyncio.create_task(table.hub.reap_idle(idle_seconds=3600, every=0.05))
    try:
        for _ in range(100):
            await asyncio.sleep(0.02)
            if float(await redis.execute("ZSCORE", table.listed, me)) > again:
                break
        else:
            raise AssertionError("the refresh did not list the table again")
    finally:
        reaper.cancel()
