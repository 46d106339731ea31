"""The gateway's per-socket outbox: order kept, a stalled client cut off, close ends it.

Pure asyncio: the socket's ``send`` is a function of the test.
"""

from __future__ import annotations

import asyncio

from services.gateway.hub import OUTBOX_LIMIT, Connection


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
