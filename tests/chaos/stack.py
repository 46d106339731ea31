"""The replicated system on a 3-node NATS cluster, as separate processes we can kill -9.

One auth, and two replicas each of wallet, lobby, gateway and the engine of every game
played, all given every NATS node's URL and ``KALARO_STREAM_REPLICAS=3``; Redis with
``appendfsync always`` (a kill -9 loses no acknowledged write); SQLite or PostgreSQL.
Clients reach the two gateways through :class:`~tests.chaos.balancer.Balancer`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from kalaro.devstack import NatsCluster, RedisServer, die_with_parent, free_port, wait_for_port
from tests.chaos.balancer import Balancer
from tests.e2e.stack import ADMIN_EMAIL, ADMIN_PASSWORD


class FsyncRedis(RedisServer):
    """redis-server that fsyncs its append-only file on every write."""

    def command(self) -> list[str]:
        args = super().command()
        at = args.index("--appendfsync")
        args[at + 1] = "always"
        return args


@dataclass
class Replica:
    name: str  # distinct per replica: its log file is logs/<name>.log
    module: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0


class ChaosStack:
    def __init__(self, root: Path, database_url: str, games: tuple[str, ...]) -> None:
        self.root = root
        self.logs = root / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.database_url = database_url
        self.games = games
        self.cluster = NatsCluster(root / "nats")
        for node in self.cluster.nodes:
            node.log_file = self.logs / f"nats-{node.server_name}.log"
        self.redis = FsyncRedis(root / "redis", log_file=self.logs / "redis.log")
        unprefixed = ("DATABASE_URL", "NATS_URL", "REDIS_URL")  # would override ours
        self.env = {k: v for k, v in os.environ.items() if k not in unprefixed}
        self.env.update(
            KALARO_NATS_URL=self.cluster.url,
            KALARO_STREAM_REPLICAS="3",
            KALARO_REDIS_URL=self.redis.url,
            KALARO_DATABASE_URL=database_url,
            KALARO_VAR_DIR=str(root),
            KALARO_JWT_PRIVATE_KEY_FILE=str(root / "keys" / "jwt.pem"),
            KALARO_ADMIN_EMAIL=ADMIN_EMAIL,
            KALARO_ADMIN_PASSWORD=ADMIN_PASSWORD,
            KALARO_WELCOME_GRANT="1000",
            KALARO_WS_HEARTBEAT_SECONDS="5",
            KALARO_ACCESS_TOKEN_SECONDS="7200",  # a long run outlives the default 15 min
            # All the players share one address: keep the per-address REST limit well
            # above what they send.
            KALARO_REST_ADDRESS_RATE="1000",
            KALARO_REST_ADDRESS_BURST="3000",
            # The checks read every table and hand as one admin, as fast as they can.
            KALARO_REST_USER_RATE="1000",
            KALARO_REST_USER_BURST="3000",
            PYTHONUNBUFFERED="1",
        )
        self.gateway_ports = [free_port(), free_port()]
        self.replicas: dict[str, Replica] = {}
        self.replicas["auth"] = Replica("auth", "services.auth")
        for letter in "ab":
            self.replicas[f"wallet-{letter}"] = Replica(f"wallet-{letter}", "services.wallet")
            self.replicas[f"lobby-{letter}"] = Replica(f"lobby-{letter}", "services.lobby")
            for game in games:
                name = f"engine-{game}-{letter}"
                self.replicas[name] = Replica(name, "services.engine", ("--game", game))
        for letter, port in zip("ab", self.gateway_ports, strict=True):
            self.replicas[f"gateway-{letter}"] = Replica(
                f"gateway-{letter}", "services.gateway", env={"KALARO_HTTP_PORT": str(port)}
            )
        self.balancer = Balancer(self.gateway_ports)

    @property
    def base_url(self) -> str:
        """Where clients go: the balancer in front of both gateways."""
        return self.balancer.url

    # --- processes ---------------------------------------------------------------------
    def note(self, name: str, text: str) -> None:
        """A line in a replica's log, so a reader sees where we killed or started it."""
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        with open(self.logs / f"{name}.log", "a") as log:
            log.write(f"===== chaos {stamp} {text}\n")

    def start(self, name: str) -> None:
        replica = self.replicas[name]
        assert replica.process is None or replica.process.poll() is not None, name
        self.note(name, "start")
        log = open(self.logs / f"{name}.log", "ab")  # noqa: SIM115 - lives with the process
        replica.process = subprocess.Popen(
            [sys.executable, "-m", replica.module, *replica.args],
            env={**self.env, **replica.env},
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent,  # a killed test run leaves no services behind
        )
        replica.starts += 1

    def kill(self, name: str) -> None:
        """kill -9, as a crash would."""
        replica = self.replicas[name]
        assert replica.process is not None
        self.note(name, "kill -9")
        replica.process.send_signal(signal.SIGKILL)
        replica.process.wait()

    def dead(self) -> list[str]:
        """Replicas that exited without being killed by us (crashed)."""
        return [
            name
            for name, r in self.replicas.items()
            if r.process is not None and r.process.poll() not in (None, -signal.SIGKILL)
        ]

    def log_tail(self, name: str, chars: int = 3000) -> str:
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""

    # --- the whole thing ---------------------------------------------------------------
    async def start_all(self, timeout: float = 120) -> None:
        await asyncio.to_thread(self.cluster.start)
        await asyncio.to_thread(self.cluster.wait_for_jetstream, 60)
        await asyncio.to_thread(self.redis.start)
        self.start("auth")  # first: it makes the signing key and the first admin
        for name in self.replicas:
            if name != "auth":
                self.start(name)
        await self.balancer.start()
        await self.wait_ready(timeout)

    async def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for port in self.gateway_ports:
            await asyncio.to_thread(wait_for_port, port, max(1.0, deadline - time.monotonic()))
        body = {"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}
        async with httpx.AsyncClient(timeout=10) as client:
            for port in self.gateway_ports:  # each gateway must reach auth over NATS
                while True:
                    try:
                        r = await client.post(
                            f"http://127.0.0.1:{port}/api/auth/sign-in", json=body
                        )
                        if r.status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    crashed = self.dead()
                    if crashed:
                        logs = "\n".join(f"--- {n}\n{self.log_tail(n, 2500)}" for n in crashed)
                        raise RuntimeError(f"died while starting: {', '.join(crashed)}\n{logs}")
                    if time.monotonic() > deadline:
                        logs = "\n".join(
                            f"--- {n}\n{self.log_tail(n, 1500)}" for n in self.replicas
                        )
                        raise RuntimeError(f"stack not ready in {timeout}s\n{logs}")
                    await asyncio.sleep(0.3)

    async def stop_all(self) -> None:
        await self.balancer.stop()
        for replica in self.replicas.values():
            if replica.process is not None and replica.process.poll() is None:
                replica.process.terminate()
        for replica in self.replicas.values():
            if replica.process is None:
                continue
            try:
                await asyncio.to_thread(replica.process.wait, 15)
            except subprocess.TimeoutExpired:
                replica.process.kill()
                replica.process.wait()
        self.redis.stop()
        self.cluster.stop()
