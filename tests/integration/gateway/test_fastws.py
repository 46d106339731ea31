"""The gateway's text framing (services.gateway.fastws) inside a real uvicorn server,
read by the SDK's wire: every size of length field, then flow control and closing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import uvicorn
from websockets.frames import Frame, Opcode

from kalaro.client.wire import open_wire
from kalaro.devstack import free_port, wait_for_port
from services.gateway import fastws
from services.gateway.fastws import TextFrameWebSocketProtocol, text_frame

SIZES = (0, 1, 125, 126, 1000, 65535, 65536, 200_000)


def test_frames_are_what_websockets_would_write() -> None:
    for size in SIZES:
        data = ("é" * size).encode()[:size]
        expected = Frame(Opcode.TEXT, data).serialize(mask=False, extensions=[])
        assert text_frame(data) == expected, size


refusals: list[str] = []


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    assert scope["type"] == "websocket"
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})
    for size in SIZES:
        await send({"type": "websocket.send", "text": "x" * size})
    await send({"type": "websocket.send", "text": "ünïcode ✓"})
    await send({"type": "websocket.close", "code": 1000})
    try:  # after the close, uvicorn's own send must refuse (no frame of ours slips out)
        await send({"type": "websocket.send", "text": "too late"})
    except RuntimeError as exc:
        refusals.append(str(exc))


async def test_a_real_server_sends_every_size_then_closes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    framed: list[int] = []

    def counting(data: bytes) -> bytes:
        framed.append(len(data))
        return text_frame(data)

    monkeypatch.setattr(fastws, "text_frame", counting)
    port = free_port()
    config = uvicorn.Config(
        _app, host="127.0.0.1", port=port, ws=TextFrameWebSocketProtocol, log_level="warning"
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    try:
        await asyncio.to_thread(wait_for_port, port)
        received: list[str] = []
        closed = asyncio.Event()
        wire = await open_wire(
            f"ws://127.0.0.1:{port}/ws", received.append, lambda exc: closed.set()
        )
        await asyncio.wait_for(closed.wait(), 5)
        assert received == ["x" * size for size in SIZES] + ["ünïcode ✓"]
        assert not wire.is_open
        assert len(framed) == len(SIZES) + 1  # every text frame took the short path
        assert len(refusals) == 1 and "after sending 'websocket.close'" in refusals[0]
    finally:
        server.should_exit = True
        await serving
