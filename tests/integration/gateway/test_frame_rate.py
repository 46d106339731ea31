"""Frames a socket may send (``ws_frame_rate`` / ``ws_frame_burst``): over the budget a
frame gets a ``rate_limited`` error naming its ref and nothing else; 0 lifts the limit
(the load benches run so)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.gateway.test_wsserver import handshake, raw, text
from tests.integration.gateway.world import World

BURST = 5


@pytest.fixture(params=[0.5, 0.0], ids=["limited", "unlimited"])
def gateway_settings(request: pytest.FixtureRequest) -> dict[str, Any]:
    return {"ws_frame_rate": request.param, "ws_frame_burst": BURST}


async def test_a_socket_over_its_frame_budget_is_told_per_frame(
    world: World, gateway_settings: dict[str, Any]
) -> None:
    async with raw(world, handshake(extra=f"Authorization: Bearer {world.token('Ana')}\r\n")) as c:
        assert (await c.read_head()).startswith("HTTP/1.1 101 ")
        await c.until(lambda: bool(c.messages))  # welcome: the token was checked
        for ref in range(1, 31):
            c.writer.write(text({"type": "ping", "ref": ref}))
        await c.until(lambda: len(c.messages) >= 31)  # the welcome, then one answer each
        answers = c.messages[1:]
        assert [m["ref"] for m in answers] == list(range(1, 31))
        pongs = [m for m in answers if m["type"] == "pong"]
        refused = [m for m in answers if m["type"] == "error"]
        if gateway_settings["ws_frame_rate"]:
            assert len(pongs) == BURST  # 30 frames in well under a second at 0.5 a second
            assert {m["code"] for m in refused} == {"rate_limited"}
        else:
            assert len(pongs) == 30 and not refused
