"""``bench/bench_history.py`` at a tiny size, so it cannot rot: real hands played and
stamped, 2,000 records stored through ``store_hands`` beside the raw INSERT anchor, the
service in its own process answering over a real nats-server, every answer checked
(the bench exits 1 on a wrong page or record). Speed goals are not asserted here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[3] / "bench" / "bench_history.py"


def test_the_history_bench_runs_and_checks_its_answers_on_sqlite() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--records", "2000", "--pool", "6",
         "--requests", "20", "--database", "sqlite"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    ingest = next(line for line in lines if line.startswith("sqlite ") and "2,000" in line)
    store_rate, raw_rate, ratio = ingest.split()[2:5]
    assert float(store_rate.replace(",", "")) > 0 and float(raw_rate.replace(",", "")) > 0
    assert float(ratio) > 0
    for request in ("(floor)", "all games", "one game", "a record by id"):
        row = next(line for line in lines if line.startswith("sqlite ") and request in line)
        n, p50, p99 = row[51:].split()[:3]  # after the database and request columns
        assert int(n) == 20 and 0 < float(p50) <= float(p99), row
    assert "loaded 2,000/2,000" in done.stderr
    assert "postgresql" not in done.stdout
