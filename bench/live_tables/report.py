"""What a run prints, and the JSON it writes with ``--json``."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from colyseus_anchor import AnchorResult
from live_tables.driver import Phase, percentile
from live_tables.stack import LOAD_GENERATOR

Round = tuple[Phase, AnchorResult, Phase, AnchorResult]  # paced, its anchor, saturation, its


def print_cpu(phases: list[Phase]) -> None:
    """Where the two cores went: CPU milliseconds per action, per process, then per part
    (a part's replicas summed; the load generator is not part of the server)."""
    names = [n for n, _ in sorted(phases[-1].cpu.items(), key=lambda kv: -kv[1])]
    names = [n for n in names if any(p.cpu.get(n, 0) / p.seconds > 0.01 for p in phases)]
    if not names:
        return
    print("\nCPU per action (ms), by process; last column: share of one core")
    header = f"{'process':<18}" + "".join(f"{p.name:>26}" for p in phases)
    print(header)
    print("-" * len(header))
    for name in [*names, "total"]:
        cells = []
        for phase in phases:
            used = sum(phase.cpu.values()) if name == "total" else phase.cpu.get(name, 0.0)
            actions = max(1, len(phase.latencies_ms))
            cells.append(f"{used / actions * 1000:>17.2f} ({used / phase.seconds:>4.0%})")
        print(f"{name:<18}" + "".join(f"{c:>26}" for c in cells))
    parts = {part for p in phases for part in p.cpu_ms_per_action_by_part()}
    print("\nserver CPU per action (ms), by part")
    for part in sorted(parts, key=lambda n: -phases[-1].cpu_ms_per_action_by_part().get(n, 0)):
        cells = [f"{p.cpu_ms_per_action_by_part().get(part, 0.0):>26.3f}" for p in phases]
        print(f"{part:<18}" + "".join(cells))
    print(f"{'server total':<18}" + "".join(f"{p.server_cpu_ms_per_action:>26.3f}" for p in phases))
    print("\nshare of each part's CPU in the kernel (system calls, network stack)")
    for part in sorted(parts, key=lambda n: -phases[-1].cpu_ms_per_action_by_part().get(n, 0)):
        cells = [f"{p.kernel_share_by_part().get(part, 0.0):>26.0%}" for p in phases]
        print(f"{part:<18}" + "".join(cells))
    print(f"{'server total':<18}" + "".join(f"{kernel_share(p):>26.0%}" for p in phases))
    print("\nread + write system calls per action, by part (/proc/<pid>/io)")
    for part in sorted(parts):
        cells = []
        for phase in phases:
            io = phase.io_per_action_by_part().get(part, {"reads": 0.0, "writes": 0.0})
            cells.append(f"{io['reads']:>12.1f} + {io['writes']:<11.1f}")
        print(f"{part:<18}" + "".join(cells))


def kernel_share(phase: Phase) -> float:
    """The share of all server CPU (every part) spent in the kernel."""
    server = [n for n in phase.cpu if n != LOAD_GENERATOR]
    total = sum(phase.cpu[n] for n in server)
    return sum(phase.kernel.get(n, 0.0) for n in server) / total if total else 0.0


def _cells(actions: float, p50: float, p99: float, errors: int, cpu_ms: float) -> str:
    return f"{actions:>9.0f}{p50:>8.2f}{p99:>8.2f}{errors:>5}{cpu_ms:>9.3f}"


def print_anchor(rounds: list[Round], rate: float) -> None:
    """Both systems side by side, per round, and the issue's goals as ratios."""
    print("\nKaLaro vs the Colyseus anchor, interleaved in one run (ratios are KaLaro / Colyseus)")
    print("CPU ms/move: every server-side process (KaLaro: gateway, engine, lobby, wallet, ")
    print("nats-server, redis-server…; Colyseus: its one server process), load generators excluded")
    cols = f"{'actions/s':>9}{'p50':>8}{'p99':>8}{'err':>5}{'cpu ms':>9}"
    header = f"{'round / phase':<22}{'KaLaro':^39}{'Colyseus':^39}{'speed':>6}  ratios"
    print(header)
    print(f"{'':<22}{cols}{'':<2}{cols}")
    print("-" * 120)
    verdicts = []
    for number, (paced, a_paced, sat, a_sat) in enumerate(rounds, 1):
        for phase, anchor in ((paced, a_paced), (sat, a_sat)):
            p50 = percentile(phase.latencies_ms, 50)
            p99 = percentile(phase.latencies_ms, 99)
            ours = _cells(
                phase.actions_per_second,
                p50,
                p99,
                len(phase.errors),
                phase.server_cpu_ms_per_action,
            )
            theirs = _cells(
                anchor.actions_per_second,
                anchor.p50_ms,
                anchor.p99_ms,
                anchor.errors,
                anchor.cpu_ms_per_action,
            )
            ratios = (
                f"throughput {phase.actions_per_second / max(1e-9, anchor.actions_per_second):.2f}"
                f"  p99 {p99 / max(1e-9, anchor.p99_ms):.1f}"
                f"  cpu {phase.server_cpu_ms_per_action / max(1e-9, anchor.cpu_ms_per_action):.1f}"
            )
            print(
                f"{f'{number}: {phase.name}':<22}{ours}  {theirs}{phase.speed_ms:>6.0f}  {ratios}"
            )
        cpu_ratio = paced.server_cpu_ms_per_action / max(1e-9, a_paced.cpu_ms_per_action)
        sat_ratio = sat.actions_per_second / max(1e-9, a_sat.actions_per_second)
        p99_ratio = percentile(paced.latencies_ms, 99) / max(1e-9, a_paced.p99_ms)
        offered = 0.99 * rate * paced.tables  # 990/s at 500 tables, 2 per second each
        checks = {  # issue 32's goals (moonshots: cpu <= 2.5x, saturation >= 0.5x, p99 <= 1x)
            f"cpu/move {cpu_ratio:.1f}x (goal <= 5x)": cpu_ratio <= 5,
            f"saturation {sat_ratio:.2f}x (goal >= 0.2x)": sat_ratio >= 0.2,
            f"paced {paced.actions_per_second:.0f}/s (offered {offered / 0.99:.0f})": (
                paced.actions_per_second >= offered
            ),
            f"paced p99 {p99_ratio:.1f}x (goal <= 1.5x)": p99_ratio <= 1.5,
            f"errors {len(paced.errors) + len(sat.errors)} (goal 0)": not (
                paced.errors or sat.errors
            ),
        }
        verdicts.append(all(checks.values()))
        print(
            f"  round {number} goals: "
            + "; ".join(f"{k} {'met' if ok else 'NOT met'}" for k, ok in checks.items())
        )
    print(f"issue 32 goals met in {sum(verdicts)} of {len(verdicts)} rounds")


def phase_json(phase: Phase) -> dict[str, Any]:
    server = {n: c for n, c in phase.cpu.items() if n != LOAD_GENERATOR}
    actions = max(1, len(phase.latencies_ms))
    return {
        "name": phase.name,
        "tables": phase.tables,
        "seconds": phase.seconds,
        "actions_per_second": phase.actions_per_second,
        "p50_ms": percentile(phase.latencies_ms, 50),
        "p99_ms": percentile(phase.latencies_ms, 99),
        "errors": len(phase.errors),
        "first_errors": phase.errors[:5],
        "hands": phase.hands,
        "refused_deals": phase.refused_deals,
        "cpu_ms_per_move": phase.server_cpu_ms_per_action,
        "cpu_ms_per_move_by_part": phase.cpu_ms_per_action_by_part(),
        "cpu_ms_per_move_by_process": {n: c / actions * 1000 for n, c in server.items()},
        "syscalls_per_move_by_part": phase.io_per_action_by_part(),
        "kernel_share_by_part": phase.kernel_share_by_part(),
        "kernel_share": kernel_share(phase),
        "load_generator_cpu_ms_per_move": phase.cpu.get(LOAD_GENERATOR, 0.0) / actions * 1000,
        "machine_speed_ms": phase.speed_ms,
        "load_average_before": list(phase.load_average),
    }


def anchor_json(result: AnchorResult) -> dict[str, Any]:
    return {
        "tables": result.tables,
        "think_ms": result.think_ms,
        "actions_per_second": result.actions_per_second,
        "p50_ms": result.p50_ms,
        "p99_ms": result.p99_ms,
        "errors": result.errors,
        "cpu_ms_per_move": result.cpu_ms_per_action,
        "server_cpu_share": result.server_cpu_share,
    }


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def summary(phases: list[Phase], rounds: list[Round]) -> dict[str, Any]:
    """The headline figures: with the anchor, means over its rounds and the ratios
    KaLaro / Colyseus; without, the largest paced phase and the last no-think one."""
    errors = sum(len(p.errors) for p in phases)
    if rounds:
        paced = [r[0] for r in rounds]
        ours_cpu = _mean([p.server_cpu_ms_per_action for p in paced])
        theirs_cpu = _mean([r[1].cpu_ms_per_action for r in rounds])
        ours_sat = _mean([r[2].actions_per_second for r in rounds])
        theirs_sat = _mean([r[3].actions_per_second for r in rounds])
        ours_p99 = _mean([percentile(p.latencies_ms, 99) for p in paced])
        return {
            "cpu_ratio": ours_cpu / max(1e-9, theirs_cpu),
            "saturation_ratio": ours_sat / max(1e-9, theirs_sat),
            "p99_ratio": ours_p99 / max(1e-9, _mean([r[1].p99_ms for r in rounds])),
            "errors": errors,
            "kalaro_cpu_ms_per_move": ours_cpu,
            "colyseus_cpu_ms_per_move": theirs_cpu,
            "kalaro_cpu_ms_per_move_by_part": _mean_parts(paced),
            "kalaro_saturation_moves_per_second": ours_sat,
            "kalaro_paced_p99_ms": ours_p99,
            "kalaro_kernel_share": _mean([kernel_share(p) for p in paced]),
        }
    paced = [max((p for p in phases if p.paced), key=lambda p: p.tables, default=phases[0])]
    return {
        "cpu_ratio": None,
        "saturation_ratio": None,
        "p99_ratio": None,
        "errors": errors,
        "kalaro_cpu_ms_per_move": paced[0].server_cpu_ms_per_action,
        "colyseus_cpu_ms_per_move": None,
        "kalaro_cpu_ms_per_move_by_part": _mean_parts(paced),
        "kalaro_saturation_moves_per_second": phases[-1].actions_per_second,
        "kalaro_paced_p99_ms": percentile(paced[0].latencies_ms, 99),
        "kalaro_kernel_share": kernel_share(paced[0]),
    }


def _mean_parts(phases: list[Phase]) -> dict[str, float]:
    split = [p.cpu_ms_per_action_by_part() for p in phases]
    parts = {part for s in split for part in s}
    means = {part: _mean([s.get(part, 0.0) for s in split]) for part in parts}
    return dict(sorted(means.items(), key=lambda kv: -kv[1]))


def write_json(
    path: Path,
    topology: dict[str, int],
    phases: list[Phase],
    rounds: list[Round],
    floor_ms: tuple[float, float],
    load_before: tuple[float, float, float],
) -> None:
    """``{"topology", "summary", "phases", "anchor", "machine"}`` to ``path``."""
    document = {
        "topology": topology,
        "summary": summary(phases, rounds),
        "phases": [phase_json(p) for p in phases],
        "anchor": [
            {"round": number, "paced": anchor_json(r[1]), "saturation": anchor_json(r[3])}
            for number, r in enumerate(rounds, 1)
        ],
        "machine": {
            "cpus": os.cpu_count(),
            "load_average_before_run": list(load_before),
            "load_average_after_run": list(os.getloadavg()),
            "nats_floor_p50_ms": floor_ms[0],
            "nats_floor_p99_ms": floor_ms[1],
        },
    }
    path.write_text(json.dumps(_finite(document), indent=2) + "\n")


def _finite(value: Any) -> Any:
    """NaN (a phase with no sample) is not JSON: null instead."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value
