"""The ``kalaro`` command's operator errors: one clear line and a non-zero status, never
a traceback; ``--version``; the order ``make run`` stops its processes in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kalaro import cli, launcher
from kalaro.devstack import free_port

ROOT = Path(__file__).resolve().parents[2]


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    out = capsys.readouterr().out.strip()
    assert out == f"kalaro {cli.version()}"
    assert out.split()[1][0].isdigit() or out.endswith("unknown")


def test_verify_of_a_missing_file_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no-such-hand.json"
    assert cli.main(["verify", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    assert str(missing) in err and "No such file" in err


def test_verify_of_a_directory_is_one_line_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["verify", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+asyncpg://kalaro:s3cret-pw@127.0.0.1:{port}/kalaro",
        "postgresql+asyncpg://kalaro@no-such-host.invalid:5432/kalaro",
    ],
)
def test_create_admin_with_an_unreachable_database_is_one_line(url: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KALARO_")}
    env.pop("DATABASE_URL", None)
    env["KALARO_DATABASE_URL"] = url.format(port=free_port())
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "libs"), str(ROOT)])
    done = subprocess.run(
        [sys.executable, "-m", "kalaro.cli", "create-admin", "--email", "ops@example.com"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("create-admin: cannot reach the database at ")
    assert "s3cret-pw" not in done.stderr  # the password is not echoed
    assert done.stdout == ""


_CHILD = """
import pathlib, signal, sys, time
name, log = sys.argv[1], pathlib.Path(sys.argv[2])
def bye(*_):
    with log.open("a") as f:
        f.write(f"term {name} {time.monotonic()}\\n")
    time.sleep(0.3)  # a drain that takes a moment
    with log.open("a") as f:
        f.write(f"exit {name} {time.monotonic()}\\n")
    sys.exit(0)
signal.signal(signal.SIGTERM, bye)
print("ready", flush=True)
time.sleep(60)
"""


class _Idle:
    """Stands in for nats-server/redis-server: this test is about the services' order."""

    def stop(self) -> None:
        pass


def test_make_run_stops_the_way_in_before_the_services(tmp_path: Path) -> None:
    """The gateway (and the bots) drain while the services they call still answer."""
    stack = launcher.Stack(tmp_path / "var")
    stack.nats, stack.redis = _Idle(), _Idle()  # type: ignore[assignment]
    log = tmp_path / "stops.log"
    for spec in launcher.SERVICES:
        process = subprocess.Popen(
            [sys.executable, "-c", _CHILD, spec.name, str(log)], stdout=subprocess.PIPE
        )
        assert process.stdout is not None and process.stdout.readline() == b"ready\n"
        stack.children.append((spec, process))
    stack.stop()
    seen = [line.split() for line in log.read_text().splitlines()]
    at = {(kind, name): float(t) for kind, name, t in seen}
    edge_gone = max(at[("exit", name)] for name in launcher.EDGE)
    services = [s.name for s in launcher.SERVICES if s.name not in launcher.EDGE]
    assert services and all(at[("term", name)] >= edge_gone for name in services)
    assert all(process.poll() == 0 for _, process in stack.children)
