"""The request deadline's log: a line an operator can act on, not one per connection."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from services.gateway.httpserver import (
    _LOG_EVERY_SECONDS,
    _TimeoutLog,
    http_with_request_deadline,
    uvicorn_http_protocol,
)


def test_cut_connections_are_logged_at_most_once_a_minute(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="kalaro.gateway.http")
    timeouts = _TimeoutLog()
    for port in (1, 2, 3):
        timeouts.record(("203.0.113.7", port), 10.0)
    assert timeouts.cut == 3
    assert len(caplog.records) == 1
    assert "closed 1 connection(s)" in caplog.records[0].getMessage()
    assert "203.0.113.7:1" in caplog.records[0].getMessage()
    timeouts._last -= _LOG_EVERY_SECONDS  # a minute later
    timeouts.record(None, 10.0)
    assert len(caplog.records) == 2
    assert "closed 3 connection(s)" in caplog.records[1].getMessage()  # two unlogged + this
    assert "latest from ?" in caplog.records[1].getMessage()


def test_the_deadline_must_be_positive() -> None:
    assert http_with_request_deadline(2.5).request_seconds == 2.5  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="positive"):
        http_with_request_deadline(0)


def test_it_wraps_the_protocol_uvicorn_picks_and_nothing_imports_uvicorns_internals() -> None:
    protocol = http_with_request_deadline(1.0)
    assert protocol.inner is uvicorn_http_protocol("httptools")
    assert protocol.inner.__module__.startswith("uvicorn.")  # uvicorn's own, resolved by it
    root = Path(__file__).resolve().parents[2]
    for folder in ("services", "libs", "bench"):
        for path in (root / folder).rglob("*.py"):
            assert "uvicorn.protocols" not in path.read_text(), path  # issue 33: public API
