"""The servers tests and ``make run`` start never outlive their owner."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

OWNER = """
import sys, time
from pathlib import Path
from kalaro.devstack import NatsServer, RedisServer
root = Path(sys.argv[1])
nats = NatsServer(root / "nats").start()
redis = RedisServer(root / "redis").start()
print(nats.process.pid, redis.process.pid, flush=True)
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead too: it is only waiting for its (gone) parent to read it
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "State:\tZ" in status.read_text())


def test_servers_stop_when_their_owner_is_killed(tmp_path: Path) -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    assert owner.stdout is not None
    pids = [int(p) for p in owner.stdout.readline().split()]
    assert len(pids) == 2
    assert all(_alive(pid) for pid in pids)
    owner.send_signal(signal.SIGKILL)  # no clean-up code runs
    owner.wait()
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in pids)
