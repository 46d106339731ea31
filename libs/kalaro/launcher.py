"""``make run``: the whole system on loopback, in one terminal.

Starts nats-server (JetStream) and redis-server with their data under ``var/``
(on the standard ports when free, else on free ones — never failing on a taken
port), makes sure a first admin exists, starts every service as its own process
with prefixed logs, prints where to go, and on Ctrl-C stops everything in order.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from kalaro.devstack import (
    NatsServer,
    RedisServer,
    die_with_parent,
    free_port,
    port_is_free,
    wait_for_port,
)
from kalaro.settings import load_settings


@dataclass(frozen=True)
class ServiceSpec:
    name: str  # also the docker-compose service name
    module: str  # run as ``python -m <module> <args>``
    args: tuple[str, ...] = ()


#: Stopped first by ``make run``: what clients reach, before what it calls.
EDGE = frozenset({"gateway", "bots"})

# Every deployable process. docker-compose.yml names the same services (a test checks).
SERVICES: tuple[ServiceSpec, ...] = (
    ServiceSpec("auth", "services.auth"),
    ServiceSpec("wallet", "services.wallet"),
    ServiceSpec("history", "services.history"),
    ServiceSpec("ranked", "services.ranked"),  # issue 34: ratings, the ranked queue
    ServiceSpec("lobby", "services.lobby"),
    ServiceSpec("bots", "services.bots"),
    ServiceSpec("engine-tongits", "services.engine", ("--game", "tongits")),
    ServiceSpec("engine-mahjong", "services.engine", ("--game", "mahjong")),
    ServiceSpec("engine-kawuxing", "services.engine", ("--game", "kawuxing")),
    ServiceSpec("gateway", "services.gateway"),
)

FIRST_ADMIN_EMAIL = "admin@kalaro.local"
_COLOURS = ("36", "33", "35", "32", "34", "31", "96", "93")


def _prefix_output(name: str, colour: str, stream: object, width: int) -> None:
    tty = sys.stdout.isatty()
    label = f"{name:<{width}} |"
    if tty:
        label = f"\033[{colour}m{label}\033[0m"
    for raw in iter(stream.readline, b""):  # type: ignore[attr-defined]
        sys.stdout.write(f"{label} {raw.decode(errors='replace').rstrip()}\n")
        sys.stdout.flush()


class Stack:
    def __init__(self, var_dir: Path) -> None:
        self.var = var_dir
        self.var.mkdir(parents=True, exist_ok=True)
        self.nats = NatsServer(self.var / "nats", port=4222)
        self.redis = RedisServer(self.var / "redis", port=6379)
        self.children: list[tuple[ServiceSpec, subprocess.Popen[bytes]]] = []
        settings = load_settings()
        self.http_port = settings.http_port if port_is_free(settings.http_port) else free_port()
        self.database_url = os.environ.get("DATABASE_URL") or os.environ.get(
            "KALARO_DATABASE_URL", f"sqlite+aiosqlite:///{self.var / 'kalaro.db'}"
        )

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            KALARO_NATS_URL=self.nats.url,
            # The Unix socket when its path is short enough: cheaper than loopback TCP.
            KALARO_REDIS_URL=self.redis.unix_url or self.redis.url,
            KALARO_DATABASE_URL=self.database_url,
            KALARO_VAR_DIR=str(self.var),
            KALARO_JWT_PRIVATE_KEY_FILE=str(self.var / "keys" / "jwt-ed25519.pem"),
            KALARO_HTTP_PORT=str(self.http_port),
            PYTHONUNBUFFERED="1",
        )
        env.pop("DATABASE_URL", None)
        return env

    def start_infrastructure(self) -> None:
        print(f"starting nats-server on {self.nats.url} (JetStream, data in {self.nats.data_dir})")
        self.nats.start()
        print(f"starting redis-server on {self.redis.url} (data in {self.redis.data_dir})")
        self.redis.start()

    def first_admin(self) -> str:
        """Create the first admin once; its password is random and kept in var/ (0600)."""
        credentials = self.var / "first-admin.txt"
        if credentials.exists():
            return f"sign in as the first admin with the credentials in {credentials}"
        email = os.environ.get("KALARO_ADMIN_EMAIL") or FIRST_ADMIN_EMAIL
        password = os.environ.get("KALARO_ADMIN_PASSWORD") or secrets.token_urlsafe(15)
        subprocess.run(
            [sys.executable, "-m", "services.auth", "create-admin",
             "--email", email, "--name", "Admin", "--password", password],
            env=self.env(), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        credentials.write_text(f"email: {email}\npassword: {password}\n")
        credentials.chmod(0o600)
        return f"first admin: {email} / {password}  (also saved in {credentials})"

    def start_services(self, *, quiet: bool = False) -> None:
        """Start every service; ``quiet`` sends their logs to ``var/<name>.log`` instead."""
        width = max(len(s.name) for s in SERVICES)
        for i, spec in enumerate(SERVICES):
            output = open(self.var / f"{spec.name}.log", "ab") if quiet else subprocess.PIPE  # noqa: SIM115
            process = subprocess.Popen(
                [sys.executable, "-m", spec.module, *spec.args],
                env=self.env(),
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C reaches us; we stop children in order
                preexec_fn=die_with_parent,  # and if we are killed, they go too
            )
            self.children.append((spec, process))
            if quiet:
                continue
            colour = _COLOURS[i % len(_COLOURS)]
            threading.Thread(
                target=_prefix_output,
                args=(spec.name, colour, process.stdout, width),
                daemon=True,
            ).start()

    def stop(self) -> None:
        """The way in first (the gateway drains its requests while the services still
        answer them; the bots go with it), then the services, then Redis and NATS."""
        edge = [c for c in self.children if c[0].name in EDGE]
        self._stop_wave(edge)
        self._stop_wave([c for c in self.children if c[0].name not in EDGE])
        self.redis.stop()
        self.nats.stop()

    @staticmethod
    def _stop_wave(children: list[tuple[ServiceSpec, subprocess.Popen[bytes]]]) -> None:
        for _, process in children:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for spec, process in children:
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                print(f"{spec.name} did not stop in time; killing it")
                process.kill()

    def dead_child(self) -> ServiceSpec | None:
        for spec, process in self.children:
            if process.poll() is not None:
                return spec
        return None


def run() -> int:
    stack = Stack(Path(os.environ.get("KALARO_VAR_DIR", "var")).resolve())
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    try:
        stack.start_infrastructure()
        admin = stack.first_admin()
        stack.start_services()
        wait_for_port(stack.http_port, timeout=60)
        url = f"http://127.0.0.1:{stack.http_port}"
        print(
            f"\n  KaLaro is up: {url}\n  API docs:     {url}/schema\n  {admin}\n"
            "  Ctrl-C stops everything.\n",
            flush=True,
        )
        while not stopping.is_set():
            dead = stack.dead_child()
            if dead is not None:
                print(f"{dead.name} exited unexpectedly; stopping the stack", file=sys.stderr)
                return 1
            time.sleep(0.5)
        return 0
    except KeyboardInterrupt:
        return 0
    finally:
        print("stopping…", flush=True)
        stack.stop()
        print("stopped.")
