"""What the gateway's request deadline costs the server: CPU per HTTP request, in one run.

The gateway serves HTTP with uvicorn's httptools protocol wrapped by
``services.gateway.httpserver.RequestDeadline`` (a deadline for each request to arrive,
through uvicorn's public API: its own parser reads the bytes a second time, and the
wrapped protocol's writes pass through a thin transport view). This serves a trivial
ASGI app both ways, each in its own process, on uvloop as the gateway runs:

- ``uvicorn``: ``http="httptools"``, no deadline (the floor);
- ``deadline``: ``http=http_with_request_deadline(10)``, as the gateway.

Clients on keep-alive connections send GETs (and small POSTs with a body) one after
another; the figure is the server process's CPU (``/proc``, user + system) per request.
The variants alternate round by round (best of the rounds), so a busy machine slows
both alike. WebSocket frames are not affected: the WebSocket server takes the socket's
own transport after the upgrade.

    .venv/bin/python bench/bench_http_deadline.py [--requests 20000] [--connections 20] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import uvloop

from kalaro.devstack import free_port, wait_for_port

VARIANTS = ("uvicorn", "deadline")
GET = b"GET /ping HTTP/1.1\r\nHost: bench\r\n\r\n"
POST = b'POST /ping HTTP/1.1\r\nHost: bench\r\ncontent-length: 17\r\n\r\n{"move": "draw"}\n'


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    more = True
    while more:  # read the body, as a handler would
        more = (await receive()).get("more_body", False)
    headers = [(b"content-type", b"text/plain"), (b"content-length", b"2")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"ok"})


def serve(port: int, variant: str) -> None:
    import uvicorn

    from services.gateway.httpserver import http_with_request_deadline

    http: Any = "httptools" if variant == "uvicorn" else http_with_request_deadline(10.0)
    config = uvicorn.Config(app, port=port, loop="uvloop", http=http, lifespan="off",
                            access_log=False, log_config=None, log_level="warning")  # fmt: skip
    uvicorn.Server(config).run()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def client(port: int, requests: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for i in range(requests):
            writer.write(POST if i % 4 == 0 else GET)
            await reader.readuntil(b"\r\n\r\n")
            await reader.readexactly(2)
    finally:
        writer.close()


async def one_round(port: int, pid: int, requests: int, connections: int) -> float:
    """Server CPU microseconds per request."""
    each = requests // connections
    before = cpu_seconds(pid)
    await asyncio.gather(*(client(port, each) for _ in range(connections)))
    return (cpu_seconds(pid) - before) / (each * connections) * 1e6


async def measure(args: argparse.Namespace) -> int:
    servers: dict[str, tuple[int, subprocess.Popen[bytes]]] = {}
    try:
        for variant in VARIANTS:
            port = free_port()
            command = [sys.executable, __file__, "--serve", str(port), "--variant", variant]
            servers[variant] = (port, subprocess.Popen(command))  # noqa: ASYNC220
            wait_for_port(port, timeout=15)
        results: dict[str, list[float]] = {v: [] for v in VARIANTS}
        for port, server in servers.values():  # warm up
            await one_round(port, server.pid, 2000, args.connections)
        for _ in range(args.rounds):
            for variant, (port, server) in servers.items():
                cost = await one_round(port, server.pid, args.requests, args.connections)
                results[variant].append(cost)
    finally:
        for _, server in servers.values():
            server.terminate()
            server.wait(10)
    best = {v: min(r) for v, r in results.items()}
    print(f"server CPU per HTTP request, µs (best of {args.rounds} rounds of "
          f"{args.requests:,} requests on {args.connections} keep-alive connections)")  # fmt: skip
    print("| server | µs/request |")
    print("|---|---|")
    for variant, cost in best.items():
        print(f"| {variant} | {cost:.1f} |")
    extra = best["deadline"] - best["uvicorn"]
    print(f"the deadline costs {extra:+.1f} µs a request ({extra / best['uvicorn']:+.0%})")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--connections", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.variant)
        return 0
    return uvloop.run(measure(args))


if __name__ == "__main__":
    sys.exit(main())
