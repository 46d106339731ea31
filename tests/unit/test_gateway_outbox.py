"""The gateway's per-socket outbox and lifetime: order kept, a stalled client cut off,
close ends writer and reader, silent sockets reaped.

Pure asyncio: the socket's ``send`` is a function of the test.
"""

from __future__ import annotations

import asyncio
from typing import cast

import pytest
from nats.aio.client import Client as NATS

from services.gateway.hub import OUTBOX_LIMIT, Connection, Hub


async def test_frames_are_sent_in_order() -> None:
    sent: list[bytes] = []

    async def send(frame: bytes) -> None:
        sent.append(frame)
        await asyncio.sleep(0)  # a real send may yield between frames

    conn = Connection("u1", "Ana", send)
    conn.start()
    frames = [f"frame {i}".encode() for i in range(50)]
    for frame in frames[:10]:
        conn.push(frame)
    await asyncio.sleep(0.01)
    for frame in frames[10:]:
        conn.push(frame)
    for _ in range(100):
        if len(sent) == len(frames):
            break
        await asyncio.sleep(0.001)
    assert sent == frames
    assert not conn.closed.is_set()
    conn.close()
    await conn.wait_closed()


async def test_a_stalled_client_is_cut_off_and_nothing_more_is_queued() -> None:
    release = asyncio.Event()
    sent: list[bytes] = []

    async def send(frame: bytes) -> None:
        await release.wait()  # the client stopped reading: the first send never returns
        sent.append(frame)

    conn = Connection("u2", "Ben", send)
    conn.start()
    await asyncio.sleep(0)
    conn.push(b"first")  # taken by the writer, which then blocks
    await asyncio.sleep(0.01)
    for i in range(OUTBOX_LIMIT):
        conn.push(f"{i}".encode())
    assert not conn.closed.is_set()  # a full outbox is still within the limit
    conn.push(b"one too many")
    assert conn.closed.is_set()
    release.set()
    await asyncio.sleep(0.01)
    assert sent == [b"first"]  # once closed, queued frames are dropped, not sent
    conn.push(b"after close")
    await conn.wait_closed()
    assert sent == [b"first"]


async def test_a_failing_send_closes_the_connection() -> None:
    async def send(frame: bytes) -> None:
        raise ConnectionResetError("peer went away")

    conn = Connection("u3", "Cat", send)
    conn.start()
    conn.push(b"hello")
    await asyncio.wait_for(conn.closed.wait(), 1)
    await conn.wait_closed()


async def test_closing_stops_the_reader_and_only_it() -> None:
    """A slow or silent socket is closed by cancelling the task reading it; the close
    that the reader itself does while cleaning up must not cancel it again."""

    async def send(frame: bytes) -> None:
        pass

    conn = Connection("u4", "Dan", send)
    cleaned_up = asyncio.Event()

    async def reader() -> None:
        conn.reader = asyncio.current_task()
        try:
            await asyncio.sleep(60)  # waiting for the client's next frame
        finally:
            conn.reader = None
            conn.close()
            await asyncio.sleep(0)  # cleanup may await; it must not be cancelled
            cleaned_up.set()

    task = asyncio.create_task(reader())
    conn.start()
    await asyncio.sleep(0)
    conn.close()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 1)  # not a timeout: the close ended the reader
    assert cleaned_up.is_set()
    await conn.wait_closed()


async def test_the_reaper_closes_only_silent_sockets() -> None:
    async def send(frame: bytes) -> None:
        pass

    hub = Hub(cast(NATS, None))  # the reaper needs no NATS
    quiet, chatty = Connection("u5", "Eve", send), Connection("u6", "Fay", send)
    hub.connections |= {quiet, chatty}
    quiet.last_heard -= 10
    reaper = asyncio.create_task(hub.reap_idle(idle_seconds=5, every=0.01))
    try:
        await asyncio.wait_for(quiet.closed.wait(), 1)
        assert not chatty.closed.is_set()
        chatty.last_heard -= 10
        await asyncio.wait_for(chatty.closed.wait(), 1)
    finally:
        reaper.cancel()
