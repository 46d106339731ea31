"""The gateway's own WebSocket server (services.gateway.wsserver) at the byte level, in
a real gateway: handshakes it refuses, RFC 6455 rules it enforces with the right close
code, the closing handshake both ways, and frames sent before the token is checked.
A raw TCP client plays the browser, so every byte is ours to choose."""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from nats.aio.client import Client as NATS

from kalaro.bus.redislink import RedisLink
from kalaro.devstack import NatsServer
from kalaro.wsframes import CLOSE, PING, PONG, FrameReader, close_code
from services.gateway.wsserver import accept_key
from tests.integration.gateway.world import World, world_of

KEY = base64.b64encode(b"0123456789abcdef").decode()


def handshake(path: str = "/ws", *, key: str = KEY, version: str = "13", method: str = "GET",
              extra: str = "") -> bytes:  # fmt: skip
    return (
        f"{method} {path} HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
        f"Sec-WebSocket-Version: {version}\r\n{extra}\r\n"
    ).encode()


def frame(opcode: int, payload: bytes, *, fin: bool = True, mask: bool = True,
          rsv: int = 0) -> bytes:  # fmt: skip
    """A client frame; masked unless told otherwise (a client must mask)."""
    size = len(payload)
    first = bytes(((0x80 if fin else 0) | rsv | opcode,))
    bit = 0x80 if mask else 0
    if size < 126:
        head = first + bytes((bit | size,))
    elif size < 1 << 16:
        head = first + bytes((bit | 126,)) + size.to_bytes(2, "big")
    else:
        head = first + bytes((bit | 127,)) + size.to_bytes(8, "big")
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def text(data: dict[str, Any]) -> bytes:
    return frame(0x1, msgspec.json.encode(data))


@dataclass
class Raw:
    """A raw client: the server's response head, then its frames as they come."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    head: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)
    controls: list[tuple[int, bytes]] = field(default_factory=list)
    _buffer: bytearray = field(default_factory=bytearray)

    def __post_init__(self) -> None:
        self._frames = FrameReader(
            masked=False,
            max_size=1 << 24,
            on_message=lambda op, data: self.messages.append(msgspec.json.decode(data)),
            on_control=lambda op, data: self.controls.append((op, data)),
            on_error=lambda code, why: pytest.fail(f"the server broke the protocol: {why}"),
        )

    async def read_head(self) -> str:
        self.head = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        return self.head

    async def until(self, done: Any, timeout: float = 5) -> None:
        """Read frames until ``done()`` is true."""
        async with asyncio.timeout(timeout):
            while not done():
                chunk = await self.reader.read(65536)
                if not chunk:
                    raise ConnectionError("the server closed TCP")
                self._buffer += chunk
                self._frames.feed(self._buffer)

    async def closed_by_server(self, timeout: float = 5) -> bool:
        """Whether the server ends TCP within ``timeout`` (frames on the way are read)."""
        try:
            await self.until(lambda: False, timeout)
        except ConnectionError:
            return True
        except TimeoutError:
            return False
        return False

    def close_codes(self) -> list[int]:
        return [close_code(data) for op, data in self.controls if op == CLOSE]


@asynccontextmanager
async def raw(world: World, request: bytes) -> AsyncIterator[Raw]:
    host, port = world.url.split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(request)
    try:
        yield Raw(reader, writer)
    finally:
        writer.close()


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (handshake("/api/config"), 404),
        (handshake(version="8"), 426),
        (handshake(key="short"), 400),
        (handshake(method="POST"), 405),
        (handshake().replace(b"Connection: Upgrade", b"Connection: keep-alive, Upgrade"), 101),
    ],
    ids=["wrong-path", "old-version", "bad-key", "post", "connection-list"],
)  # fmt: skip
async def test_handshakes_refused_with_a_status_and_closed(
    world: World, request_bytes: bytes, status: int
) -> None:
    async with raw(world, request_bytes) as client:
        head = await client.read_head()
        assert head.startswith(f"HTTP/1.1 {status} "), head
        if status == 426:
            assert "Sec-WebSocket-Version: 13" in head
        if status != 101:
            assert await client.reader.read() is not None  # the body, then the end
            assert client.reader.at_eof()


async def test_a_plain_get_of_ws_is_told_to_upgrade(world: World) -> None:
    async with raw(world, b"GET /ws HTTP/1.1\r\nHost: test\r\n\r\n") as client:
        assert (await client.read_head()).startswith("HTTP/1.1 426 ")


async def test_the_handshake_the_token_and_frames_sent_before_it_is_checked(
    world: World,
) -> None:
    token = world.token("Ana")
    offer = f"Sec-WebSocket-Protocol: kalaro.bearer, {token}\r\n"
    async with raw(world, handshake(extra=offer)) as client:
        head = await client.read_head()
        assert head.startswith("HTTP/1.1 101 ")
        assert f"Sec-WebSocket-Accept: {accept_key(KEY)}" in head
        assert "Sec-WebSocket-Protocol: kalaro.bearer\r\n" in head
        # At once, while the gateway is most likely still checking the token (a Redis
        # round trip): such frames wait, and are handled in order after the welcome.
        client.writer.write(text({"type": "ping", "ref": 1}) + text({"type": "ping", "ref": 2}))
        await client.until(lambda: len(client.messages) >= 3)
        kinds = [(m["type"], m.get("ref")) for m in client.messages]
        assert kinds == [("welcome", None), ("pong", 1), ("pong", 2)]


async def test_a_bad_token_gets_an_error_frame_and_4401(world: World) -> None:
    async with raw(world, handshake(extra="Authorization: Bearer nonsense\r\n")) as client:
        assert (await client.read_head()).startswith("HTTP/1.1 101 ")
        await client.until(lambda: bool(client.close_codes()))
        assert client.messages[0]["type"] == "error"
        assert client.close_codes() == [4401]
        client.writer.write(frame(CLOSE, (4401).to_bytes(2, "big")))  # the client answers
        assert await client.closed_by_server()


async def signed_in(world: World, client: Raw) -> None:
    assert (await client.read_head()).startswith("HTTP/1.1 101 ")
    await client.until(lambda: bool(client.messages))
    assert client.messages[0]["type"] == "welcome"


async def test_fragments_joined_with_a_ping_between_and_a_binary_message(world: World) -> None:
    message = msgspec.json.encode({"type": "ping", "ref": 7})
    auth = f"Authorization: Bearer {world.token('Ana')}\r\n"
    async with raw(world, handshake(extra=auth)) as client:
        await signed_in(world, client)
        client.writer.write(
            frame(0x1, message[:5], fin=False)
            + frame(PING, b"are you there")  # a control frame may come between fragments
            + frame(0x0, message[5:9], fin=False)
            + frame(0x0, message[9:])
            + frame(0x2, msgspec.json.encode({"type": "ping", "ref": 8}))  # binary: handled too
        )
        await client.until(lambda: len(client.messages) >= 3)
        assert [m.get("ref") for m in client.messages[1:]] == [7, 8]
        assert (PONG, b"are you there") in client.controls


@pytest.mark.parametrize(
    ("bad", "code"),
    [
        (frame(0x1, b'{"type":"ping"}', mask=False), 1002),  # a client must mask
        (frame(0x1, b'{"type":"ping"}', rsv=0x40), 1002),  # no extension was agreed
        (frame(0x3, b"?"), 1002),  # a reserved opcode
        (frame(0x0, b"more"), 1002),  # a continuation of nothing
        (frame(PING, b"x" * 126), 1002),  # a control frame over 125 bytes
        (frame(0x1, b'"\xff\xfe"'), 1007),  # text that is not UTF-8
        (b"\x81\xff" + (1 << 40).to_bytes(8, "big"), 1009),  # a terabyte announced
    ],
    ids=["unmasked", "reserved-bit", "opcode", "lone-continuation", "long-ping", "utf8", "huge"],
)
async def test_protocol_errors_close_with_their_code(world: World, bad: bytes, code: int) -> None:
    auth = f"Authorization: Bearer {world.token('Ana')}\r\n"
    async with raw(world, handshake(extra=auth)) as client:
        await signed_in(world, client)
        client.writer.write(bad + text({"type": "ping", "ref": 99}))
        await client.until(lambda: bool(client.close_codes()))
        assert client.close_codes() == [code]
        assert all(m.get("ref") != 99 for m in client.messages)  # nothing after is handled
        # The client does not answer the close: the server ends TCP anyway, soon.
        assert await client.closed_by_server(timeout=5)


async def test_the_client_closes_and_the_server_echoes_then_ends_tcp(world: World) -> None:
    auth = f"Authorization: Bearer {world.token('Ana')}\r\n"
    async with raw(world, handshake(extra=auth)) as client:
        await signed_in(world, client)
        client.writer.write(frame(CLOSE, (4000).to_bytes(2, "big") + b"bye"))
        assert await client.closed_by_server(timeout=2)
        assert client.close_codes() == [4000]


async def test_a_stopping_gateway_says_1012_to_open_sockets(
    nc: NATS, redis: RedisLink, nats_server: NatsServer, unique: str
) -> None:
    async with world_of(nc, redis, nats_server, unique) as world:
        auth = f"Authorization: Bearer {world.token('Ana')}\r\n"
        host, port = world.url.split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(handshake(extra=auth))
        client = Raw(reader, writer)
        await signed_in(world, client)
    # world_of has stopped the server; what did the socket hear?
    try:
        await client.until(lambda: bool(client.close_codes()), timeout=5)
        assert client.close_codes() == [1012]
    finally:
        writer.close()


async def test_a_megabyte_frame_gets_an_error_frame_and_the_socket_lives(world: World) -> None:
    auth = f"Authorization: Bearer {world.token('Ana')}\r\n"
    async with raw(world, handshake(extra=auth)) as client:
        await signed_in(world, client)
        huge = b'{"type":"ping","ref":5,"pad":"' + b"x" * (1 << 20) + b'"}'
        client.writer.write(frame(0x1, huge) + text({"type": "ping", "ref": 6}))
        await client.until(lambda: len(client.messages) >= 3)
        refused, pong = client.messages[1], client.messages[2]
        assert refused["type"] == "error" and refused["code"] == "bad_request", refused
        assert "larger than" in refused["message"]
        assert pong == {"type": "pong", "ref": 6}
        assert not client.close_codes()
