"""Idle sockets: the gateway RSS each authenticated, idle WebSocket costs.

Starts the stack as ``bench_tables.py`` does, signs a player in, then opens N idle
WebSockets with the player's access token to the one gateway process, from a few client
processes (the SDK's fast reader, ``kalaro.client.wire``, so the clients stay cheap).
Each socket pings once per heartbeat so the gateway's idle reaper leaves it alone.
Prints the gateway's RSS (``VmRSS``) before and after, and KiB per socket. With
``--tables T`` (default 50; 0 to skip) it also runs a paced T-table phase before the
sockets connect and again while they are connected, and prints both p99s.

    .venv/bin/python bench/bench_sockets.py                 # 10,000 sockets, 50 tables
    .venv/bin/python bench/bench_sockets.py --sockets 2000 --tables 0
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

import uvloop

from kalaro.client.wire import Wire, open_wire
from kalaro.devstack import wait_for_port
from live_tables.driver import Phase, close_all, percentile, run_phase, setup_tables
from live_tables.stack import CpuMeter, admin_and_players, bench_stack

CLIENT_PROCESSES = 2
PING_EVERY = 20.0  # one heartbeat, as clients do (the gateway closes after three)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def raise_open_files(wanted: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


# --- a client process ------------------------------------------------------------------


async def client_main(url: str, token: str, count: int) -> int:
    """Open ``count`` sockets, say ``open N`` on stdout, ping until stdin closes."""
    raise_open_files(count + 256)
    wires: list[Wire] = []
    lost = 0

    def on_message(_text: str) -> None:
        pass

    def on_lost(_exc: Exception | None) -> None:
        nonlocal lost
        lost += 1

    async def one() -> None:
        wires.append(await open_wire(url, on_message, on_lost, token=token, timeout=60))

    for start in range(0, count, 100):
        await asyncio.gather(*(one() for _ in range(min(100, count - start))))
    gc.collect()
    gc.freeze()
    print(f"open {len(wires)} lost {lost}", flush=True)

    async def pinger() -> None:
        ref = 0
        while True:
            # Spread over the period: the gateway sees a steady trickle, not a burst.
            pause = PING_EVERY / max(1, len(wires))
            for wire in wires:
                ref += 1
                wire.send_text(f'{{"type":"ping","ref":{ref}}}')
                await asyncio.sleep(pause)

    task = asyncio.create_task(pinger())
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # the parent closes it: we are done
    task.cancel()
    print(f"lost {lost}", flush=True)
    return 0  # exiting closes the sockets


# --- the parent ------------------------------------------------------------------------


async def open_sockets(url: str, token: str, total: int) -> list[subprocess.Popen[str]]:
    clients = []
    share = -(-total // CLIENT_PROCESSES)
    for index in range(CLIENT_PROCESSES):
        count = min(share, total - index * share)
        if count <= 0:
            break
        command = [sys.executable, __file__, "--client", url, token, str(count)]
        clients.append(
            subprocess.Popen(  # noqa: ASYNC220 (started once, before anything is timed)
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
            )
        )
    loop = asyncio.get_running_loop()
    for client in clients:
        assert client.stdout is not None
        line = await loop.run_in_executor(None, client.stdout.readline)
        print(f"  client {client.pid}: {line.strip()}", file=sys.stderr)
        if not line.startswith("open "):
            raise RuntimeError(f"a client process failed: {line!r}")
    return clients


async def paced(drivers, meter: CpuMeter, tables: int, seconds: float, name: str) -> Phase:  # type: ignore[no-untyped-def]
    return await run_phase(drivers, Phase(name, tables, seconds), 1 / 2.0, meter)


async def main_async(args: argparse.Namespace) -> int:
    raise_open_files(args.sockets + 4096)  # the services inherit it
    var, stack = bench_stack()  # every idle socket is one player's: no limits
    stack.start_infrastructure()
    clients: list[subprocess.Popen[str]] = []
    try:
        stack.first_admin()
        stack.start_services(quiet=True)
        wait_for_port(stack.http_port, timeout=60)
        gateway = next(p.pid for s, p in stack.children if s.name == "gateway")
        host, by_gateway = await admin_and_players(stack)  # one gateway: by_gateway[0]
        players = by_gateway[0]
        drivers = []
        meter = CpuMeter(stack)
        phases: list[Phase] = []
        if args.tables:
            random.seed(2026)
            drivers = await setup_tables(by_gateway, args.tables)
            gc.collect()
            gc.freeze()
            await asyncio.sleep(3)
            phases.append(await paced(drivers, meter, args.tables, args.seconds, "no idle sockets"))
        # The gateway's own warm-up (imports, first requests) is behind us: the baseline.
        await asyncio.sleep(2)
        before = rss_kib(gateway)
        url = f"ws://127.0.0.1:{stack.http_port}/ws"
        started = time.perf_counter()
        clients = await open_sockets(url, players[1].access_token, args.sockets)
        opened = time.perf_counter() - started
        await asyncio.sleep(args.settle)  # let the welcome frames and allocations settle
        after = rss_kib(gateway)
        if args.tables:
            phases.append(
                await paced(drivers, meter, args.tables, args.seconds, f"{args.sockets} idle")
            )
        held = rss_kib(gateway)
        per = (after - before) / max(1, args.sockets)
        print(
            f"gateway pid {gateway}: RSS {before} KiB before, {after} KiB with "
            f"{args.sockets} idle sockets (opened in {opened:.1f} s), {held} KiB after "
            f"the paced phase"
        )
        print(f"idle socket: {per:.2f} KiB of gateway RSS each (goal: at most 10 KiB)")
        for phase in phases:
            print(
                f"{phase.tables} tables paced, {phase.name}: "
                f"{phase.actions_per_second:.0f} actions/s, "
                f"p50 {percentile(phase.latencies_ms, 50):.1f} ms, "
                f"p99 {percentile(phase.latencies_ms, 99):.1f} ms, "
                f"{len(phase.errors)} errors"
            )
        for client in clients:
            assert client.stdin is not None
            client.stdin.close()
        for client in clients:
            assert client.stdout is not None
            out = client.stdout.read()
            client.wait(timeout=30)
            if "lost 0" not in out:
                print(f"  client {client.pid} lost sockets: {out.strip()}")
        clients = []
        await close_all(drivers, [host, *players])
        print(f"load: {os.getloadavg()[0]:.1f} (1 min); service logs: {var}")
        return 0
    finally:
        for client in clients:
            client.kill()
        stack.stop()


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--client":
        return uvloop.run(client_main(sys.argv[2], sys.argv[3], int(sys.argv[4])))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sockets", type=int, default=10_000, help="idle sockets to open")
    parser.add_argument("--tables", type=int, default=50, help="paced tables (0: none)")
    parser.add_argument("--seconds", type=float, default=15.0, help="each paced phase")
    parser.add_argument("--settle", type=float, default=5.0, help="pause before measuring")
    return uvloop.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())
