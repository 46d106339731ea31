"""The services' Redis client on a real redis-server: replies in order under pipelining,
errors, scripts, and what happens when the connection drops or stalls."""

from __future__ import annotations

import asyncio
import time

import pytest

from kalaro.bus.redislink import RedisAddress, RedisLink, RedisUnavailable, ResponseError
from kalaro.devstack import RedisServer, free_port


async def test_commands_return_what_redis_py_returns(redis: RedisLink, unique: str) -> None:
    key = f"{unique}:k"
    assert await redis.get(key) is None
    assert await redis.set(key, b"v1", px=60_000) is True
    assert await redis.get(key) == b"v1"
    assert 0 < await redis.execute("PTTL", key) <= 60_000
    assert await redis.exists(key, f"{unique}:none") == 1
    assert await redis.delete(key) == 1 and await redis.exists(key) == 0

    hash_key = f"{unique}:h"
    assert await redis.hset(hash_key, "a", 1) == 1
    await redis.hset(hash_key, "b", b"two")
    assert await redis.hmget(hash_key, ("a", "missing", "b")) == [b"1", None, b"two"]
    assert await redis.hgetall(hash_key) == {b"a": b"1", b"b": b"two"}

    zset = f"{unique}:z"
    assert await redis.zadd(zset, {"x": 1, "y": 2, "z": 3}) == 3
    assert await redis.zrange(zset, 0, -1) == [b"x", b"y", b"z"]
    assert await redis.zrevrange(zset, 0, 1) == [b"z", b"y"]
    assert await redis.zrem(zset, "x", "nope") == 1 and await redis.zcard(zset) == 2
    assert sorted(await redis.keys(f"{unique}:*")) == [hash_key.encode(), zset.encode()]
    assert await redis.ping()


async def test_concurrent_commands_each_get_their_own_reply(redis: RedisLink, unique: str) -> None:
    """Hundreds of commands share one connection; replies must not be crossed."""
    await asyncio.gather(*(redis.set(f"{unique}:{i}", i * 7) for i in range(300)))
    values = await asyncio.gather(*(redis.get(f"{unique}:{i}") for i in range(300)))
    assert values == [str(i * 7).encode() for i in range(300)]
    clients = await redis.execute("CLIENT", "LIST")
    assert clients.count(b"cmd=client") == 1  # one connection did all of that


async def test_an_error_reply_fails_only_its_own_command(redis: RedisLink, unique: str) -> None:
    key = f"{unique}:s"
    await redis.set(key, b"text")
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        await redis.hset(key, "f", 1)
    async with redis.pipeline() as pipe:
        pipe.hmget(key, ("f",))  # wrong type too
        pipe.hmget(f"{unique}:absent", ("f",))
        with pytest.raises(ResponseError, match="WRONGTYPE"):
            await pipe.execute()
    async with redis.pipeline() as pipe:
        assert await pipe.hmget(f"{unique}:a", ("f",)).hmget(key + "x", ("g",)).execute() == [
            [None],
            [None],
        ]
    assert await redis.get(key) == b"text"  # the connection is still in step


async def test_scripts_run_by_sha_and_load_themselves(redis: RedisLink, unique: str) -> None:
    script = redis.register_script("return {KEYS[1], ARGV[1] + 1}")
    await redis.execute("SCRIPT", "FLUSH")  # as after a Redis restart: EVALSHA fails
    assert await script(keys=[f"{unique}:k"], args=[41]) == [f"{unique}:k".encode(), 42]
    assert await redis.execute("SCRIPT", "EXISTS", script.sha) == [1]
    failing = redis.register_script("return redis.call('INCR', KEYS[1])")
    await redis.set(f"{unique}:text", b"abc")
    with pytest.raises(ResponseError, match="not an integer"):
        await failing(keys=[f"{unique}:text"])


async def test_a_dropped_connection_fails_what_is_in_flight_then_reconnects(
    redis: RedisLink, redis_server: RedisServer, unique: str
) -> None:
    first = await redis.execute("CLIENT", "ID")
    blocked = asyncio.create_task(redis.execute("BLPOP", f"{unique}:never", 10))
    await asyncio.sleep(0.1)
    other = RedisLink(redis_server.url)
    try:
        assert await other.execute("CLIENT", "KILL", "ID", first) == 1
    finally:
        await other.aclose()
    started = time.monotonic()
    with pytest.raises(RedisUnavailable):
        await blocked
    assert time.monotonic() - started < 2  # at once, not after the BLPOP's 10 s
    assert await redis.execute("CLIENT", "ID") != first  # a new connection
    assert await redis.set(f"{unique}:after", b"1")


async def test_a_stalled_reply_drops_the_connection(redis_server: RedisServer) -> None:
    link = RedisLink(redis_server.url, command_timeout=0.4)
    try:
        started = time.monotonic()
        with pytest.raises(RedisUnavailable, match="no reply"):
            await link.execute("BLPOP", "stalled-list", 5)
        assert time.monotonic() - started < 2
        assert await link.ping()
    finally:
        await link.aclose()


async def test_unreachable_and_closed_clients_raise(redis: RedisLink) -> None:
    nowhere = RedisLink(f"redis://127.0.0.1:{free_port()}", connect_timeout=1)
    with pytest.raises(RedisUnavailable, match="cannot reach"):
        await nowhere.get("k")
    await nowhere.aclose()
    with pytest.raises(RedisUnavailable, match="closed"):
        await nowhere.get("k")


async def test_database_number_and_unix_socket(redis_server: RedisServer, unique: str) -> None:
    on_three = RedisLink(redis_server.url.rsplit("/", 1)[0] + "/3")
    on_zero = RedisLink(redis_server.url)
    try:
        await on_three.set(f"{unique}:db", b"3")
        assert await on_zero.get(f"{unique}:db") is None
        assert await on_three.get(f"{unique}:db") == b"3"
        if redis_server.unix_url is None:
            print("unix socket not tested: the server's socket path is too long")
            return
        over_unix = RedisLink(redis_server.unix_url)
        try:
            await over_unix.set(f"{unique}:unix", b"u")
            assert await on_zero.get(f"{unique}:unix") == b"u"
        finally:
            await over_unix.aclose()
    finally:
        await on_three.aclose()
        await on_zero.aclose()


def test_urls() -> None:
    plain = RedisAddress("redis://127.0.0.1:6380/2")
    assert (plain.host, plain.port, plain.db, plain.password) == ("127.0.0.1", 6380, 2, None)
    secured = RedisAddress("rediss://user:p%40ss@cache.example:6390?db=4")
    assert (secured.tls, secured.username, secured.password, secured.db) == (
        True,
        "user",
        "p@ss",
        4,
    )
    unix = RedisAddress("unix:///run/redis.sock?db=1")
    assert (unix.unix_path, unix.db) == ("/run/redis.sock", 1)
    with pytest.raises(ValueError, match="not a Redis URL"):
        RedisAddress("http://127.0.0.1:6379")
