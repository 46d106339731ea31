"""``bench/bench_tables.py`` at a tiny size, so it cannot rot: the whole stack with two
gateway processes and two Tongits engine replicas, three tables whose sockets are
spread over both gateways, a paced and a no-think phase, ``--json`` read back. Speed is
not asserted (that is the bench's own business); errors and the JSON's shape are."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_tables.py"
SUMMARY_KEYS = {
    "cpu_ratio",
    "saturation_ratio",
    "p99_ratio",
    "errors",
    "kalaro_kernel_share",
    "kalaro_cpu_ms_per_move",
    "colyseus_cpu_ms_per_move",
}


def test_the_tables_bench_runs_two_gateways_and_two_engines(tmp_path: Path) -> None:
    out = tmp_path / "tables.json"
    done = subprocess.run(
        [sys.executable, str(BENCH), "--gateways", "2", "--engines", "2", "--sizes", "3",
         "--saturation-tables", "3", "--seconds", "3", "--json", str(out)],
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    result = json.loads(out.read_text())
    assert result["topology"] == {"gateways": 2, "engines": 2}
    summary = result["summary"]
    assert set(summary) >= SUMMARY_KEYS, summary
    assert summary["errors"] == 0, [p["first_errors"] for p in result["phases"]]
    # No anchor in this run: no ratios to it, and saying so rather than inventing them.
    assert summary["cpu_ratio"] is None and summary["colyseus_cpu_ms_per_move"] is None
    assert summary["kalaro_cpu_ms_per_move"] > 0
    assert [p["name"] for p in result["phases"]] == ["3 tables", "3 tables, no think"]
    for phase in result["phases"]:
        assert phase["errors"] == 0, phase
        processes = phase["cpu_ms_per_move_by_process"]
        # Both gateways and both engine replicas ran, and each did some of the work:
        # the sockets were spread and the moves took the engine service's path.
        for name in ("gateway-1", "gateway-2", "engine-tongits-1", "engine-tongits-2"):
            assert name in processes, sorted(processes)
        assert "load generator" not in processes
        parts = phase["cpu_ms_per_move_by_part"]
        assert {"gateway", "engine", "nats", "redis", "lobby"} <= set(parts), parts
        assert abs(sum(parts.values()) - phase["cpu_ms_per_move"]) < 1e-6
        # The hops' system calls are kernel time: some of every busy part's CPU, not all.
        assert 0 < phase["kernel_share"] < 1, phase["kernel_share"]
        shares = phase["kernel_share_by_part"]
        assert {"gateway", "engine", "nats"} <= set(shares), shares
        assert all(0 <= share <= 1 for share in shares.values()), shares
    saturation = result["phases"][-1]
    assert saturation["actions_per_second"] > 0, saturation
    for name in ("gateway-1", "gateway-2", "engine-tongits-1", "engine-tongits-2"):
        assert saturation["cpu_ms_per_move_by_process"][name] > 0, saturation
    assert "CPU per action (ms), by process" in done.stdout
