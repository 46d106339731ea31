"""The gateway's deadline for a request to arrive (services.gateway.httpserver), in a
real gateway over raw TCP: a connection that sends nothing, its headers a byte at a time
or half its body, gets 408 and is closed at the deadline; a prompt request, a prompt
body, the next request on a kept-alive connection, and a WebSocket open far longer than
the deadline are not touched."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from kalaro.wsframes import PING, PONG
from services.gateway.httpserver import TIMEOUTS
from services.gateway.limits import security_headers
from tests.integration.gateway.test_wsserver import frame, handshake, raw
from tests.integration.gateway.world import World

DEADLINE = 1.0


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"http_request_timeout_seconds": DEADLINE}


async def test_a_connection_that_sends_nothing_gets_408_at_the_deadline(world: World) -> None:
    cut = TIMEOUTS.cut
    started = time.monotonic()
    async with raw(world, b"") as client:
        answer = await asyncio.wait_for(client.reader.read(), DEADLINE + 5)  # to the end
    waited = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer
    assert b"connection: close" in answer
    head = answer.split(b"\r\n\r\n")[0].lower()
    for name, value in security_headers(""):  # as on every other answer
        assert (name + b": " + value).lower() in head, name
    assert DEADLINE * 0.9 <= waited < DEADLINE + 3, waited
    assert TIMEOUTS.cut == cut + 1


async def test_headers_sent_a_byte_at_a_time_are_cut_at_the_deadline(world: World) -> None:
    started = time.monotonic()
    async with raw(world, b"GET /healthz HTTP/1.1\r\nHost: test\r\nX-Slow: ") as client:
        answer = b""
        for _ in range(int(DEADLINE * 20)):  # one byte every 0.15 s: 3x the deadline
            try:
                client.writer.write(b"a")
                await client.writer.drain()
            except ConnectionError:
                break
            try:
                answer += await asyncio.wait_for(client.reader.read(4096), 0.15)
            except TimeoutError:
                continue
            if client.reader.at_eof():
                break
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert time.monotonic() - started < DEADLINE + 3


async def test_a_prompt_request_and_the_next_on_the_same_connection_are_served(
    world: World,
) -> None:
    request = b"GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n"
    async with raw(world, request) as client:
        assert (await client.read_head()).startswith("HTTP/1.1 200 ")
        # Idle longer than the header deadline (shorter than uvicorn's keep-alive of 5 s):
        # the deadline ended with the first request's headers.
        await asyncio.sleep(DEADLINE * 1.5)
        await client.reader.read(4096)  # the first response's body
        client.writer.write(request)
        assert (await asyncio.wait_for(client.read_head(), 5)).startswith("HTTP/1.1 200 ")


async def test_a_websocket_lives_on_past_the_deadline(world: World) -> None:
    auth = f"Authorization: Bearer {world.token('Ana')}\r\n"
    async with raw(world, handshake(extra=auth)) as client:
        assert (await client.read_head()).startswith("HTTP/1.1 101 ")
        await client.until(lambda: bool(client.messages))  # the welcome
        await asyncio.sleep(DEADLINE * 2)
        client.writer.write(frame(PING, b"still here"))
        await client.until(lambda: (PONG, b"still here") in client.controls)


SIGN_IN = "POST /api/auth/sign-in HTTP/1.1\r\nHost: test\r\ncontent-type: application/json\r\n"


async def test_a_body_that_stops_halfway_gets_408_at_the_deadline(world: World) -> None:
    started = time.monotonic()
    head = f"{SIGN_IN}content-length: 100\r\n\r\n".encode()
    async with raw(world, head + b'{"email": "a@b.c", ') as client:  # 20 of 100 bytes
        answer = await asyncio.wait_for(client.reader.read(), DEADLINE + 5)
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert DEADLINE * 0.9 <= time.monotonic() - started < DEADLINE + 3


async def test_a_prompt_body_is_served_and_the_connection_kept(world: World) -> None:
    body = b"{}"  # no email or password: refused by validation, promptly
    request = f"{SIGN_IN}content-length: {len(body)}\r\n\r\n".encode() + body
    async with raw(world, request) as client:
        head = await client.read_head()
        assert head.startswith("HTTP/1.1 400 "), head
        length = int(head.lower().split("content-length: ")[1].split("\r\n")[0])
        await client.reader.readexactly(length)
        await asyncio.sleep(DEADLINE * 1.5)  # the deadline ended with the body
        client.writer.write(b"GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n")
        assert (await asyncio.wait_for(client.read_head(), 5)).startswith("HTTP/1.1 200 ")


async def test_an_answer_given_before_the_body_is_not_followed_by_a_408(world: World) -> None:
    # Over the body limit: refused (413) from the headers alone, while the client is
    # still sending. The deadline then cuts the connection, without a 408 after the 413.
    cut = TIMEOUTS.cut
    head = f"{SIGN_IN}content-length: 100000\r\n\r\n".encode()
    async with raw(world, head + b'{"email": ') as client:
        answer = await asyncio.wait_for(client.reader.read(), DEADLINE + 5)
    assert answer.startswith(b"HTTP/1.1 413 "), answer
    assert b"408" not in answer
    assert TIMEOUTS.cut == cut + 1  # it was the deadline that closed it
