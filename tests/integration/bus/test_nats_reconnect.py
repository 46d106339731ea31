"""``kalaro.bus.runner.connect`` with NATS down: a few log lines, not a traceback per retry.

A service whose only NATS server dies logs the loss once and the return once, and
reconnects by itself; one started before any NATS server keeps waiting (saying so
once) and connects when a server appears.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import pytest

from kalaro.bus.runner import connect
from kalaro.devstack import NatsServer, free_port

OUTAGE_SECONDS = 3.0


async def _until(condition: object, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


def _noisy(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_losing_the_only_server_is_logged_once_and_the_client_comes_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = NatsServer(tmp_path / "nats").start()
    try:
        nc = await connect(server.url, "lonely")
        caplog.set_level(logging.DEBUG)
        caplog.clear()
        server.kill()
        await _until(lambda: not nc.is_connected)
        # The outage lasts a few seconds: nats-py retries many times meanwhile.
        await asyncio.sleep(OUTAGE_SECONDS)
        during = _noisy(caplog)
        messages = [r.getMessage() for r in during]
        assert len(during) <= 2, messages
        assert sum("lost the NATS connection" in m for m in messages) == 1, messages
        assert not [r for r in during if r.exc_info], "no tracebacks while NATS is down"
        assert nc.stats["reconnects"] == 0

        server.start()  # the same port
        await _until(lambda: nc.is_connected)
        await nc.flush(timeout=5)
        reconnected = [r.getMessage() for r in _noisy(caplog) if "reconnected" in r.getMessage()]
        assert len(reconnected) == 1, reconnected
        await nc.close()
    finally:
        server.stop()


async def test_starting_before_nats_waits_quietly_and_then_connects(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    port = free_port()
    connecting = asyncio.create_task(connect(f"nats://127.0.0.1:{port}", "early"))
    await asyncio.sleep(OUTAGE_SECONDS)  # no server at all meanwhile
    assert not connecting.done(), "connect gave up instead of waiting"
    messages = [r.getMessage() for r in _noisy(caplog)]
    assert len(messages) == 1 and "no NATS server reachable" in messages[0], messages

    server = NatsServer(tmp_path / "nats", port=port).start()
    try:
        nc = await asyncio.wait_for(connecting, 15)
        assert nc.is_connected
        await nc.close()
    finally:
        if not connecting.done():
            connecting.cancel()
        server.stop()


async def test_a_deliberate_drain_is_not_reported_as_a_lost_connection(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every stop drains NATS; "lost the NATS connection; reconnecting" there would be a
    warning an operator cannot act on."""
    server = NatsServer(tmp_path / "nats").start()
    try:
        nc = await connect(server.url, "stopping")
        caplog.set_level(logging.DEBUG)
        caplog.clear()
        await nc.drain()
        assert nc.is_closed
        assert _noisy(caplog) == [], [r.getMessage() for r in _noisy(caplog)]
        assert any("NATS connection closed" in r.getMessage() for r in caplog.records)
    finally:
        server.stop()
