"""What an operator watches, on real NATS and Redis: a service's /healthz, /readyz
(503 while its Redis is killed, 200 once it is back) and /metrics; the gateway's own
/readyz and /metrics on its HTTP port; request ids across NATS; no token in any log."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import httpx
import msgspec
import pytest
import websockets
from nats.aio.client import Client as NATS
from prometheus_client import REGISTRY

from kalaro import logs
from kalaro.bus import Service, request
from kalaro.bus.jetstream import DurableConsumer, ensure_stream, publish_once
from kalaro.bus.redislink import RedisLink
from kalaro.bus.runner import connect, redis_ready, serve, streams_ready
from kalaro.devstack import NatsServer, RedisServer, free_port
from kalaro.proto import subjects
from kalaro.proto.endpoints import Endpoint
from kalaro.proto.wallet import HoldRequest, Payment, SettleHand
from kalaro.settings import load_settings
from kalaro.sql import create_engine
from services.engine.bootstrap import count_active_hands
from services.wallet import ledger
from services.wallet.schema import migrate_wallet
from services.wallet.service import start_consumers, stop_consumers
from tests.integration.gateway.test_auth_gateway import (  # noqa: F401 (a fixture)
    Stack,
    bearer,
    gateway,
    stack,
    stack_settings,
)


class Probe(msgspec.Struct, kw_only=True):
    table_id: str
    hand_id: str = ""


class Seen(msgspec.Struct, kw_only=True):
    request_id: str | None
    table_id: str | None
    hand_id: str | None


async def _until(
    check: Callable[[], Awaitable[bool]], timeout: float = 15.0, what: str = ""
) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if await check():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server this test may kill."""
    server = RedisServer(tmp_path / "redis")
    server.start()
    yield server
    server.stop()


async def test_a_service_answers_health_readiness_and_metrics(
    nc: NATS, nats_server: NatsServer, own_redis: RedisServer, unique: str
) -> None:
    stream = f"PROBE_{unique}"
    js = nc.jetstream()
    await ensure_stream(js, stream, [f"probestream.{unique}.>"])
    handled: list[Probe] = []

    async def consume(message: Probe) -> None:
        handled.append(message)

    consumer = DurableConsumer(
        nc, stream=stream, subject=f"probestream.{unique}.>", durable=f"probe-{unique}",
        message_type=Probe, handler=consume,
    )  # fmt: skip
    await consumer.start()
    redis = RedisLink(own_redis.url, connect_timeout=1)
    service = Service(f"probe-{unique}")

    async def seen(message: Probe) -> Seen:
        return Seen(
            request_id=logs.request_id.get(),
            table_id=logs.table_id.get(),
            hand_id=logs.hand_id.get(),
        )

    service.add(Endpoint(f"probe.{unique}.seen", Probe, Seen), seen)
    port = free_port()
    stop = asyncio.Event()
    own = await connect(nats_server.url, f"probe-{unique}")  # serve drains it at the end
    checks = {"redis": redis_ready(redis), "jetstream": streams_ready(own, [stream])}
    serving = asyncio.create_task(
        serve(service, own, health_port=port, health_host="127.0.0.1", checks=checks, stop=stop)
    )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as http:

            async def status(path: str, wanted: int) -> bool:
                try:
                    return (await http.get(path)).status_code == wanted
                except httpx.TransportError:
                    return False

            await _until(lambda: status("/readyz", 200), what="ready")
            ready = (await http.get("/readyz")).json()
            assert ready == {
                "service": f"probe-{unique}",
                "ready": True,
                "checks": {"nats": "ok", "redis": "ok", "jetstream": "ok"},
            }

            own_redis.kill()  # SIGKILL
            await _until(lambda: status("/readyz", 503), what="not ready without Redis")
            body = (await http.get("/readyz")).json()
            assert body["ready"] is False and body["checks"]["redis"] != "ok"
            assert "cannot reach redis" in body["checks"]["redis"]
            assert body["checks"]["jetstream"] == "ok"
            live = await http.get("/healthz")
            assert live.status_code == 200 and live.json()["alive"] is True  # no restart

            own_redis.start()
            await _until(lambda: status("/readyz", 200), what="ready again with Redis back")

            # A stream that is gone makes it unready too.
            await js.delete_stream(stream)
            await _until(lambda: status("/readyz", 503), what="not ready without its stream")
            assert "jetstream" in (await http.get("/readyz")).json()["checks"]
            await ensure_stream(js, stream, [f"probestream.{unique}.>"])

            # Request ids travel in a NATS header, with the table and hand the message names.
            logs.new_request_id()
            rid = logs.request_id.get()
            got = await request(
                nc, f"probe.{unique}.seen", Probe(table_id="t1", hand_id="h1"), Seen
            )
            assert got == Seen(request_id=rid, table_id="t1", hand_id="h1")
            logs.request_id.set(None)
            got = await request(nc, f"probe.{unique}.seen", Probe(table_id="t2"), Seen)
            assert got == Seen(request_id=None, table_id="t2", hand_id=None)

            metrics = (await http.get("/metrics")).text
            assert f'kalaro_request_seconds_count{{service="probe-{unique}"' in metrics
            assert "kalaro_event_loop_lag_seconds_bucket" in metrics
            assert (
                f'kalaro_consumer_pending{{consumer="probe-{unique}",stream="{stream}"}}' in metrics
            )
    finally:
        stop.set()
        await serving
        await consumer.stop()
        await redis.aclose()


async def test_jetstream_publishes_carry_the_request_id(nc: NATS, unique: str) -> None:
    stream = f"CARRY_{unique}"
    js = nc.jetstream()
    await ensure_stream(js, stream, [f"carry.{unique}.>"])
    got: asyncio.Queue[tuple[str | None, str | None]] = asyncio.Queue()

    async def consume(message: Probe) -> None:
        await got.put((logs.request_id.get(), logs.table_id.get()))

    consumer = DurableConsumer(
        nc, stream=stream, subject=f"carry.{unique}.>", durable=f"carry-{unique}",
        message_type=Probe, handler=consume,
    )  # fmt: skip
    await consumer.start()
    try:
        with logs.bound(request="req-from-the-gateway"):
            await publish_once(js, f"carry.{unique}.x", Probe(table_id="tX"), f"{unique}-1")
        await publish_once(js, f"carry.{unique}.x", Probe(table_id="tY"), f"{unique}-2")
        assert await asyncio.wait_for(got.get(), 10) == ("req-from-the-gateway", "tX")
        assert await asyncio.wait_for(got.get(), 10) == (None, "tY")  # nothing carried over
    finally:
        await consumer.stop()
        await js.delete_stream(stream)


async def test_the_gateway_serves_readyz_and_metrics_on_its_port(
    nc: NATS, nats_server: NatsServer, own_redis: RedisServer, tmp_path: Path
) -> None:
    # A tight address limit: the probes must not be counted against it.
    settings = stack_settings(
        nats_server, own_redis, tmp_path, rest_address_rate=0.1, rest_address_burst=2
    )
    async with gateway(nc, settings) as http:
        for _ in range(6):
            scrape = await http.get("/metrics")
            assert scrape.status_code == 200, scrape.text
        assert "kalaro_gateway_open_sockets" in scrape.text
        assert scrape.headers["content-type"].startswith("text/plain")
        assert scrape.headers["x-request-id"]
        ready = await http.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json()["checks"] == {"nats": "ok", "redis": "ok"}

        own_redis.kill()
        ready = await http.get("/readyz")
        assert ready.status_code == 503 and ready.json()["checks"]["redis"] != "ok"
        live = await http.get("/healthz")
        assert live.status_code == 200  # liveness: still alive
        own_redis.start()

        async def back() -> bool:
            return (await http.get("/readyz")).status_code == 200

        await _until(back, what="the gateway ready again")
        ids = {(await http.get("/readyz")).headers["x-request-id"] for _ in range(3)}
        assert len(ids) == 3  # one per request

        schema = (await http.get("/schema/openapi.json")).json()
        assert "/metrics" not in schema["paths"] and "/readyz" not in schema["paths"]


async def test_no_token_reaches_any_log(stack: Stack) -> None:  # noqa: F811
    """Sign up, sign in, use the token on REST and on the socket (header and query), with
    every logger at DEBUG in the JSON format: no token anywhere in the output."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logs.JsonFormatter("test"))
    root = logging.getLogger()
    uvicorn_loggers = [logging.getLogger(n) for n in ("uvicorn.access", "uvicorn.error")]
    saved_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    for logger in uvicorn_loggers:
        logger.addHandler(handler)
    try:
        _, pair = await stack.sign_up("tess")
        access, refresh = pair["access_token"], pair["refresh_token"]
        assert (await stack.direct.get("/api/me", headers=bearer(access))).status_code == 200
        ws = await stack.socket(access)
        assert "welcome" in str(await asyncio.wait_for(ws.recv(), 5))
        await ws.close()
        by_query = await websockets.connect(f"{stack.ws_url()}?token={access}")
        await asyncio.wait_for(by_query.recv(), 5)
        await by_query.close()
        bad = await stack.direct.get("/api/me", headers=bearer(access + "x"))
        assert bad.status_code == 401
        out = await stack.direct.post("/api/auth/refresh", json={"refresh_token": refresh})
        assert out.status_code in (200, 401), out.text
        await asyncio.sleep(0.2)
    finally:
        root.removeHandler(handler)
        root.setLevel(saved_level)
        for logger in uvicorn_loggers:
            logger.removeHandler(handler)
    text = buffer.getvalue()
    assert text.count("\n") >= 3, text  # the capture did see the traffic
    for line in text.splitlines():
        json.loads(line)  # one object per line
    for secret in (access, refresh, access.split(".")[-1], refresh[-16:]):
        assert secret not in text


def _sample(name: str, labels: dict[str, str] | None = None) -> float:
    value = REGISTRY.get_sample_value(name, labels or {})
    return 0.0 if value is None else value


async def test_the_gateway_counts_its_open_sockets(stack: Stack) -> None:  # noqa: F811
    before = _sample("kalaro_gateway_open_sockets")
    _, pair = await stack.sign_up("sol")
    sockets = [await stack.socket(pair["access_token"]) for _ in range(2)]
    for ws in sockets:
        assert "welcome" in str(await asyncio.wait_for(ws.recv(), 5))
    scrape = (await stack.direct.get("/metrics")).text
    assert f"kalaro_gateway_open_sockets {before + 2}" in scrape
    for ws in sockets:
        await ws.close()

    async def closed() -> bool:
        return _sample("kalaro_gateway_open_sockets") == before

    await _until(closed, what="the gauge back down")


async def test_the_engine_counts_hands_in_play(redis: RedisLink, unique: str) -> None:
    key = f"test:{unique}:deadlines:tongits"
    await redis.zadd(key, {f"t{i}|h{i}|3": 1000 + i for i in range(3)})
    counting = asyncio.create_task(count_active_hands("tongits", redis, key, every=0.05))
    try:

        def counted(n: int) -> Callable[[], Awaitable[bool]]:
            async def check() -> bool:
                return _sample("kalaro_engine_active_hands", {"game": "tongits"}) == n

            return check

        await _until(counted(3), what="three hands counted")
        await redis.zrem(key, "t0|h0|3")
        await _until(counted(2), what="two hands counted")
    finally:
        counting.cancel()
        await redis.delete(key)


async def test_the_wallet_measures_settlement_lag(nc: NATS, tmp_path: Path, unique: str) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'wallet.db'}")
    await migrate_wallet(engine)
    hand = f"{unique}-h1"
    consumers = await start_consumers(
        nc,
        engine,
        load_settings({}),
        results_durable=f"lag-results-{unique}",
        results_subject=subjects.hand_result(hand),
        users_durable=f"lag-users-{unique}",
    )
    try:
        a, b = f"{unique}-a", f"{unique}-b"
        for player in (a, b):
            await ledger.welcome_grant(engine, player, 1000)
        await ledger.place_holds(
            engine,
            f"{unique}-t",
            hand,
            [HoldRequest(user_id=a, amount=100), HoldRequest(user_id=b, amount=100)],
        )
        before = _sample("kalaro_settlement_lag_seconds_count")
        # The histogram is the process's: other tests' settlements are in it already.
        sum_before = _sample("kalaro_settlement_lag_seconds_sum")
        settle = SettleHand(
            hand_id=hand, payments=(Payment(user_id=a, amount=-40), Payment(user_id=b, amount=40))
        )
        await publish_once(nc.jetstream(), subjects.hand_result(hand), settle, hand)

        async def settled() -> bool:
            return (await ledger.get_balance(engine, b)).balance == 1040

        await _until(settled, what="the hand settled")

        async def observed() -> bool:
            return _sample("kalaro_settlement_lag_seconds_count") == before + 1

        await _until(observed, what="one lag observed")
        lag = _sample("kalaro_settlement_lag_seconds_sum") - sum_before
        assert 0 <= lag < 60  # seconds, not ms
    finally:
        await stop_consumers(consumers)
        js = nc.jetstream()
        for stream, durable in (
            (subjects.RESULTS_STREAM, f"lag-results-{unique}"),
            (subjects.EVENTS_STREAM, f"lag-users-{unique}"),
        ):
            await js.delete_consumer(stream, durable)
        await engine.dispose()
