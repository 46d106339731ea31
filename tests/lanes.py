"""Run the suite as two pytest processes at once: `make test`.

Most of the suite waits on real servers, timers and a browser rather than on the CPU,
so on a 2-core machine two lanes finish in about two thirds of the serial time:

- ``browser``: the web client in headless Chromium, the short cluster chaos run and two
  whole-stack fault tests;
- ``services``: the unit, integration and (the rest of the) end-to-end tiers.

Each lane has its own ``--basetemp``, and every test starts its own servers on free
ports, so the lanes share nothing. The ``services`` lane prints as it goes; the
``browser`` lane's output is kept in a file and printed, whole, when it ends. The exit
status is the first failing lane's. ``KALARO_TEST_LANES=1`` runs the lanes one after the
other (the same tests, in the same processes' order) when a failure needs a quiet
machine. Extra arguments go to every lane's pytest.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Lane:
    name: str
    args: tuple[str, ...]


# Fault tests of the whole stack that mostly wait (killed and paused processes): run
# with the browser lane, which has the time, so the two lanes end together.
_BALANCE = ("tests/e2e/test_one_outcome.py", "tests/e2e/test_engine_restart.py")

LANES = (
    Lane(
        "services",
        (
            "tests",
            "--ignore=tests/e2e/browser",
            "--ignore=tests/chaos",
            *(f"--ignore={path}" for path in _BALANCE),
        ),
    ),
    Lane("browser", ("tests/e2e/browser", "tests/chaos", *_BALANCE)),
)


def _command(lane: Lane, extra: list[str], basetemp: Path) -> list[str]:
    return [sys.executable, "-m", "pytest", *lane.args, f"--basetemp={basetemp}", *extra]


def _report(lane: Lane, code: int, started: float) -> str:
    verdict = "passed" if code == 0 else f"FAILED (exit {code})"
    return f"[lanes] {lane.name}: {verdict} in {time.monotonic() - started:.0f}s"


def run(extra: list[str], parallel: bool) -> int:
    scratch = Path(tempfile.mkdtemp(prefix="kalaro-lanes-"))
    first, *others = LANES
    codes: list[int] = []
    started = time.monotonic()
    if not parallel:
        for lane in LANES:
            print(f"[lanes] {lane.name}: {' '.join(lane.args)}", flush=True)
            t0 = time.monotonic()
            codes.append(subprocess.call(_command(lane, extra, scratch / lane.name), cwd=ROOT))
            print(_report(lane, codes[-1], t0), flush=True)
    else:
        background = []
        for lane in others:
            log = (scratch / f"{lane.name}.log").open("w")
            cmd = _command(lane, extra, scratch / lane.name)
            print(f"[lanes] {lane.name}: started (output when it ends: {log.name})", flush=True)
            proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
            background.append((lane, proc, log))
        print(f"[lanes] {first.name}: {' '.join(first.args)}", flush=True)
        codes.append(subprocess.call(_command(first, extra, scratch / first.name), cwd=ROOT))
        print(_report(first, codes[-1], started), flush=True)
        for lane, proc, log in background:
            code = proc.wait()
            log.close()
            print(f"\n[lanes] ===== {lane.name} lane output =====", flush=True)
            sys.stdout.write(Path(log.name).read_text(errors="replace"))
            print(_report(lane, code, started), flush=True)
            codes.append(code)
    failed = next((c for c in codes if c != 0), 0)
    print(
        f"[lanes] all lanes: {'passed' if not failed else 'FAILED'} "
        f"in {time.monotonic() - started:.0f}s",
        flush=True,
    )
    return failed


def main() -> None:
    parallel = os.environ.get("KALARO_TEST_LANES", "2") != "1"
    sys.exit(run(sys.argv[1:], parallel))


if __name__ == "__main__":
    main()
