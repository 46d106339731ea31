"""The live-table services the browser tests need, started beside the e2e stack.

The e2e ``stack`` fixture starts every service in :data:`kalaro.launcher.SERVICES`.
Tables also need the lobby and one engine worker per game; while the launcher does
not list them yet, :func:`ensure_table_services` starts whichever is missing, the same
way (``python -m <module>`` with the stack's environment), and stops them afterwards.

Run this file directly for a development stack: ``python -m tests.e2e.browser.services``.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from kalaro.launcher import SERVICES
from tests.e2e.stack import Stack


@dataclass(frozen=True)
class Extra:
    name: str
    module: str
    env: dict[str, str] = field(default_factory=dict)


TABLE_SERVICES = (
    Extra("lobby", "services.lobby"),
    Extra("engine-tongits", "services.engine", {"KALARO_GAME": "tongits"}),
    Extra("engine-mahjong", "services.engine", {"KALARO_GAME": "mahjong"}),
    Extra("engine-kawuxing", "services.engine", {"KALARO_GAME": "kawuxing"}),
)


def _listed(extra: Extra) -> bool:
    """Whether the launcher already starts this service (the stack fixture ran it)."""
    game = extra.env.get("KALARO_GAME")
    for spec in SERVICES:
        named = game is not None and (game in spec.name or game in spec.args)
        if named and spec.module.startswith(extra.module):
            return True
        if game is None and spec.module == extra.module:
            return True
    return False


def missing_modules() -> list[str]:
    return [e.module for e in TABLE_SERVICES if importlib.util.find_spec(e.module) is None]


def ensure_table_services(stack: Stack) -> list[subprocess.Popen[bytes]]:
    started: list[subprocess.Popen[bytes]] = []
    for extra in TABLE_SERVICES:
        if _listed(extra):
            continue
        log = open(stack.root / f"{extra.name}.log", "ab")  # noqa: SIM115 - lives with the process
        started.append(
            subprocess.Popen(
                [sys.executable, "-m", extra.module],
                env={**stack.env, **extra.env},
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
    return started


def stop_all(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def _main() -> None:  # pragma: no cover - a developer's convenience
    import signal
    import tempfile

    signal.signal(signal.SIGTERM, _interrupt)  # stop the children on kill too

    from kalaro.devstack import NatsServer, RedisServer

    root = Path(tempfile.mkdtemp(prefix="kalaro-web-"))
    nats = NatsServer(root / "nats").start()
    redis = RedisServer(root / "redis").start()
    stack = Stack(root, nats, redis)
    for spec in SERVICES:
        stack.start(spec)
    extras = ensure_table_services(stack)
    try:
        stack.wait_ready()
        print(f"KaLaro dev stack: {stack.base_url}  (logs in {root})", flush=True)
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        stop_all(extras)
        for name in list(stack.processes):
            stack.stop(name)
        redis.stop()
        nats.stop()


if __name__ == "__main__":
    _main()
