"""The stack under load, as production runs it: every service as its own process, with
N gateway processes and M replicas of the Tongits engine, and the CPU each one uses.

Moves take the production path (gateway → engine service over NATS), never the
gateway-local shortcut: a gateway behind a balancer almost never holds every seat of
a table, so ``KALARO_GATEWAY_LOCAL_MOVES`` is off whatever the environment says."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import replace
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path

from kalaro.client import ApiError, KalaroClient
from kalaro.devstack import die_with_parent, free_port
from kalaro.launcher import EDGE, SERVICES, ServiceSpec, Stack

ADMIN_EMAIL = "bench-admin@kalaro.local"
ADMIN_PASSWORD = "bench admin passphrase 2026"
PLAYER_PASSWORD = "bench player passphrase 2026"
LOAD_GENERATOR = "load generator"  # this process: measured, never counted as the server's
PLAYED_ENGINE = "engine-tongits"  # the bench's tables are Tongits: its engine is replicated


def part_of(process: str) -> str:
    """The part a process belongs to: replicas summed (``gateway-2`` → gateway, every
    game's engine → engine, nats-server → nats)."""
    if process.startswith(("gateway", "engine")):
        return process.split("-")[0]
    return {"nats-server": "nats", "redis-server": "redis"}.get(process, process)


class BenchStack(Stack):
    """``make run``'s stack with ``gateways`` gateway processes (each on its own port)
    and ``engines`` Tongits engine replicas; logs go to the scratch directory."""

    def __init__(self, var: Path, gateways: int = 1, engines: int = 1) -> None:
        super().__init__(var)
        self.gateways, self.engines = gateways, engines
        self.gateway_ports = [self.http_port, *(free_port() for _ in range(gateways - 1))]

    @property
    def gateway_urls(self) -> list[str]:
        return [f"http://127.0.0.1:{port}" for port in self.gateway_ports]

    def processes(self) -> list[tuple[ServiceSpec, dict[str, str]]]:
        """Each process to start (named ``gateway-2``, ``engine-tongits-1``… when a
        part has several) and what its environment adds."""
        out: list[tuple[ServiceSpec, dict[str, str]]] = []
        for spec in SERVICES:
            if spec.name == "gateway":
                for i, port in enumerate(self.gateway_ports, 1):
                    name = spec.name if self.gateways == 1 else f"{spec.name}-{i}"
                    out.append((replace(spec, name=name), {"KALARO_HTTP_PORT": str(port)}))
            elif spec.name == PLAYED_ENGINE:
                for i in range(1, self.engines + 1):
                    name = spec.name if self.engines == 1 else f"{spec.name}-{i}"
                    out.append((replace(spec, name=name), {}))
            else:
                out.append((spec, {}))
        return out

    def start_services(self, *, quiet: bool = True) -> None:
        del quiet  # always: each process's log is var/<name>.log
        for spec, extra in self.processes():
            log = open(self.var / f"{spec.name}.log", "ab")  # noqa: SIM115 - lives with it
            env = {**self.env(), **extra, "KALARO_GATEWAY_LOCAL_MOVES": "false"}
            process = subprocess.Popen(
                [sys.executable, "-m", spec.module, *spec.args],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=die_with_parent,
            )
            self.children.append((spec, process))

    def pids(self, part: str) -> dict[str, int]:
        """Running processes of one part (``gateway``, ``engine``…) by name."""
        return {
            spec.name: process.pid
            for spec, process in self.children
            if part_of(spec.name) == part and process.poll() is None
        }

    def stop(self) -> None:
        """As ``Stack.stop``: the gateways first, then the services, Redis and NATS."""
        edge = [c for c in self.children if part_of(c[0].name) in EDGE]
        self._stop_wave(edge)
        self._stop_wave([c for c in self.children if c not in edge])
        self.redis.stop()
        self.nats.stop()


def cpu_times(pid: int) -> tuple[float, float] | None:
    """User and system (kernel: system calls, the network stack) CPU seconds of a
    process so far (Linux ``/proc``), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def io_counts(pid: int) -> tuple[int, int, int] | None:
    """Read and write system calls so far, and bytes written (``/proc/<pid>/io``): a
    move's hops are mostly socket reads and writes (read, write, writev; not sendmsg)."""
    try:
        fields = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    except (OSError, ValueError):
        return None
    return int(fields["syscr"]), int(fields["syscw"]), int(fields["wchar"])


class CpuMeter:
    """CPU (and read/write system calls) of each process of the stack and the generator
    during a phase."""

    def __init__(self, stack: Stack) -> None:
        self.pids: dict[str, int] = {LOAD_GENERATOR: os.getpid()}
        for name, server in (("nats-server", stack.nats), ("redis-server", stack.redis)):
            if server.process is not None:
                self.pids[name] = server.process.pid
        for spec, process in stack.children:
            self.pids[spec.name] = process.pid
        self._start: dict[str, tuple[float, float]] = {}
        self._io: dict[str, tuple[int, int, int]] = {}

    def start(self) -> None:
        self._start = {n: t for n, p in self.pids.items() if (t := cpu_times(p)) is not None}
        self._io = {n: c for n, p in self.pids.items() if (c := io_counts(p)) is not None}

    def io_used(self) -> dict[str, tuple[int, int, int]]:
        """Read calls, write calls and bytes written per process since ``start``."""
        out = {}
        for name, before in self._io.items():
            now = io_counts(self.pids[name])
            if now is not None:
                out[name] = (now[0] - before[0], now[1] - before[1], now[2] - before[2])
        return out

    def used(self) -> dict[str, tuple[float, float]]:
        """User and system (kernel) CPU seconds per process since ``start``, from one
        read each, so the kernel's part is never more than the whole."""
        out = {}
        for name, (user, system) in self._start.items():
            now = cpu_times(self.pids[name])
            if now is not None:
                out[name] = (now[0] - user, now[1] - system)
        return out


def bench_stack(gateways: int = 1, engines: int = 1) -> tuple[Path, BenchStack]:
    """A scratch directory and the stack a bench starts there (not started yet), with the
    services' limits off: thousands of simulated players on one address, the same three
    sitting at every one of hundreds of tables (a socket each) within seconds, and
    without think time moving faster than the 20 frames a second a person's socket may
    send (Colyseus's anchor has no such limit either)."""
    var = Path(tempfile.mkdtemp(prefix="kalaro-bench-"))
    os.environ.update(KALARO_ADMIN_EMAIL=ADMIN_EMAIL, KALARO_ADMIN_PASSWORD=ADMIN_PASSWORD)
    os.environ.update(KALARO_REST_ADDRESS_RATE="0", KALARO_REST_USER_RATE="0")
    os.environ.update(KALARO_WS_SOCKETS_PER_USER="0", KALARO_WS_FRAME_RATE="0")
    return var, BenchStack(var, gateways, engines)


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


async def signed_in_admin(url: str) -> KalaroClient:
    """The first admin, signed in at ``url`` once that gateway answers."""
    admin = KalaroClient(url)
    for _ in range(100):
        try:
            await admin.sign_in(ADMIN_EMAIL, ADMIN_PASSWORD)
            return admin
        except ApiError:
            await asyncio.sleep(0.2)
    await admin.sign_in(ADMIN_EMAIL, ADMIN_PASSWORD)  # the last try's error is the answer
    return admin


async def admin_and_players(stack: BenchStack) -> tuple[KalaroClient, list[list[KalaroClient]]]:
    """The first admin and three new players, the first a host; ``players[g][i]`` is
    player i with a client of gateway g (the same tokens: signed in once)."""
    urls = stack.gateway_urls
    for url in urls[1:]:  # every gateway must reach auth before the sockets arrive
        await (await signed_in_admin(url)).close()
    host = await signed_in_admin(urls[0])
    players = []
    for i in range(3):
        player = KalaroClient(urls[0])
        email = f"bench{i}@example.com"
        await player.sign_up(email, PLAYER_PASSWORD, f"Bench {i}")
        # Bet tables need a verified email: follow the link the stack wrote to var/mail.
        await player.verify_email(mailed_verify_token(stack.var, email))
        await player.refresh()
        players.append(player)
    await make_host(host, players[0])
    by_gateway = [players]
    for url in urls[1:]:
        clients = [KalaroClient(url) for _ in players]
        for client, player in zip(clients, players, strict=True):
            client.tokens = player.tokens
        by_gateway.append(clients)
    return host, by_gateway


async def make_host(admin: KalaroClient, player: KalaroClient) -> None:
    """Grant ``player`` host access: tables are theirs to deal."""
    request = await player.request_host("load test")
    await admin.decide(request.approval_id, True, "load test")
    await player.refresh()
