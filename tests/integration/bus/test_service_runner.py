"""The service runner on a real nats-server: typed replies, typed errors, queue groups."""

from __future__ import annotations

import asyncio
import time

import msgspec
import pytest
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg

from kalaro.bus import RemoteError, Service, ServiceError, request
from kalaro.bus.store import StaleVersion, VersionedStore
from kalaro.proto.endpoints import Endpoint


class Add(msgspec.Struct):
    a: int
    b: int


class Sum(msgspec.Struct):
    total: int
    replica: str


async def _serve(nc: NATS, subject: str, replica: str) -> Service:
    service = Service("adder")

    async def add(req: Add) -> Sum:
        if req.a < 0:
            raise ServiceError("bad_request", "a must not be negative")
        await asyncio.sleep(0.01)
        return Sum(req.a + req.b, replica)

    service.add(Endpoint(subject, Add, Sum), add)
    await service.start(nc)
    return service


async def test_typed_reply_and_typed_error(nc: NATS, unique: str) -> None:
    subject = f"test.{unique}.add"
    service = await _serve(nc, subject, "r1")
    assert (await request(nc, subject, Add(2, 3), Sum)).total == 5
    with pytest.raises(RemoteError) as err:
        await request(nc, subject, Add(-1, 3), Sum)
    assert err.value.code == "bad_request"
    await service.stop()


async def test_an_endpoint_serves_and_calls_with_its_declared_types(nc: NATS, unique: str) -> None:
    """One declaration: the service learns the request type, the caller the reply type."""
    endpoint = Endpoint(f"test.{unique}.add", Add, Sum)
    service = Service("adder")

    async def add(req: Add) -> Sum:
        return Sum(req.a + req.b, "r1")

    service.add(endpoint, add)
    await service.start(nc)
    reply = await request(nc, endpoint, Add(2, 3))
    assert isinstance(reply, Sum)
    assert reply.total == 5
    # The request type from the endpoint still validates what arrives.
    raw = await nc.request(endpoint.subject, b'{"a": "x"}', timeout=2)
    assert raw.headers is not None
    assert raw.headers["Kalaro-Error"] == "bad_request"
    await service.stop()


async def test_malformed_request_gets_bad_request(nc: NATS, unique: str) -> None:
    subject = f"test.{unique}.add"
    service = await _serve(nc, subject, "r1")
    reply = await nc.request(subject, b'{"a": "x"}', timeout=2)
    assert reply.headers is not None
    assert reply.headers["Kalaro-Error"] == "bad_request"
    assert b"malformed request" in reply.data
    await service.stop()


async def test_no_responder_is_unavailable_at_once(nc: NATS, unique: str) -> None:
    started = time.monotonic()
    with pytest.raises(RemoteError) as err:
        await request(nc, f"test.{unique}.nobody", Add(1, 1), Sum, timeout=5)
    assert err.value.code == "unavailable"
    assert time.monotonic() - started < 2  # NATS said nobody listens: no waiting


async def test_a_silent_responder_is_unavailable_after_the_timeout(nc: NATS, unique: str) -> None:
    subject = f"test.{unique}.silent"
    heard: list[bytes] = []

    async def listen_only(msg: Msg) -> None:
        heard.append(msg.data)

    await nc.subscribe(subject, cb=listen_only)
    started = time.monotonic()
    with pytest.raises(RemoteError) as err:
        await request(nc, subject, Add(1, 1), Sum, timeout=0.3)
    assert err.value.code == "unavailable"
    assert 0.3 <= time.monotonic() - started < 2
    assert len(heard) == 1
    # The same connection still gets its next replies (the inbox did not break).
    service = await _serve(nc, f"test.{unique}.add", "r1")
    assert (await request(nc, f"test.{unique}.add", Add(2, 3), Sum)).total == 5
    await service.stop()


async def test_queue_group_spreads_requests_and_stop_drains(nc: NATS, unique: str) -> None:
    subject = f"test.{unique}.add"
    one = await _serve(nc, subject, "r1")
    two = await _serve(nc, subject, "r2")
    replies = await asyncio.gather(*(request(nc, subject, Add(i, 1), Sum) for i in range(60)))
    assert [r.total for r in replies] == [i + 1 for i in range(60)]
    assert {r.replica for r in replies} == {"r1", "r2"}  # each request answered once
    await one.stop()
    replies = await asyncio.gather(*(request(nc, subject, Add(i, 1), Sum) for i in range(10)))
    assert {r.replica for r in replies} == {"r2"}
    await two.stop()


async def test_versioned_store_compare_and_set(redis: object, unique: str) -> None:
    store = VersionedStore(redis, f"test:{unique}:")  # type: ignore[arg-type]
    assert await store.get("t1") == (0, None)
    assert await store.put("t1", 0, b"first") == 1
    with pytest.raises(StaleVersion):
        await store.put("t1", 0, b"racing writer")
    assert await store.get("t1") == (1, b"first")
    results = await asyncio.gather(
        *(store.put("t1", 1, f"w{i}".encode()) for i in range(10)), return_exceptions=True
    )
    assert sum(1 for r in results if r == 2) == 1  # exactly one racer wins
    assert sum(1 for r in results if isinstance(r, StaleVersion)) == 9


async def test_a_store_outage_is_unavailable_not_internal(nc: NATS, unique: str) -> None:
    """Redis down (or still loading its data after a restart) is the caller's to retry."""
    from kalaro.bus.redislink import RedisLink, ResponseError

    service = Service("outage")
    dead = RedisLink("redis://127.0.0.1:1/0")  # nothing listens on port 1

    async def read(req: Add) -> Sum:
        if req.a == 1:
            await dead.get("k")
        if req.a == 2:
            raise ResponseError("LOADING Redis is loading the dataset in memory")
        raise KeyError("a bug")

    service.add(Endpoint(f"{unique}.outage", Add, Sum), read)
    await service.start(nc)
    try:
        for a, code in ((1, "unavailable"), (2, "unavailable"), (3, "internal")):
            with pytest.raises(RemoteError) as refused:
                await request(nc, f"{unique}.outage", Add(a, 0), Sum, timeout=10)
            assert refused.value.code == code, (a, refused.value)
    finally:
        await service.stop()
        await dead.aclose()
