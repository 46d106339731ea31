"""The Colyseus anchor (``../shared/anchors/colyseus``) run from ``bench_tables.py``.

The anchor directory is read-only and has no ``node_modules``: it is copied to a scratch
directory and installed there with ``npm ci --offline`` from its package-lock (the npm
cache must hold the packages: one ``npm ci`` with network access fills it). Each phase
starts a fresh ``node server.js`` and runs ``node load.js`` against it, as the anchor's
``run.sh`` does, and reads the JSON result the load generator writes.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from kalaro.devstack import free_port, port_is_free

# ``shared/`` sits beside the checkout (/work/main) or beside the worktrees' folder
# (/work/wt/<name>): the first that has the anchor.
_CANDIDATES = [p / "shared" / "anchors" / "colyseus" for p in Path(__file__).resolve().parents[2:4]]
DEFAULT_DIR = next((c for c in _CANDIDATES if c.is_dir()), _CANDIDATES[0])
ANCHOR_FILES = (".npmrc", "package.json", "package-lock.json", "server.js", "load.js")


class AnchorUnavailable(RuntimeError):
    """The anchor cannot run here; the message says why."""


@dataclass
class AnchorResult:
    tables: int
    think_ms: float
    actions_per_second: float
    p50_ms: float
    p99_ms: float
    errors: int
    cpu_ms_per_action: float  # server process only, user + system
    server_cpu_share: float  # of one core
    raw: dict[str, object]


class ColyseusAnchor:
    def __init__(self, source: Path) -> None:
        self.source = source.resolve()
        self.workdir: Path | None = None

    def prepare(self) -> str:
        """Copy and install the anchor; returns the Node version. Raises AnchorUnavailable."""
        node, npm = shutil.which("node"), shutil.which("npm")
        if node is None or npm is None:
            raise AnchorUnavailable("node and npm are needed for --anchor colyseus (not on PATH)")
        missing = [f for f in ANCHOR_FILES if not (self.source / f).is_file()]
        if missing:
            raise AnchorUnavailable(f"{self.source} lacks {', '.join(missing)}")
        version = subprocess.run([node, "-v"], capture_output=True, text=True, check=False)
        major = version.stdout.strip().lstrip("v").split(".")[0]
        if not major.isdigit() or not 20 <= int(major) < 22:
            found = version.stdout.strip()
            raise AnchorUnavailable(f"the anchor pins Colyseus 0.16: Node 20 needed, not {found}")
        self.workdir = Path(tempfile.mkdtemp(prefix="kalaro-colyseus-"))
        for name in ANCHOR_FILES:
            target = self.workdir / name
            shutil.copyfile(self.source / name, target)
            target.chmod(target.stat().st_mode | stat.S_IWUSR)
        install = subprocess.run(
            [npm, "ci", "--offline", "--no-audit", "--no-fund"],
            cwd=self.workdir,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if install.returncode != 0:
            tail = " | ".join((install.stderr or install.stdout).strip().splitlines()[-3:])
            raise AnchorUnavailable(
                "npm ci --offline could not install the anchor's packages from the npm cache "
                f"({tail}); run `npm ci` once in a copy of {self.source} with network access"
            )
        return version.stdout.strip()

    def cleanup(self) -> None:
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)

    async def run(
        self, tables: int, think_ms: float, warmup: float, seconds: float
    ) -> AnchorResult:
        assert self.workdir is not None, "prepare() first"
        port = _port_pair()
        out = self.workdir / f"result-{tables}-{think_ms:.0f}-{time.monotonic_ns()}.json"
        env = {**os.environ, "NODE_ENV": "production", "PORT": str(port)}
        log = (self.workdir / f"server-{port}.log").open("wb")
        server = await asyncio.create_subprocess_exec(
            "node", "server.js", cwd=self.workdir, env=env, stdout=log, stderr=log
        )
        try:
            await _wait_port(port + 1, 30)
            load = await asyncio.create_subprocess_exec(
                "node",
                "load.js",
                "--tables", str(tables),
                "--think", str(think_ms),
                "--warmup", str(warmup),
                "--duration", str(seconds),
                "--port", str(port),
                "--server-pid", str(server.pid),
                "--out", str(out),
                cwd=self.workdir,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )  # fmt: skip
            try:
                output, _ = await asyncio.wait_for(load.communicate(), warmup + seconds + 180)
            except TimeoutError as exc:
                load.kill()
                await load.wait()
                raise AnchorUnavailable(f"the load generator hung ({tables} tables)") from exc
            if load.returncode != 0 or not out.is_file():
                tail = " | ".join(output.decode(errors="replace").strip().splitlines()[-3:])
                raise AnchorUnavailable(f"the anchor's load generator failed: {tail}")
        finally:
            if server.returncode is None:
                server.terminate()
                try:
                    await asyncio.wait_for(server.wait(), 10)
                except TimeoutError:
                    server.kill()
                    await server.wait()
            log.close()
        raw = json.loads(out.read_text())
        latency = raw["latencyMs"]
        return AnchorResult(
            tables=tables,
            think_ms=think_ms,
            actions_per_second=float(raw["actionsPerS"]),
            p50_ms=float(latency["p50"]),
            p99_ms=float(latency["p99"]),
            errors=int(raw["errors"]["total"]) + int(raw.get("deadTables", 0)),
            cpu_ms_per_action=float(raw["serverCpuUsPerAction"]) / 1000,
            server_cpu_share=float(raw["serverCpuPct"]) / 100,
            raw=raw,
        )


def _port_pair() -> int:
    """A free port whose successor is free too (the anchor's stats endpoint is port + 1)."""
    for _ in range(100):
        port = free_port()
        if port < 65535 and port_is_free(port + 1):
            return port
    raise AnchorUnavailable("no pair of free ports")


async def _wait_port(port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            await asyncio.sleep(0.1)
    raise AnchorUnavailable(f"the anchor's server did not listen on {port} in {timeout:.0f} s")
