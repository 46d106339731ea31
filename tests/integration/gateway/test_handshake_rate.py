"""A WebSocket handshake is an HTTP request: it takes a token from its address's bucket
(``rest_address_rate`` / ``rest_address_burst``), as every REST request does, so one
address cannot open sockets without end. Over it: 429 with Retry-After, and no socket;
the same whether the gateway serves ``/ws`` itself or uvicorn does (compression on)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.gateway.test_wsserver import handshake, raw
from tests.integration.gateway.world import World

BURST = 3


@pytest.fixture(params=[False, True], ids=["own-ws", "compression"])
def gateway_settings(request: pytest.FixtureRequest) -> dict[str, Any]:
    # With compression on, uvicorn serves /ws (ws.py's ASGI endpoint): the same budget.
    return {
        "rest_address_rate": 0.2,
        "rest_address_burst": BURST,
        "ws_compression": request.param,
    }


async def test_handshakes_over_the_address_budget_get_429(world: World) -> None:
    ana = handshake(extra=f"Authorization: Bearer {world.token('Ana')}\r\n")
    statuses = []
    for _ in range(BURST + 2):
        async with raw(world, ana) as client:
            head = await client.read_head()
            statuses.append(int(head.split()[1]))
            if statuses[-1] == 429:
                assert "retry-after: " in head.lower(), head
                await client.reader.read()  # the body, then the end
                assert client.reader.at_eof()
    assert statuses == [101] * BURST + [429, 429], statuses


async def test_rest_requests_and_handshakes_share_the_budget(world: World) -> None:
    request = b"GET /api/config HTTP/1.1\r\nHost: test\r\n\r\n"
    for _ in range(BURST):
        async with raw(world, request) as client:
            assert (await client.read_head()).startswith("HTTP/1.1 200 ")
    ana = handshake(extra=f"Authorization: Bearer {world.token('Ana')}\r\n")
    async with raw(world, ana) as client:
        assert (await client.read_head()).startswith("HTTP/1.1 429 ")
