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

A lane whose tests failed (pytest exit 1) runs its failed tests once more, alone, after
both lanes end: two lanes and a browser on two cores can starve a timing-sensitive test.
The lane passes only if they all pass then, and the log names each of them under
``[lanes] FLAKY`` so a real race is still seen. ``KALARO_TEST_RETRY=0`` turns it off.
"""

from __future__ import annotations

import json
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


# pytest's exit status when tests ran and some failed (not a crash, usage error or
# interruption: those are never retried).
TESTS_FAILED = 1


def _command(lane: Lane, extra: list[str], scratch: Path) -> list[str]:
    # Each lane its own cache, so the retry knows exactly which of its tests failed; the
    # slowest tests are listed so a CI machine's slowness shows where it bites.
    return [
        sys.executable, "-m", "pytest", *lane.args, "--durations=12", *extra,
        f"--basetemp={scratch / lane.name}", "-o", f"cache_dir={scratch / (lane.name + '-cache')}",
    ]  # fmt: skip


def _failed_tests(lane: Lane, scratch: Path) -> list[str]:
    path = scratch / f"{lane.name}-cache" / "v" / "cache" / "lastfailed"
    try:
        return sorted(json.loads(path.read_text()))
    except (OSError, ValueError):
        return []


def _retry(lane: Lane, extra: list[str], scratch: Path) -> int:
    """Run the lane's failed tests once more on a quieter machine; 0 if they all pass."""
    failed = _failed_tests(lane, scratch)
    if not failed:
        return TESTS_FAILED
    print(f"\n[lanes] {lane.name}: {len(failed)} failed; running them once more, alone:")
    for test in failed:
        print(f"[lanes]   {test}", flush=True)
    code = subprocess.call([*_command(lane, extra, scratch), "--last-failed"], cwd=ROOT)
    if code == 0:
        for test in failed:
            print(f"[lanes] FLAKY {lane.name}: {test} failed in the parallel run, passed alone")
    return code


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
            codes.append(subprocess.call(_command(lane, extra, scratch), cwd=ROOT))
            print(_report(lane, codes[-1], t0), flush=True)
    else:
        background = []
        for lane in others:
            log = (scratch / f"{lane.name}.log").open("w")
            cmd = _command(lane, extra, scratch)
            print(f"[lanes] {lane.name}: started (output when it ends: {log.name})", flush=True)
            proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
            background.append((lane, proc, log))
        print(f"[lanes] {first.name}: {' '.join(first.args)}", flush=True)
        codes.append(subprocess.call(_command(first, extra, scratch), cwd=ROOT))
        print(_report(first, codes[-1], started), flush=True)
        for lane, proc, log in background:
            code = proc.wait()
            log.close()
            print(f"\n[lanes] ===== {lane.name} lane output =====", flush=True)
            sys.stdout.write(Path(log.name).read_text(errors="replace"))
            print(_report(lane, code, started), flush=True)
            codes.append(code)
    if os.environ.get("KALARO_TEST_RETRY", "1") != "0":
        codes = [
            _retry(lane, extra, scratch) if code == TESTS_FAILED else code
            for lane, code in zip(LANES, codes, strict=True)
        ]
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
