"""The load: tables of three seated SDK sockets making random legal moves, and a phase's
samples (latency from sending a move to the last seat having the resulting view)."""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import random
import time
from dataclasses import dataclass, field

from kalaro.client import ApiError, KalaroClient
from kalaro.client.socket import FrameError, SeatView, TableSocket
from kalaro.client.transport import Transport
from live_tables.stack import LOAD_GENERATOR, CpuMeter, part_of


def percentile(samples: list[float], q: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


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
    kernel: dict[str, float] = field(default_factory=dict)  # process -> of which system
    # process -> read calls, write calls, bytes written
    io: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    speed_ms: float = 0.0  # machine_speed() just before the phase
    load_average: tuple[float, float, float] = (0.0, 0.0, 0.0)  # just before the phase

    @property
    def actions_per_second(self) -> float:
        return len(self.latencies_ms) / self.seconds

    @property
    def paced(self) -> bool:
        return "no think" not in self.name

    @property
    def server_cpu_ms_per_action(self) -> float:
        """CPU of every process of the stack (not the load generator) per action."""
        return sum(self.cpu_ms_per_action_by_part().values())

    def cpu_ms_per_action_by_part(self) -> dict[str, float]:
        """Server CPU per action, by part (gateway, engine, nats, redis, lobby, …): the
        replicas of a part summed, the load generator left out."""
        parts: dict[str, float] = {}
        for name, used in self.cpu.items():
            if name != LOAD_GENERATOR:
                parts[part_of(name)] = parts.get(part_of(name), 0.0) + used
        actions = max(1, len(self.latencies_ms))
        return {k: v / actions * 1000 for k, v in sorted(parts.items(), key=lambda kv: -kv[1])}

    def kernel_share_by_part(self) -> dict[str, float]:
        """The share of each part's CPU spent in the kernel (system calls: the socket
        reads and writes of the hops, epoll), the load generator left out."""
        used: dict[str, list[float]] = {}
        for name, total in self.cpu.items():
            if name != LOAD_GENERATOR and name in self.kernel:
                pair = used.setdefault(part_of(name), [0.0, 0.0])
                pair[0] += self.kernel[name]
                pair[1] += total
        return {part: k / t for part, (k, t) in used.items() if t > 0}

    def io_per_action_by_part(self) -> dict[str, dict[str, float]]:
        """Read and write system calls and bytes written per action, by part."""
        parts: dict[str, list[int]] = {}
        for name, counts in self.io.items():
            if name != LOAD_GENERATOR:
                total = parts.setdefault(part_of(name), [0, 0, 0])
                for i, n in enumerate(counts):
                    total[i] += n
        actions = max(1, len(self.latencies_ms))
        return {
            part: {"reads": r / actions, "writes": w / actions, "bytes_written": b / actions}
            for part, (r, w, b) in parts.items()
        }


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


async def setup_tables(
    players: list[list[KalaroClient]], count: int, transport: Transport = "fast"
) -> list[TableDriver]:
    """``count`` tables of the three players; ``players[g][i]`` is player i signed in at
    gateway g. Sockets go to the gateways in turn (socket k of the run to gateway
    k mod N), as a balancer would spread them: with two or more gateways no table has
    every seat on one gateway."""
    drivers = []
    rng = random.Random(2026)
    host = players[0][0]
    sockets_made = 0
    for _ in range(count):
        # Clocks long enough that a table idle while the anchor runs (a minute or two)
        # does not time its players out; a move costs the same with any clock length.
        options = {"fight_seconds": 600, "turn_seconds": 600}
        table = (await host.create_table("tongits", 0, options=options)).table
        sockets: dict[int, TableSocket] = {}
        for player in players[0]:
            await player.sit(table.table_id)
        for i in range(len(players[0])):
            player = players[sockets_made % len(players)][i]
            sockets_made += 1
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
    phase.load_average = os.getloadavg()
    meter.start()
    tasks = [asyncio.create_task(d.run(phase, think, stop)) for d in drivers[: phase.tables]]
    await asyncio.sleep(phase.seconds)
    used = meter.used()
    phase.cpu = {name: user + system for name, (user, system) in used.items()}
    phase.kernel = {name: system for name, (_, system) in used.items()}
    phase.io = meter.io_used()
    stop.set()
    for outcome in await asyncio.gather(*tasks, return_exceptions=True):
        if isinstance(outcome, BaseException):  # a table that stopped playing is an error
            phase.errors.append(f"table stopped: {outcome!r}")
    return phase


async def close_all(drivers: list[TableDriver], clients: list[KalaroClient]) -> None:
    """Close every table socket, then every client: the stack sees clean goodbyes."""
    for driver in drivers:
        for socket in driver.sockets.values():
            await socket.close()
    for client in clients:
        await client.close()
