"""``python -m services.gateway``: serve the gateway with uvicorn."""

from __future__ import annotations

import importlib.util
import logging

import uvicorn

from kalaro.bus.runner import tune_gc
from kalaro.settings import load_settings
from services.gateway.app import create_app
from services.gateway.fastws import TextFrameWebSocketProtocol


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    settings = load_settings()
    tune_gc()
    config = uvicorn.Config(
        create_app(settings),
        host=settings.http_host,
        port=settings.http_port,
        log_level="info",
        proxy_headers=True,
        loop="uvloop" if _has("uvloop") else "asyncio",
        http="httptools" if _has("httptools") else "h11",
        ws_per_message_deflate=settings.ws_compression,
        # Our text framing only when no extension could apply (see fastws).
        ws="auto" if settings.ws_compression else TextFrameWebSocketProtocol,
        # No protocol pings of uvicorn's own: clients send a heartbeat every half
        # heartbeat period and the hub's reaper closes a socket silent for three, which
        # also finds the dead connections such pings would. At 1,500 sockets they were
        # 75 extra frames a second for nothing.
        ws_ping_interval=None,
    )
    uvicorn.Server(config).run()


if __name__ == "__main__":
    main()
