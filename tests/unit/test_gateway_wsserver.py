"""Flow control in the gateway's WebSocket server (services.gateway.wsserver), driven by
hand: the transport says "stop" (pause_writing) and "go on" (resume_writing) when it
chooses, which a real socket only does under load. The transport records what is
written; nothing else is stood in (no sign-in happens here)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from kalaro.wsframes import text_frame
from services.gateway.wsserver import GatewayWebSocket, accept_key


class Transport:
    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.closing = False
        self.aborted = False

    def write(self, data: bytes) -> None:
        assert not self.closing, "written after close"
        self.written.append(data)

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def abort(self) -> None:
        self.closing = self.aborted = True

    def get_extra_info(self, name: str) -> Any:
        return None


def opened() -> tuple[GatewayWebSocket, Transport, SimpleNamespace]:
    server = SimpleNamespace(connections=set(), tasks=set())
    protocol = GatewayWebSocket(SimpleNamespace(ws_max_size=1 << 20), server)
    transport = Transport()
    protocol.connection_made(transport)  # type: ignore[arg-type]
    # Open, as after a handshake, without a sign-in (tests/integration/gateway has those).
    protocol._state = 1  # _OPEN
    return protocol, transport, server


async def test_paused_frames_wait_for_resume_then_go_in_order() -> None:
    protocol, transport, _ = opened()
    assert protocol._write_frames([b"a", b"b"])
    assert transport.written == [text_frame(b"a") + text_frame(b"b")]  # one write
    protocol.pause_writing()
    assert not protocol._write_frames([b"c"])  # declined: the hub's writer takes it
    sending = asyncio.create_task(protocol._send(b"c"))
    await asyncio.sleep(0.01)
    assert not sending.done() and len(transport.written) == 1
    protocol.resume_writing()
    await asyncio.wait_for(sending, 1)
    assert transport.written[-1] == text_frame(b"c")
    assert protocol._write_frames([b"d"])


async def test_a_socket_lost_while_paused_fails_the_waiting_send() -> None:
    protocol, _, server = opened()
    protocol.pause_writing()
    sending = asyncio.create_task(protocol._send(b"never"))
    await asyncio.sleep(0.01)
    protocol.connection_lost(None)
    with pytest.raises(ConnectionError):
        await asyncio.wait_for(sending, 1)
    assert protocol not in server.connections
    assert not protocol._write_frames([b"late"])


async def test_closing_sends_one_close_frame_and_aborts_a_silent_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("services.gateway.wsserver.CLOSE_TIMEOUT_SECONDS", 0.05)
    protocol, transport, _ = opened()
    protocol.close(4401, "revoked")
    protocol.close(1000)  # a second close says nothing more
    assert transport.written == [b"\x88\x09" + (4401).to_bytes(2, "big") + b"revoked"]
    assert not protocol._write_frames([b"after"])
    await asyncio.sleep(0.1)
    assert transport.aborted  # the client never answered: TCP ends anyway


def test_the_accept_key_of_the_rfc_example() -> None:
    # RFC 6455 section 1.3's worked example.
    assert accept_key("dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
