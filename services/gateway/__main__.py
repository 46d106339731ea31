"""``python -m services.gateway``: serve the gateway with uvicorn."""

from __future__ import annotations

import importlib.util
from typing import Any

import uvicorn
from litestar import Litestar

from kalaro.bus.runner import tune_gc
from kalaro.logs import setup as setup_logs
from kalaro.settings import Settings, load_settings
from services.gateway.app import create_app
from services.gateway.wsserver import websockets_for

WS_MAX_MESSAGE_BYTES = 4 * 1024 * 1024


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _http_protocol(settings: Settings) -> Any:
    """uvicorn's httptools protocol with a deadline for each request to arrive
    (httpserver); uvicorn's own h11 only where httptools is not installed (it is in the
    lock)."""
    if not _has("httptools"):
        return "h11"
    from services.gateway.httpserver import http_with_request_deadline

    return http_with_request_deadline(settings.http_request_timeout_seconds)


def server_config(app: Litestar, settings: Settings, **overrides: Any) -> uvicorn.Config:
    """How uvicorn serves the gateway (tests serve it the same way)."""
    options: dict[str, Any] = {
        "host": settings.http_host,
        "port": settings.http_port,
        "log_level": "info",
        # The gateway reads X-Forwarded-For itself, and only from the proxies in
        # trusted_proxies (security.client_address); uvicorn must leave the peer alone.
        "proxy_headers": False,
        "loop": "uvloop" if _has("uvloop") else "asyncio",
        "http": _http_protocol(settings),
        "ws_per_message_deflate": settings.ws_compression,
        # /ws is our own protocol (wsserver), unless compression is wanted: then uvicorn's.
        "ws": "auto" if settings.ws_compression else websockets_for(app),
        # No protocol pings of uvicorn's own: clients send a heartbeat every half
        # heartbeat period and the hub's reaper closes a socket silent for three, which
        # also finds the dead connections such pings would. At 1,500 sockets they were
        # 75 extra frames a second for nothing.
        "ws_ping_interval": None,
        # A message over 4 MiB closes the socket (1009) before it is buffered; a smaller
        # one over the frame limit (limits.MAX_BODY_BYTES) gets an error frame.
        "ws_max_size": WS_MAX_MESSAGE_BYTES,
        # Logging is ours (kalaro.logs): uvicorn's lines go through the same format.
        "log_config": None,
    }
    options.update(overrides)
    return uvicorn.Config(app, **options)


def main() -> None:
    setup_logs("gateway")
    settings = load_settings()
    tune_gc()
    uvicorn.Server(server_config(create_app(settings), settings)).run()


if __name__ == "__main__":
    main()
