"""The gateway's per-socket outbox and lifetime: order kept, a stalled client cut off,
close ends writer and reader, silent sockets reaped.

Pure asyncio: the socket's ``send`` is a function of the test.
"""

from __future__ import annotations

import asyncio
from typing import cast

from nats.aio.client import Client as NATS

from services.gateway.connection import OUTBOX_LIMIT, Connection, Flag
from services.gateway.hub import Hub


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


async def test_closing_calls_the_servers_close_once() -> None:
    """A slow or silent socket is closed through ``on_close`` (its server's goodbye);
    closing again, as the cleanup does, must not call it again."""

    async def send(frame: bytes) -> None:
        pass

    conn = Connection("u4", "Dan", send)
    calls: list[int] = []
    conn.on_close = lambda: calls.append(conn.close_code)
    conn.start()
    conn.close_code = 4401
    conn.close()
    conn.close()
    assert calls == [4401]
    assert conn.closed.is_set()
    conn.push(b"after the close")  # dropped, not queued
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


async def test_frames_pushed_in_one_turn_go_out_in_one_direct_write() -> None:
    written: list[list[bytes]] = []
    sent: list[bytes] = []
    open_ = True

    async def send(frame: bytes) -> None:
        sent.append(frame)

    def write_now(frames: list[bytes]) -> bool:
        if open_:
            written.append(frames)
        return open_

    conn = Connection("u9", "Ivy", send, write_now=write_now)
    conn.start()
    await asyncio.sleep(0)  # the writer is idle, waiting
    for frame in (b"view", b"ack", b"table"):
        conn.push(frame)
    assert written == []  # nothing written inside push: one write per loop turn
    await asyncio.sleep(0)
    assert written == [[b"view", b"ack", b"table"]]
    assert sent == []  # no hop through the writer task
    # The server declines (say the socket is paused): the writer sends them, in order.
    open_ = False
    conn.push(b"later 1")
    conn.push(b"later 2")
    for _ in range(100):
        if len(sent) == 2:
            break
        await asyncio.sleep(0.001)
    assert sent == [b"later 1", b"later 2"]
    assert written == [[b"view", b"ack", b"table"]]
    conn.close()
    await conn.wait_closed()


async def test_an_idle_socket_with_direct_writes_has_no_writer_task() -> None:
    """Idle sockets are most sockets: with ``write_now`` the writer task is started only
    when a write is declined (and then sends what is queued, in order)."""
    sent: list[bytes] = []
    open_ = True

    async def send(frame: bytes) -> None:
        sent.append(frame)

    def write_now(frames: list[bytes]) -> bool:
        return open_

    before = len(asyncio.all_tasks())
    conn = Connection("u10", "Jo", send, write_now=write_now)
    conn.start()
    conn.push(b"welcome")
    await asyncio.sleep(0)
    assert len(asyncio.all_tasks()) == before
    open_ = False
    conn.push(b"paused 1")
    conn.push(b"paused 2")
    for _ in range(100):
        if len(sent) == 2:
            break
        await asyncio.sleep(0.001)
    assert sent == [b"paused 1", b"paused 2"]
    assert len(asyncio.all_tasks()) == before + 1  # the writer, started on demand
    conn.close()
    await conn.wait_closed()
    await asyncio.sleep(0)
    assert len(asyncio.all_tasks()) == before


async def test_flag_wakes_every_waiter_and_survives_one_cancelled() -> None:
    """``Flag`` stands in for ``asyncio.Event`` (uvicorn's ``writable``, a connection's
    ``closed``): a cancelled waiter must not cancel the others' wait."""
    flag = Flag()
    first = asyncio.create_task(flag.wait())
    second = asyncio.create_task(flag.wait())
    await asyncio.sleep(0)
    first.cancel()
    await asyncio.sleep(0)
    assert first.cancelled() and not second.done()
    flag.set()
    assert await asyncio.wait_for(second, 1) is True
    flag.clear()
    assert not flag.is_set()
    third = asyncio.create_task(flag.wait())
    await asyncio.sleep(0)
    assert not third.done()
    flag.set()
    assert await asyncio.wait_for(third, 1) is True
