"""Sockets per account on one gateway (``ws_sockets_per_user``): one token cannot hold a
process's memory and file descriptors. The socket over the limit gets an error frame
and close code 1008; closing one makes room; other accounts are not affected."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from typing import Any

import pytest

from kalaro.wsframes import CLOSE
from tests.integration.gateway.test_wsserver import Raw, frame, handshake, raw
from tests.integration.gateway.world import World

LIMIT = 3


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"ws_sockets_per_user": LIMIT}


async def _welcomed(client: Raw) -> Raw:
    assert (await client.read_head()).startswith("HTTP/1.1 101 ")
    await client.until(lambda: bool(client.messages or client.controls))
    return client


async def test_one_socket_over_the_limit_is_refused_until_one_closes(world: World) -> None:
    ana = handshake(extra=f"Authorization: Bearer {world.token('Ana')}\r\n")
    async with AsyncExitStack() as stack:
        held = [await _welcomed(await stack.enter_async_context(raw(world, ana)))
                for _ in range(LIMIT)]  # fmt: skip
        assert all(c.messages[0]["type"] == "welcome" for c in held)

        async with raw(world, ana) as extra:
            await _welcomed(extra)
            await extra.until(lambda: bool(extra.close_codes()))
            assert extra.messages[0]["type"] == "error"
            assert extra.messages[0]["code"] == "rate_limited"
            assert f"{LIMIT} sockets open" in extra.messages[0]["message"]
            assert extra.close_codes() == [1008]
            extra.writer.write(frame(CLOSE, (1008).to_bytes(2, "big")))
            assert await extra.closed_by_server()

        # Another account is not affected.
        bo = handshake(extra=f"Authorization: Bearer {world.token('Bo')}\r\n")
        async with raw(world, bo) as other:
            assert (await _welcomed(other)).messages[0]["type"] == "welcome"

        # One of Ana's closes: a new one is let in (the count follows closes).
        first = held[0]
        first.writer.write(frame(CLOSE, (1000).to_bytes(2, "big")))
        assert await first.closed_by_server()
        for _ in range(50):
            async with raw(world, ana) as again:
                await _welcomed(again)
                if again.messages and again.messages[0]["type"] == "welcome":
                    break
            await asyncio.sleep(0.05)  # the server may still be ending the closed one
        else:
            pytest.fail("no room after a socket closed")


async def test_sockets_cut_without_a_close_handshake_give_their_room_back(world: World) -> None:
    """Five times over: the whole quota opened, then dropped at the TCP level (a reset:
    no close frame, no FIN). Each time the whole quota must be had again, once the
    gateway has seen the resets; a count that leaked would lock the account out."""
    ana = handshake(extra=f"Authorization: Bearer {world.token('Ana')}\r\n")
    for _ in range(5):
        for _ in range(100):
            async with AsyncExitStack() as stack:
                held = [await _welcomed(await stack.enter_async_context(raw(world, ana)))
                        for _ in range(LIMIT)]  # fmt: skip
                for client in held:
                    client.writer.transport.abort()
            if all(c.messages and c.messages[0]["type"] == "welcome" for c in held):
                break
            await asyncio.sleep(0.05)  # some resets not handled yet: try again
        else:
            pytest.fail("the dropped sockets still count against the account")
