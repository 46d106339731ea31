"""The SDK's WebSocket frame reader against ``websockets``' own server protocol.

No sockets: the server side is ``websockets.server.ServerProtocol`` in memory, so every
frame the client reads is one a conforming server really writes, however it is split.
"""

from __future__ import annotations

import asyncio
from typing import Any

from websockets.client import ClientProtocol
from websockets.frames import Close, Frame, Opcode
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

from kalaro.client.wire import Wire


class _Transport:
    """Collects what the client writes."""

    def __init__(self) -> None:
        self.written = bytearray()
        self.closed = False

    def write(self, data: bytes) -> None:
        self.written += data

    def can_write_eof(self) -> bool:
        return False

    def abort(self) -> None:
        self.closed = True

    def close(self) -> None:
        self.closed = True


class _Pair:
    """A client Wire and an in-memory server that has accepted its handshake."""

    def __init__(self, max_size: int = 2**22) -> None:
        self.messages: list[str] = []
        self.transport = _Transport()
        self.wire = Wire(
            ClientProtocol(parse_uri("ws://kalaro.test/ws")),
            self.messages.append,
            lambda exc: None,
            max_size,
        )
        self.wire.connection_made(self.transport)  # type: ignore[arg-type]
        self.server = ServerProtocol()
        self.server.receive_data(self._take_written())
        (request,) = self.server.events_received()
        self.server.send_response(self.server.accept(request))  # type: ignore[arg-type]

    def _take_written(self) -> bytes:
        data = bytes(self.transport.written)
        self.transport.written.clear()
        return data

    def server_bytes(self) -> bytes:
        return b"".join(self.server.data_to_send())

    def feed(self, data: bytes, chunk: int | None = None) -> None:
        step = chunk or len(data) or 1
        for start in range(0, len(data), step):
            self.wire.data_received(data[start : start + step])

    def client_frames(self) -> list[Any]:
        """What the client sent, as the server reads it."""
        self.server.receive_data(self._take_written())
        return [e for e in self.server.events_received() if isinstance(e, Frame)]


async def test_frames_right_behind_the_handshake_and_split_anywhere() -> None:
    for chunk in (None, 1, 3, 7):
        pair = _Pair()
        handshake = pair.server_bytes()
        pair.server.send_text(b"welcome")
        pair.server.send_text(("é" * 200).encode())  # 400 bytes: a 16-bit length
        pair.server.send_text(("x" * 70_000).encode())  # a 64-bit length
        pair.feed(handshake + pair.server_bytes(), chunk)
        assert pair.wire.opened.done() and pair.wire.is_open
        assert pair.messages == ["welcome", "é" * 200, "x" * 70_000], chunk


async def test_fragments_are_joined_and_pings_answered() -> None:
    pair = _Pair()
    pair.feed(pair.server_bytes())
    pair.server.send_text(b"hel", fin=False)
    pair.server.send_ping(b"are you there")
    pair.server.send_continuation(b"lo", fin=True)
    pair.feed(pair.server_bytes(), chunk=2)
    assert pair.messages == ["hello"]
    pongs = [f for f in pair.client_frames() if f.opcode is Opcode.PONG]
    assert [bytes(f.data) for f in pongs] == [b"are you there"]


async def test_a_close_frame_is_answered_and_ends_reading() -> None:
    pair = _Pair()
    pair.feed(pair.server_bytes())
    pair.server.send_close(1001, "going away")
    closing = pair.server_bytes()
    pair.feed(closing + b"\x81\x05after")  # nothing after a close counts
    assert pair.messages == []
    assert not pair.wire.is_open
    (answer,) = pair.client_frames()
    assert Close.parse(answer.data).code == 1001


async def test_protocol_violations_close_with_their_code() -> None:
    cases: list[tuple[bytes, int, int]] = [
        (
            b"\x81\x85abcd" + bytes(b ^ m for b, m in zip(b"hello", b"abcda", strict=True)),
            1002,
            2**22,
        ),
        (b"\xc1\x02hi", 1002, 2**22),  # a reserved bit set
        (b"\x83\x00", 1002, 2**22),  # opcode 3 is not defined
        (b"\x80\x02hi", 1002, 2**22),  # a continuation with nothing to continue
        (b"\x81\x02\xff\xfe", 1007, 2**22),  # not UTF-8
        (b"\x81\x7e\x01\x00" + b"y" * 256, 1009, 100),  # over max_size
    ]
    for data, code, max_size in cases:
        pair = _Pair(max_size)
        pair.feed(pair.server_bytes())
        pair.feed(data + b"\x81\x02ok")
        assert pair.messages == [], data
        (answer,) = pair.client_frames()
        assert Close.parse(answer.data).code == code, data
        assert not pair.wire.is_open


async def test_a_refused_handshake_fails_opening() -> None:
    pair = _Pair()
    refused = ServerProtocol()
    pair.transport.written.clear()
    pair.server = refused
    response = refused.reject(403, "no token")
    refused.send_response(response)
    pair.feed(pair.server_bytes())
    assert pair.wire.opened.done() and pair.wire.opened.exception() is not None
    assert not pair.wire.is_open
    await asyncio.sleep(0)


async def test_the_token_goes_in_a_header_and_never_in_the_url() -> None:
    transport = _Transport()
    wire = Wire(
        ClientProtocol(parse_uri("ws://kalaro.test/ws")),
        lambda text: None,
        lambda exc: None,
        headers=[("Authorization", "Bearer tok.en")],
    )
    wire.connection_made(transport)  # type: ignore[arg-type]
    server = ServerProtocol()
    server.receive_data(bytes(transport.written))
    (request,) = server.events_received()
    assert request.path == "/ws"  # type: ignore[union-attr]
    assert request.headers["Authorization"] == "Bearer tok.en"  # type: ignore[union-attr]
