"""Load: N Tongits tables of SDK clients making random legal moves through the gateway.

Starts the whole stack as ``make run`` does (own nats-server and redis-server, every
service as a process, SQLite in a scratch directory), then for each N drives N tables
of three WebSocket clients. Each table makes one move every ``1 / rate`` seconds; a
move's latency runs from sending the ``act`` frame to the moment the *last* of the
three seats has received the resulting view. Hands that end are re-readied and
re-dealt through the REST API (not timed). A final phase without think time gives the
saturation throughput. The floor, measured in the same run on the same nats-server:
raw NATS request/reply latency between two clients of this process.

    .venv/bin/python bench/bench_tables.py              # N = 50, 200, 500
    .venv/bin/python bench/bench_tables.py --quick      # N = 20, 50; short phases
    .venv/bin/python bench/bench_tables.py --anchor colyseus [--rounds 2]

``--anchor colyseus`` runs the Colyseus anchor (``../shared/anchors/colyseus``, needs Node
20 and its packages in the npm cache) interleaved with our phases: 500 tables paced and
50 tables without think time, each round alternating who goes first, and prints both
systems and the ratios. The two never run at the same time.

The peer to beat (from the issue): a Colyseus 0.16 relay of the same 3-seat workload
(no rules, no persistence) did 1,000 actions/s at 500 tables with p50 0.7 ms and p99
15–19 ms on this kind of machine, saturating near 8,000 actions/s.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import subprocess
import sys
import time
from pathlib import Path

import nats
import uvloop

from colyseus_anchor import DEFAULT_DIR, AnchorResult, AnchorUnavailable, ColyseusAnchor
from kalaro.bus.runner import tune_gc, watch_event_loop
from kalaro.client.transport import TRANSPORTS
from kalaro.devstack import wait_for_port
from live_tables.driver import Phase, TableDriver, close_all, percentile, run_phase, setup_tables
from live_tables.profile import PROFILED_PARTS, Recorder
from live_tables.report import Round, print_anchor, print_cpu, write_json
from live_tables.stack import BenchStack, CpuMeter, admin_and_players, bench_stack

SETTLE_SECONDS = 5.0  # after setting up the tables, before the first phase


def _now() -> str:
    return time.strftime("%H:%M:%S")


def machine_speed(steps: int = 2_000_000) -> float:
    """Milliseconds per million steps of a fixed pure-Python loop (lower is faster).

    This VM's speed drifts (the same loop took 0.9 to 1.6 s within an hour, idle, with
    no steal time shown), and every number in a run moves with it: printed beside the
    phases so that runs can be compared."""
    started = time.perf_counter()
    total = 0
    for step in range(steps):
        total += step
    return (time.perf_counter() - started) * 1e9 / steps


async def nats_floor(url: str, count: int) -> tuple[float, float]:
    """p50 and p99 (ms) of a raw request/reply between two connections, no work done."""
    server = await nats.connect(url)
    client = await nats.connect(url)

    async def echo(msg: nats.aio.msg.Msg) -> None:
        await msg.respond(msg.data)

    await server.subscribe("bench.echo", cb=echo)
    await server.flush()
    samples = []
    payload = b'{"type":"act","table_id":"t","version":1,"action":{"type":"draw"}}'
    for _ in range(count):
        started = time.perf_counter()
        await client.request("bench.echo", payload, timeout=2)
        samples.append((time.perf_counter() - started) * 1000)
    await client.close()
    await server.close()
    return percentile(samples, 50), percentile(samples, 99)


async def run_anchor_rounds(
    drivers: list[TableDriver],
    meter: CpuMeter,
    recorder: Recorder | None,
    anchor: ColyseusAnchor,
    args: argparse.Namespace,
    paced_tables: int,
    saturation_tables: int,
    seconds: float,
) -> list[Round]:
    """Each round: our paced phase and the anchor's, then both saturation phases; who goes
    first alternates between rounds so that the machine's drift falls on both."""
    warmup = 2.0 if args.quick else 5.0
    think_ms = 1000 / args.rate  # the anchor: uniform in [0.8, 1.2] x this
    rounds = []
    for number in range(1, args.rounds + 1):
        ours_first = number % 2 == 1

        async def ours(name: str, tables: int, think: float, number: int = number) -> Phase:
            print(f"  {_now()} round {number}: KaLaro {name} …", file=sys.stderr)
            phase = Phase(name, tables, seconds, speed_ms=machine_speed())
            return await measure(drivers, phase, think, meter, recorder)

        async def theirs(
            name: str, tables: int, think: float, number: int = number
        ) -> AnchorResult:
            print(f"  {_now()} round {number}: Colyseus {name} …", file=sys.stderr)
            return await anchor.run(tables, think, warmup, seconds)

        paced_name = f"{paced_tables} tables"
        sat_name = f"{saturation_tables} tables, no think"
        if ours_first:
            p = await ours(paced_name, paced_tables, 1 / args.rate)
            ap = await theirs(paced_name, paced_tables, think_ms)
            ap_sat = await theirs(sat_name, saturation_tables, 0)
            s = await ours(sat_name, saturation_tables, 0)
        else:
            ap = await theirs(paced_name, paced_tables, think_ms)
            p = await ours(paced_name, paced_tables, 1 / args.rate)
            s = await ours(sat_name, saturation_tables, 0)
            ap_sat = await theirs(sat_name, saturation_tables, 0)
        rounds.append((p, ap, s, ap_sat))
    return rounds


async def main_async(args: argparse.Namespace) -> int:
    anchor = None
    if args.anchor == "colyseus":
        anchor = ColyseusAnchor(Path(args.anchor_dir))
        try:
            node = anchor.prepare()
        except (AnchorUnavailable, OSError, subprocess.SubprocessError) as exc:
            anchor.cleanup()
            print(f"--anchor colyseus cannot run: {exc}", file=sys.stderr)
            return 2
        print(f"Colyseus anchor installed in {anchor.workdir} (Node {node})", file=sys.stderr)
    try:
        return await _main_async(args, anchor)
    finally:
        if anchor is not None:
            anchor.cleanup()


async def measure(
    drivers: list[TableDriver],
    phase: Phase,
    think: float,
    meter: CpuMeter,
    recorder: Recorder | None,
) -> Phase:
    """One of our phases, with flame graphs of it when ``--profile`` asked for them."""
    if recorder is not None:
        recorder.start(f"{phase.name}-{_now()}", phase.seconds)
    await run_phase(drivers, phase, think, meter)
    if recorder is not None:
        await asyncio.to_thread(recorder.wait)
    return phase


def start_recorder(args: argparse.Namespace, stack: BenchStack) -> Recorder | None:
    if args.profile is None:
        return None
    pids = {name: pid for part in PROFILED_PARTS for name, pid in stack.pids(part).items()}
    return Recorder(Path(args.profile), pids)


async def _main_async(args: argparse.Namespace, anchor: ColyseusAnchor | None) -> int:
    load_before = os.getloadavg()
    var, stack = bench_stack(args.gateways, args.engines)
    stack.start_infrastructure()
    try:
        stack.first_admin()
        stack.start_services()
        for port in stack.gateway_ports:
            wait_for_port(port, timeout=60)
        host, players = await admin_and_players(stack)
        clients = [host, *(c for per_gateway in players for c in per_gateway)]

        floor = await nats_floor(stack.nats.url, 2000)
        if anchor is not None:
            sizes = args.sizes or ([50] if args.quick else [500])
        else:
            sizes = args.sizes or ([20, 50] if args.quick else [50, 200, 500])
        saturation_tables = args.saturation_tables or (50 if anchor else max(sizes))
        seconds = args.seconds or (8.0 if args.quick else 20.0)
        setup = max(*sizes, saturation_tables)
        print(
            f"setting up {setup} tables over {args.gateways} gateway(s), "
            f"{args.engines} engine replica(s) …",
            file=sys.stderr,
        )
        drivers = await setup_tables(players, setup, args.transport)
        # The generator's own garbage collection must not show up as server latency:
        # everything built so far lives for the whole run.
        gc.collect()
        gc.freeze()
        tune_gc()  # as the services do: request-lived objects die young
        # 1,500 sockets just arrived: let the services' collectors deal with what that
        # left behind (full collections of 150-250 ms in the gateway) before measuring
        # the steady state.
        await asyncio.sleep(SETTLE_SECONDS)
        # Stalls of the generator itself would read as server latency: say when they happen.
        watcher = asyncio.create_task(watch_event_loop("load generator"))
        meter = CpuMeter(stack)
        recorder = start_recorder(args, stack)
        rounds: list[Round] = []
        if anchor is not None:
            rounds = await run_anchor_rounds(
                drivers, meter, recorder, anchor, args, max(sizes), saturation_tables, seconds
            )
            phases = [p for r in rounds for p in (r[0], r[2])]
            watcher.cancel()
            print_anchor(rounds, args.rate)
        else:
            phases = []
            for n in sizes:
                # (clock times, to line up with the services' logs in the scratch directory)
                print(f"  {_now()} {n} tables at {args.rate}/s each …", file=sys.stderr)
                phase = Phase(f"{n} tables", n, seconds, speed_ms=machine_speed())
                phases.append(await measure(drivers, phase, 1 / args.rate, meter, recorder))
            print(f"  {_now()} saturation (no think time) …", file=sys.stderr)
            saturation = Phase(f"{saturation_tables} tables, no think", saturation_tables, seconds)
            saturation.speed_ms = machine_speed()
            phases.append(await measure(drivers, saturation, 0, meter, recorder))
            watcher.cancel()
            print_phases(phases, floor, args)
        print_cpu(phases)
        print(
            "machine speed before each phase (ms per million loop steps, lower is faster): "
            + ", ".join(f"{p.name} {p.speed_ms:.0f}" for p in phases)
        )
        print(
            "load average before each phase: "
            + ", ".join(f"{p.name} {p.load_average[0]:.1f}" for p in phases)
        )
        errors = [e for p in phases for e in p.errors]
        if errors:
            print(f"first errors: {errors[:5]}")
        if args.json:
            topology = {"gateways": args.gateways, "engines": args.engines}
            write_json(Path(args.json), topology, phases, rounds, floor, load_before)
            print(f"results: {args.json}")
        await close_all(drivers, clients)
        print(f"service logs: {var}")
        return 0
    finally:
        stack.stop()


def print_phases(phases: list[Phase], floor: tuple[float, float], args: argparse.Namespace) -> None:
    print(
        f"\nKaLaro live tables ({args.gateways} gateway(s), {args.engines} engine replica(s)): "
        "send action → last of 3 seats has the new view"
    )
    print(f"raw NATS request/reply floor (same run): p50 {floor[0]:.2f} ms, p99 {floor[1]:.2f} ms")
    header = (
        f"{'phase':<24}{'actions/s':>11}{'p50 ms':>9}{'p99 ms':>9}{'hands':>7}{'errors':>8}"
        f"{'refused':>9}"
    )
    print(header)
    print("-" * len(header))
    for phase in phases:
        p50 = percentile(phase.latencies_ms, 50)
        p99 = percentile(phase.latencies_ms, 99)
        print(
            f"{phase.name:<24}{phase.actions_per_second:>11.0f}{p50:>9.2f}{p99:>9.2f}"
            f"{phase.hands:>7}{len(phase.errors):>8}{phase.refused_deals:>9}"
        )
    if args.slowest:
        for phase in phases:
            ranked = sorted(
                zip(phase.latencies_ms, phase.kinds, phase.sent_at, strict=True), reverse=True
            )
            top = ranked[: max(1, len(ranked) // 100)]
            print(
                f"slowest 1% of {phase.name}: "
                + ", ".join(f"{k} {ms:.0f}" for ms, k, _ in top[:12])
            )
            # When they were sent, to find the stall in the services' logs.
            sent = sorted({time.strftime("%H:%M:%S", time.localtime(t)) for *_, t in top})
            print(f"  sent during: {', '.join(sent[:12])}")
    goal = next((p for p in phases if p.tables == 500 and p.paced), None)
    if goal is not None:
        ok = (
            goal.actions_per_second >= 950  # "about 1,000": within 5%
            and percentile(goal.latencies_ms, 99) <= 20
            and not goal.errors
        )
        print(
            f"goal (500 tables, ~1,000 actions/s, p99 ≤ 20 ms, no errors): "
            f"{'met' if ok else 'not met'}; Colyseus peer: 1,000/s, p50 0.7, p99 15–19 ms"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small N and short phases")
    parser.add_argument("--rate", type=float, default=2.0, help="actions per second per table")
    parser.add_argument("--sizes", type=int, nargs="+", help="table counts (default 50 200 500)")
    parser.add_argument("--seconds", type=float, help="length of each phase")
    parser.add_argument("--slowest", action="store_true", help="show the slowest 1%% of moves")
    parser.add_argument(
        "--saturation-tables", type=int, help="tables in the no-think phase (default: largest N)"
    )
    parser.add_argument(
        "--anchor", choices=["colyseus"], help="run the Colyseus anchor interleaved (needs Node)"
    )
    parser.add_argument(
        "--anchor-dir", default=str(DEFAULT_DIR), help="the anchor's directory (read only)"
    )
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds with --anchor")
    parser.add_argument("--gateways", type=int, default=1, help="gateway processes (default 1)")
    parser.add_argument(
        "--engines", type=int, default=1, help="replicas of the Tongits engine (default 1)"
    )
    parser.add_argument("--json", metavar="FILE", help="write the figures to FILE as JSON")
    parser.add_argument(
        "--profile", metavar="DIR", help="py-spy flame graphs of gateways and engines per phase"
    )
    parser.add_argument(
        "--transport",
        choices=TRANSPORTS,
        default="fast",
        help="the SDK socket's transport (default: its fast reader, which costs the "
        "generator least; the SDK's own default is websockets)",
    )
    # The generator runs on the same two cores as the stack: give it the services' loop.
    return uvloop.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())
