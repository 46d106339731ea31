"""The faults: kill -9 one process (or NATS node, or Redis) at a time, then restart it;
or pause one (SIGSTOP, as a long GC pause, a stalled VM or a swapped-out process would)
and let it go on (SIGCONT) after its peers have given up on it.

NATS faults name a node, or ``leader``: whichever node leads the RESULTS stream (hand
outcomes on their way to the wallet) at that moment. One NATS fault also wipes the
node's JetStream directory while it is down, as a lost disk would.

A pause lasts ``FROZEN_SECONDS``: longer than JetStream's ack wait (a paused wallet's
outcomes are redelivered to the other wallet), the engines' deadline lease (the other
replica fires the timers) and a stream leader's election timeout, so the paused process
wakes up holding work that others have done meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import time
from dataclasses import dataclass, field

import nats

from kalaro.proto import subjects
from tests.chaos.stack import ChaosStack

STREAMS = (subjects.RESULTS_STREAM, subjects.EVENTS_STREAM)
FROZEN_SECONDS = 8.0


@dataclass
class Fault:
    kind: str  # nats, redis, or a service: engine, wallet, lobby, gateway
    target: str  # node name (n0.., or "leader"), "redis", or a replica name
    wipe: bool = False
    pause: bool = False  # SIGSTOP, then SIGCONT: the process lives on, late
    at: float = 0.0  # wall clock of the kill (or the pause)
    back_at: float = 0.0  # wall clock once restarted (and, for NATS, JetStream answers)
    leader_of: list[str] = field(default_factory=list)  # streams the killed node led
    error: str = ""

    @property
    def verb(self) -> str:
        return f"SIGSTOP {FROZEN_SECONDS:.0f}s" if self.pause else "kill -9"

    def label(self) -> str:
        extra = " (+ JetStream dir wiped)" if self.wipe else ""
        leads = f" [leader of {', '.join(self.leader_of)}]" if self.leader_of else ""
        paused = " (paused)" if self.pause else ""
        return f"{self.kind} {self.target}{paused}{extra}{leads}"


async def stream_report(url: str) -> dict[str, dict[str, object]]:
    """Each stream's replica count, leader and peers, as the cluster reports them."""
    report: dict[str, dict[str, object]] = {}
    nc = await nats.connect(url.split(","), connect_timeout=2, max_reconnect_attempts=2)
    try:
        js = nc.jetstream(timeout=3)
        for name in STREAMS:
            try:
                info = await js.stream_info(name)
            except Exception as exc:
                report[name] = {"error": f"{type(exc).__name__}: {exc}"}
                continue
            cluster = info.cluster
            report[name] = {
                "replicas": info.config.num_replicas,
                "leader": cluster.leader if cluster else None,
                "peers": [p.name for p in (cluster.replicas or [])] if cluster else [],
                "messages": info.state.messages,
            }
    finally:
        with contextlib.suppress(Exception):
            await nc.close()
    return report


def short_plan(games: tuple[str, ...]) -> list[Fault]:
    return [
        Fault("nats", "leader"),
        Fault("engine", f"engine-{games[0]}-a"),
        Fault("nats", "other", wipe=True),
        Fault("wallet", "wallet-a"),
        Fault("nats", "other"),
        Fault("lobby", "lobby-b"),
        Fault("gateway", "gateway-a"),
        Fault("redis", "redis"),
        Fault("wallet", "wallet-b", pause=True),
        Fault("engine", f"engine-{games[-1]}-b", pause=True),
    ]


def long_plan(games: tuple[str, ...], rounds: int) -> list[Fault]:
    plan: list[Fault] = []
    for r in range(rounds):
        a, b = ("a", "b") if r % 2 == 0 else ("b", "a")
        plan += [Fault("nats", "leader")]
        plan += [Fault("engine", f"engine-{g}-{a}") for g in games]
        plan += [Fault("nats", "other", wipe=r == 0), Fault("wallet", f"wallet-{a}")]
        plan += [Fault("lobby", f"lobby-{b}"), Fault("nats", "other")]
        plan += [Fault("gateway", f"gateway-{a}"), Fault("redis", "redis")]
        plan += [Fault("wallet", f"wallet-{b}"), Fault("gateway", f"gateway-{b}")]
        # Paused, not killed: each kind once per round.
        plan += [Fault("nats", "leader", pause=True), Fault("wallet", f"wallet-{a}", pause=True)]
        plan += [Fault("engine", f"engine-{g}-{b}", pause=True) for g in games]
        plan += [Fault("lobby", f"lobby-{a}", pause=True), Fault("redis", "redis", pause=True)]
        plan += [Fault("gateway", f"gateway-{b}", pause=True)]
    return plan


class Injector:
    def __init__(self, stack: ChaosStack, *, pause: float, down: float) -> None:
        self.stack = stack
        self.pause = pause
        self.down = down
        self.done: list[Fault] = []
        self._nats_killed: set[str] = set()

    def _pick_node(self, fault: Fault, leaders: dict[str, str]) -> int:
        nodes = self.stack.cluster.nodes
        names = [n.server_name for n in nodes]
        if fault.target == "leader":
            leader = leaders.get(subjects.RESULTS_STREAM)
            if leader in names:
                return names.index(leader)
        # "other" (or no leader known): a node not killed yet, else the first
        for i, name in enumerate(names):
            if name not in self._nats_killed:
                return i
        return 0

    async def inject(self, fault: Fault) -> None:
        stack = self.stack
        leaders: dict[str, str] = {}
        if fault.kind == "nats":
            with contextlib.suppress(Exception):
                report = await asyncio.wait_for(stream_report(stack.cluster.url), 5)
                leaders = {k: str(v.get("leader")) for k, v in report.items()}
            index = self._pick_node(fault, leaders)
            node = stack.cluster.nodes[index]
            fault.target = node.server_name
            fault.leader_of = [s for s, leader in leaders.items() if leader == node.server_name]
            self._nats_killed.add(node.server_name)
        print(f"[chaos] {time.strftime('%H:%M:%S')} FAULT {fault.verb} {fault.label()}", flush=True)
        fault.at = time.time()
        try:
            if fault.pause and fault.kind == "nats":
                await self._freeze(node.process)
                await asyncio.to_thread(stack.cluster.wait_for_jetstream, 60)
            elif fault.pause and fault.kind == "redis":
                await self._freeze(stack.redis.process)
            elif fault.pause:
                stack.note(fault.target, "SIGSTOP")
                await self._freeze(stack.replicas[fault.target].process)
                stack.note(fault.target, "SIGCONT")
            elif fault.kind == "nats":
                node.kill()
                if fault.wipe:
                    node.wipe()
                await asyncio.sleep(self.down)
                await asyncio.to_thread(node.start)
                await asyncio.to_thread(stack.cluster.wait_for_jetstream, 60)
            elif fault.kind == "redis":
                stack.redis.kill()
                await asyncio.sleep(self.down)
                await asyncio.to_thread(stack.redis.start)
            else:
                stack.kill(fault.target)
                await asyncio.sleep(self.down)
                stack.start(fault.target)
        except Exception as exc:
            fault.error = f"{type(exc).__name__}: {exc}"
            print(f"[chaos] fault {fault.label()} failed: {fault.error}", flush=True)
        fault.back_at = time.time()
        self.done.append(fault)

    @staticmethod
    async def _freeze(process: subprocess.Popen[bytes] | None) -> None:
        """SIGSTOP for ``FROZEN_SECONDS``, then SIGCONT (whatever happens meanwhile)."""
        assert process is not None, "a process to pause must be running"
        process.send_signal(signal.SIGSTOP)
        try:
            await asyncio.sleep(FROZEN_SECONDS)
        finally:
            process.send_signal(signal.SIGCONT)

    async def run(self, plan: list[Fault]) -> list[Fault]:
        for fault in plan:
            await asyncio.sleep(self.pause)
            await self.inject(fault)
        return self.done
