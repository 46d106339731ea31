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
import contextlib
import gc
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path

import nats
import uvloop

from colyseus_anchor import DEFAULT_DIR, AnchorResult, AnchorUnavailable, ColyseusAnchor
from kalaro.bus.runner import tune_gc, watch_event_loop
from kalaro.client import ApiError, KalaroClient
from kalaro.client.socket import FrameError, SeatView, TableSocket
from kalaro.client.transport import TRANSPORTS, Transport
from kalaro.devstack import wait_for_port
from kalaro.launcher import Stack

ADMIN_EMAIL = "bench-admin@kalaro.local"
ADMIN_PASSWORD = "bench admin passphrase 2026"
PLAYER_PASSWORD = "bench player passphrase 2026"
SETTLE_SECONDS = 5.0  # after setting up the tables, before the first phase


def _now() -> str:
    return time.strftime("%H:%M:%S")


def percentile(samples: list[float], q: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process so far (Linux ``/proc``), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """CPU used by each process of the stack (and the generator) during a phase."""

    def __init__(self, stack: Stack) -> None:
        self.pids: dict[str, int] = {"load generator": os.getpid()}
        for name, server in (("nats-server", stack.nats), ("redis-server", stack.redis)):
            if server.process is not None:
                self.pids[name] = server.process.pid
        for spec, process in stack.children:
            self.pids[spec.name] = process.pid
        self._start: dict[str, float] = {}

    def start(self) -> None:
        self._start = {n: c for n, p in self.pids.items() if (c := cpu_seconds(p)) is not None}

    def used(self) -> dict[str, float]:
        """CPU seconds per process since ``start``."""
        out = {}
        for name, before in self._start.items():
            now = cpu_seconds(self.pids[name])
            if now is not None:
                out[name] = now - before
        return out


@dataclass
class Phase:
    name: str
    tables: int
    seconds: float
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)  # action type per latency sample
    sent_at: list[float] = field(default_factory=list)  # wall clock per latency sample
    hands: int = 0
    refused_deals: int = 0  # ready/deal frames refused (e.g. the table was not back yet)
    cpu: dict[str, float] = field(default_factory=dict)  # process -> CPU seconds
    speed_ms: float = 0.0  # machine_speed() just before the phase

    @property
    def actions_per_second(self) -> float:
        return len(self.latencies_ms) / self.seconds

    @property
    def server_cpu_ms_per_action(self) -> float:
        """CPU of every process of the stack (not the load generator) per action."""
        used = sum(c for n, c in self.cpu.items() if n != "load generator")
        return used / max(1, len(self.latencies_ms)) * 1000


class TableDriver:
    """One table: three seated sockets, moves chosen at random from the legal ones."""

    def __init__(
        self,
        table_id: str,
        host_socket: TableSocket,
        sockets: dict[int, TableSocket],
        rng: random.Random,
    ) -> None:
        self.table_id = table_id
        self.host_socket = host_socket
        self.sockets = sockets  # seat -> socket of the player sitting there
        self.rng = rng
        self._expected = -1
        self._arrived: set[int] = set()
        self._all_arrived = asyncio.Event()
        self._last_arrival = 0.0
        self._new_view = asyncio.Event()
        for seat, socket in sockets.items():
            socket.view_listeners.append(self._listener(seat))

    def _listener(self, seat: int):  # type: ignore[no-untyped-def]
        def on_view(view: SeatView) -> None:
            if view.table_id != self.table_id:
                return
            self._new_view.set()
            if view.version >= self._expected and seat not in self._arrived:
                self._arrived.add(seat)
                if len(self._arrived) == len(self.sockets):
                    self._last_arrival = time.perf_counter()
                    self._all_arrived.set()

        return on_view

    def current(self) -> SeatView | None:
        views = [s.view(self.table_id) for s in self.sockets.values()]
        views = [v for v in views if v is not None]
        return max(views, key=lambda v: v.version) if views else None

    async def redeal(self) -> None:
        # On the players' own sockets, as an app would (no HTTP request per hand).
        for socket in self.sockets.values():
            await socket.ready(self.table_id, True, f"{self.rng.random()}")
        await self.host_socket.deal(self.table_id)

    async def run(self, phase: Phase, think: float, stop: asyncio.Event) -> None:
        # Start as if the room had been playing all along: the first move comes after
        # what is left of a think period seen from a random moment (a length-biased
        # gap, then a uniform point in it), so arrivals are the steady state's from the
        # start. All tables moving in the same millisecond put 2% of the samples at
        # ~0.5 s; a plain uniform start over one period briefly doubles up first and
        # second moves (up to ~1.5x the rate).
        low, high = 0.5 * think, 1.5 * think
        gap = math.sqrt(low * low + self.rng.random() * (high * high - low * low))
        await asyncio.sleep(self.rng.uniform(0, gap))
        while not stop.is_set():
            view = self.current()
            if view is None or view.view.get("result") is not None:
                if view is not None:
                    phase.hands += 1
                    # As an app does: offer Ready once the lobby shows the table waiting.
                    await self._wait_table_waiting(view.hand_id, stop)
                try:
                    await self.redeal()
                except (ApiError, FrameError) as exc:
                    phase.refused_deals += 1
                    if exc.code not in ("conflict",):
                        phase.errors.append(f"deal: {exc.code}")
                    await asyncio.sleep(0.1)
                    continue
                await self._wait_new_hand(view.hand_id if view else None, stop)
                continue
            to_act = view.view.get("to_act") or []
            if not to_act:
                self._new_view.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._new_view.wait(), 1)
                continue
            seat = to_act[0]
            socket = self.sockets[seat]
            own = socket.view(self.table_id)
            if own is None or own.version != view.version:
                await asyncio.sleep(0.001)
                continue
            legal = own.view.get("legal") or []
            if not legal:
                await asyncio.sleep(0.01)
                continue
            action = self.rng.choice(legal)
            self._expected = own.version + 1
            self._arrived = set()
            self._all_arrived.clear()
            started, sent_at = time.perf_counter(), time.time()
            try:
                await socket.act(self.table_id, action, version=own.version)
            except (FrameError, TimeoutError) as exc:
                phase.errors.append(f"act {action.get('type')}: {exc or 'no answer in 10 s'}")
                await asyncio.sleep(0.05)
                continue
            try:
                if not self._all_arrived.is_set():  # views usually beat the ack: no wait
                    await asyncio.wait_for(self._all_arrived.wait(), 10)
            except TimeoutError:
                missing = sorted(set(self.sockets) - self._arrived)
                held = [
                    (v.hand_id[-6:], v.version)
                    for seat in missing
                    if (v := self.sockets[seat].view(self.table_id)) is not None
                ]
                phase.errors.append(
                    f"act {action.get('type')}: seats {missing} had no view of version "
                    f"{self._expected} of hand {own.hand_id[-6:]} after 10 s (they hold {held})"
                )
                continue
            # Timed to the moment the last seat had the new view (the ack may come later,
            # e.g. after a finished hand's result is on its way to the wallet).
            phase.latencies_ms.append((self._last_arrival - started) * 1000)
            phase.kinds.append(action.get("type", "?"))
            phase.sent_at.append(sent_at)
            if think > 0:
                await asyncio.sleep(think * self.rng.uniform(0.5, 1.5))

    async def _wait_table_waiting(self, finished_hand: str, stop: asyncio.Event) -> None:
        def back() -> bool:
            table = self.host_socket.state(self.table_id).table
            return stop.is_set() or (
                table is not None and table.status == "waiting" and table.hand_id != finished_hand
            )

        with contextlib.suppress(TimeoutError):
            await self.host_socket.wait_for(back, 5)

    async def _wait_new_hand(self, old_hand: str | None, stop: asyncio.Event) -> None:
        deadline = time.monotonic() + 10
        while not stop.is_set() and time.monotonic() < deadline:
            view = self.current()
            if view is not None and view.hand_id != old_hand and view.view.get("result") is None:
                return
            self._new_view.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._new_view.wait(), 0.5)


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


async def setup_tables(
    host: KalaroClient, players: list[KalaroClient], count: int, transport: Transport = "fast"
) -> list[TableDriver]:
    drivers = []
    rng = random.Random(2026)
    for _ in range(count):
        # Clocks long enough that a table idle while the anchor runs (a minute or two)
        # does not time its players out; a move costs the same with any clock length.
        options = {"fight_seconds": 600, "turn_seconds": 600}
        table = (await host.create_table("tongits", 0, options=options)).table
        sockets: dict[int, TableSocket] = {}
        for player in players:
            await player.sit(table.table_id)
        for player in players:
            # The fast reader by default: the library's parser would be the generator's
            # bottleneck, and we measure the server (--transport websockets to compare).
            socket = player.table_socket(reconnect=False, keep_frames=False, transport=transport)
            await socket.connect()
            subscribed = await socket.subscribe(table.table_id)
            assert subscribed.seat is not None
            sockets[subscribed.seat] = socket
        # The first player hosts (one host per table, as in real life) and deals from
        # their own seat's socket.
        host_socket = sockets[0]
        driver = TableDriver(table.table_id, host_socket, sockets, random.Random(rng.random()))
        await driver.redeal()
        drivers.append(driver)
    return drivers


async def run_phase(
    drivers: list[TableDriver], phase: Phase, think: float, meter: CpuMeter
) -> Phase:
    stop = asyncio.Event()
    meter.start()
    tasks = [asyncio.create_task(d.run(phase, think, stop)) for d in drivers[: phase.tables]]
    await asyncio.sleep(phase.seconds)
    phase.cpu = meter.used()
    stop.set()
    for outcome in await asyncio.gather(*tasks, return_exceptions=True):
        if isinstance(outcome, BaseException):  # a table that stopped playing is an error
            phase.errors.append(f"table stopped: {outcome!r}")
    return phase


def print_cpu(phases: list[Phase]) -> None:
    """Where the two cores went: CPU milliseconds per action, per process."""
    names = [n for n, _ in sorted(phases[-1].cpu.items(), key=lambda kv: -kv[1])]
    names = [n for n in names if any(p.cpu.get(n, 0) / p.seconds > 0.01 for p in phases)]
    if not names:
        return
    print("\nCPU per action (ms), by process; last column: share of one core")
    header = f"{'process':<18}" + "".join(f"{p.name:>26}" for p in phases)
    print(header)
    print("-" * len(header))
    for name in [*names, "total"]:
        cells = []
        for phase in phases:
            used = sum(phase.cpu.values()) if name == "total" else phase.cpu.get(name, 0.0)
            actions = max(1, len(phase.latencies_ms))
            cells.append(f"{used / actions * 1000:>17.2f} ({used / phase.seconds:>4.0%})")
        print(f"{name:<18}" + "".join(f"{c:>26}" for c in cells))


def _cells(actions: float, p50: float, p99: float, errors: int, cpu_ms: float) -> str:
    return f"{actions:>9.0f}{p50:>8.2f}{p99:>8.2f}{errors:>5}{cpu_ms:>9.3f}"


def print_anchor(
    rounds: list[tuple[Phase, AnchorResult, Phase, AnchorResult]], rate: float
) -> None:
    """Both systems side by side, per round, and the issue's goals as ratios."""
    print("\nKaLaro vs the Colyseus anchor, interleaved in one run (ratios are KaLaro / Colyseus)")
    print("CPU ms/move: every server-side process (KaLaro: gateway, engine, lobby, wallet, ")
    print("nats-server, redis-server…; Colyseus: its one server process), load generators excluded")
    cols = f"{'actions/s':>9}{'p50':>8}{'p99':>8}{'err':>5}{'cpu ms':>9}"
    header = f"{'round / phase':<22}{'KaLaro':^39}{'Colyseus':^39}{'speed':>6}  ratios"
    print(header)
    print(f"{'':<22}{cols}{'':<2}{cols}")
    print("-" * 120)
    verdicts = []
    for number, (paced, a_paced, sat, a_sat) in enumerate(rounds, 1):
        for phase, anchor in ((paced, a_paced), (sat, a_sat)):
            p50 = percentile(phase.latencies_ms, 50)
            p99 = percentile(phase.latencies_ms, 99)
            ours = _cells(
                phase.actions_per_second,
                p50,
                p99,
                len(phase.errors),
                phase.server_cpu_ms_per_action,
            )
            theirs = _cells(
                anchor.actions_per_second,
                anchor.p50_ms,
                anchor.p99_ms,
                anchor.errors,
                anchor.cpu_ms_per_action,
            )
            ratios = (
                f"throughput {phase.actions_per_second / max(1e-9, anchor.actions_per_second):.2f}"
                f"  p99 {p99 / max(1e-9, anchor.p99_ms):.1f}"
                f"  cpu {phase.server_cpu_ms_per_action / max(1e-9, anchor.cpu_ms_per_action):.1f}"
            )
            print(
                f"{f'{number}: {phase.name}':<22}{ours}  {theirs}{phase.speed_ms:>6.0f}  {ratios}"
            )
        cpu_ratio = paced.server_cpu_ms_per_action / max(1e-9, a_paced.cpu_ms_per_action)
        sat_ratio = sat.actions_per_second / max(1e-9, a_sat.actions_per_second)
        p99_ratio = percentile(paced.latencies_ms, 99) / max(1e-9, a_paced.p99_ms)
        offered = 0.99 * rate * paced.tables  # 990/s at 500 tables, 2 per second each
        checks = {
            f"cpu/move {cpu_ratio:.1f}x (goal <= 2.5x)": cpu_ratio <= 2.5,
            f"saturation {sat_ratio:.2f}x (goal >= 0.5x)": sat_ratio >= 0.5,
            f"paced {paced.actions_per_second:.0f}/s (goal >= {offered:.0f})": (
                paced.actions_per_second >= offered
            ),
            f"paced p99 {p99_ratio:.1f}x (goal <= 1.5x)": p99_ratio <= 1.5,
            f"errors {len(paced.errors) + len(sat.errors)} (goal 0)": not (
                paced.errors or sat.errors
            ),
        }
        verdicts.append(all(checks.values()))
        print(
            f"  round {number} goals: "
            + "; ".join(f"{k} {'met' if ok else 'NOT met'}" for k, ok in checks.items())
        )
    print(f"issue 21 goals met in {sum(verdicts)} of {len(verdicts)} rounds")


async def run_anchor_rounds(
    drivers: list[TableDriver],
    meter: CpuMeter,
    anchor: ColyseusAnchor,
    args: argparse.Namespace,
    paced_tables: int,
    saturation_tables: int,
    seconds: float,
) -> list[tuple[Phase, AnchorResult, Phase, AnchorResult]]:
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
            return await run_phase(drivers, phase, think, meter)

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


def bench_stack() -> tuple[Path, Stack]:
    """A scratch directory and the stack a bench starts there (not started yet), with the
    services' limits off: thousands of simulated players on one address, the same three
    sitting at every one of hundreds of tables (a socket each) within seconds, and
    without think time moving faster than the 20 frames a second a person's socket may
    send (Colyseus's anchor has no such limit either)."""
    var = Path(tempfile.mkdtemp(prefix="kalaro-bench-"))
    os.environ.update(KALARO_ADMIN_EMAIL=ADMIN_EMAIL, KALARO_ADMIN_PASSWORD=ADMIN_PASSWORD)
    os.environ.update(KALARO_REST_ADDRESS_RATE="0", KALARO_REST_USER_RATE="0")
    os.environ.update(KALARO_WS_SOCKETS_PER_USER="0", KALARO_WS_FRAME_RATE="0")
    return var, Stack(var)


def mailed_verify_token(var: Path, email: str) -> str:
    """The token of the newest verification link written to ``var/mail`` for ``email``."""
    for path in sorted((var / "mail").glob("*.eml"), reverse=True):
        letter = message_from_bytes(path.read_bytes(), policy=default)
        if letter["To"] != email or not isinstance(letter, EmailMessage):
            continue
        match = re.search(r"/#/verify\?token=([A-Za-z0-9_-]+)", letter.get_content())
        if match:
            return match.group(1)
    raise RuntimeError(f"no verification link was mailed to {email}")


async def admin_and_players(stack: Stack) -> tuple[KalaroClient, list[KalaroClient]]:
    """The first admin, signed in once the gateway answers, and three new players."""
    base = f"http://127.0.0.1:{stack.http_port}"
    host = KalaroClient(base)
    for _ in range(100):
        try:
            await host.sign_in(ADMIN_EMAIL, ADMIN_PASSWORD)
            break
        except ApiError:
            await asyncio.sleep(0.2)
    players = []
    for i in range(3):
        player = KalaroClient(base)
        email = f"bench{i}@example.com"
        await player.sign_up(email, PLAYER_PASSWORD, f"Bench {i}")
        # Bet tables need a verified email: follow the link the stack wrote to var/mail.
        await player.verify_email(mailed_verify_token(stack.var, email))
        await player.refresh()
        players.append(player)
    return host, players


async def close_all(drivers: list[TableDriver], clients: list[KalaroClient]) -> None:
    """Close every table socket, then every client: the stack sees clean goodbyes."""
    for driver in drivers:
        for socket in driver.sockets.values():
            await socket.close()
    for client in clients:
        await client.close()


async def make_host(admin: KalaroClient, player: KalaroClient) -> None:
    """Grant ``player`` host access: tables are theirs to deal."""
    request = await player.request_host("load test")
    await admin.decide_host_request(request.request_id, True, "load test")
    await player.refresh()


async def _main_async(args: argparse.Namespace, anchor: ColyseusAnchor | None) -> int:
    var, stack = bench_stack()
    stack.start_infrastructure()
    try:
        stack.first_admin()
        stack.start_services(quiet=True)
        wait_for_port(stack.http_port, timeout=60)
        host, players = await admin_and_players(stack)
        await make_host(host, players[0])

        floor_p50, floor_p99 = await nats_floor(stack.nats.url, 2000)
        if anchor is not None:
            sizes = args.sizes or ([50] if args.quick else [500])
        else:
            sizes = args.sizes or ([20, 50] if args.quick else [50, 200, 500])
        saturation_tables = args.saturation_tables or (50 if anchor else max(sizes))
        seconds = args.seconds or (8.0 if args.quick else 20.0)
        setup = max(*sizes, saturation_tables)
        print(f"setting up {setup} tables …", file=sys.stderr)
        drivers = await setup_tables(players[0], players, setup, args.transport)
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
        if anchor is not None:
            rounds = await run_anchor_rounds(
                drivers, meter, anchor, args, max(sizes), saturation_tables, seconds
            )
            watcher.cancel()
            print_anchor(rounds, args.rate)
            errors = [e for r in rounds for p in (r[0], r[2]) for e in p.errors]
            if errors:
                print(f"first errors: {errors[:5]}")
            print_cpu([p for r in rounds for p in (r[0], r[2])])
            await close_all(drivers, [host, *players])
            print(f"service logs: {var}")
            return 0
        phases = []
        for n in sizes:
            # (clock times, to line up with the services' logs in the scratch directory)
            print(f"  {_now()} {n} tables at {args.rate}/s each …", file=sys.stderr)
            phase = Phase(f"{n} tables", n, seconds, speed_ms=machine_speed())
            phases.append(await run_phase(drivers, phase, 1 / args.rate, meter))
        print(f"  {_now()} saturation (no think time) …", file=sys.stderr)
        saturation = Phase(f"{saturation_tables} tables, no think", saturation_tables, seconds)
        saturation.speed_ms = machine_speed()
        phases.append(await run_phase(drivers, saturation, 0, meter))

        watcher.cancel()
        print("\nKaLaro live tables: send action → last of 3 seats has the new view")
        print(f"raw NATS request/reply floor (same run): p50 {floor_p50:.2f} ms, ", end="")
        print(f"p99 {floor_p99:.2f} ms")
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
        print_cpu(phases)
        print(
            "machine speed before each phase (ms per million loop steps, lower is faster): "
            + ", ".join(f"{p.name} {p.speed_ms:.0f}" for p in phases)
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
                seconds = sorted({time.strftime("%H:%M:%S", time.localtime(t)) for *_, t in top})
                print(f"  sent during: {', '.join(seconds[:12])}")
        errors = [e for p in phases for e in p.errors]
        if errors:
            print(f"first errors: {errors[:5]}")
        goal = next((p for p in phases if p.tables == 500 and "no think" not in p.name), None)
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
        await close_all(drivers, [host, *players])
        print(f"service logs: {var}")
        return 0
    finally:
        stack.stop()


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
