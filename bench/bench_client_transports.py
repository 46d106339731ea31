"""The SDK's two WebSocket transports: client CPU per message, measured in the same run.

``kalaro.client.transport`` opens a table socket over the ``websockets`` library (the
SDK's default) or over the SDK's own frame reader (``"fast"``, :mod:`kalaro.client.wire`,
the load generator's). This measures what the choice costs the client: a server in
another process (the ``websockets`` library's, so its CPU is not counted) sends view-
sized text messages as fast as the client takes them; the client's CPU time
(``time.process_time``, user + system) per message received, and per message sent, is
the figure. The two transports alternate round by round (best of the rounds), on uvloop
as the load generator runs, so a busy machine slows both alike; the last column is the
library's cost over the fast reader's.

    .venv/bin/python bench/bench_client_transports.py [--messages 20000] [--size 1500] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time

import uvloop

from kalaro.client.transport import TRANSPORTS, Transport, open_connection
from kalaro.devstack import free_port, wait_for_port


def view_message(size: int) -> str:
    """A text message shaped like a table view (JSON, mostly short strings and ints)."""
    cards = [f"{rank}{suit}" for suit in "SHDC" for rank in "A23456789TJQK"]
    body = {"type": "view", "table_id": "t-0001", "version": 0, "seat": 1, "hand": cards}
    text = json.dumps(body)
    return text + " " * max(0, size - len(text))


# --- the server (its own process) ----------------------------------------------------


async def serve(port: int) -> None:
    from websockets.asyncio.server import ServerConnection
    from websockets.asyncio.server import serve as ws_serve

    async def handler(connection: ServerConnection) -> None:
        async for request in connection:
            command, count, size = str(request).split()
            if command == "send":  # send `count` messages of `size` characters
                message = view_message(int(size))
                for _ in range(int(count)):
                    await connection.send(message)
            elif command == "take":  # the client sends `count`; say when they are in
                for _ in range(int(count)):
                    await connection.recv()
                await connection.send("taken")

    async with ws_serve(handler, "127.0.0.1", port, compression=None, max_size=2**22):
        await asyncio.Future()


# --- the client ----------------------------------------------------------------------


async def one_round(
    transport: Transport, url: str, messages: int, size: int
) -> tuple[float, float]:
    """CPU microseconds per message received, and per message sent."""
    received = 0
    done = asyncio.get_running_loop().create_future()

    def on_message(text: str) -> None:
        nonlocal received
        received += 1
        if (received == messages or text == "taken") and not done.done():
            done.set_result(None)

    connection = await open_connection(transport, url, on_message, lambda exc: None)
    try:
        started = time.process_time()
        await connection.send(f"send {messages} {size}")
        await done
        receive = (time.process_time() - started) / messages * 1e6
        received, done = 0, asyncio.get_running_loop().create_future()
        message = view_message(size // 4)  # moves are smaller than views
        await connection.send(f"take {messages} 0")
        started = time.process_time()
        for _ in range(messages):
            await connection.send(message)
        await done
        send = (time.process_time() - started) / messages * 1e6
    finally:
        await connection.close()
    return receive, send


async def measure(args: argparse.Namespace) -> int:
    port = free_port()
    # The server's CPU must not count: another process (started before any timing).
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port)])  # noqa: ASYNC220
    try:
        wait_for_port(port, timeout=15)
        url = f"ws://127.0.0.1:{port}/"
        results: dict[str, list[tuple[float, float]]] = {t: [] for t in TRANSPORTS}
        await one_round("websockets", url, 1000, args.size)  # warm both paths up
        await one_round("fast", url, 1000, args.size)
        for _ in range(args.rounds):
            for transport in TRANSPORTS:
                results[transport].append(await one_round(transport, url, args.messages, args.size))
    finally:
        server.terminate()
        server.wait(10)
    best = {t: (min(r[0] for r in rs), min(r[1] for r in rs)) for t, rs in results.items()}
    print(f"client CPU per message, µs (best of {args.rounds} rounds of {args.messages:,} "
          f"messages; views of {args.size} characters, sends of {args.size // 4})")  # fmt: skip
    print("| transport | receive | send |")
    print("|---|---|---|")
    for transport, (receive, send) in best.items():
        print(f"| {transport} | {receive:.1f} | {send:.1f} |")
    library, fast = best["websockets"], best["fast"]
    ratios = (library[0] / fast[0], library[1] / fast[1])
    print(f"websockets / fast: receive {ratios[0]:.2f}x, send {ratios[1]:.2f}x")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--size", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        uvloop.run(serve(args.serve))
        return 0
    return uvloop.run(measure(args))


if __name__ == "__main__":
    sys.exit(main())
