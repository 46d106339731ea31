"""Record the golden hands: ``python -m tests.golden.record`` (or ``make golden``).

Regenerate ONLY for a deliberate rule change: the golden hands exist to prove that a
refactor changes no hand, and regenerating them makes any change "pass". Review the
diff of ``tests/golden/data/`` (which cases changed) before committing.

Deterministic (each hand depends only on its case and index) and parallel: hands are
played in chunks on ``--jobs`` processes and written in order.
"""

from __future__ import annotations

import argparse
import gzip
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import msgspec

from tests.golden.hands import DATA, FORMAT, SNAPSHOTS, Case, Recorded, cases, play

CHUNK = 100
_json = msgspec.json.Encoder()


def _chunk(case: Case, start: int, stop: int) -> list[Recorded]:
    return [play(case, i) for i in range(start, stop)]


def record(selected: list[Case], jobs: int, scale: float = 1.0) -> None:
    DATA.mkdir(parents=True, exist_ok=True)
    plans = [(case, max(1, round(case.hands * scale))) for case in selected]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {
            case.name: [
                pool.submit(_chunk, case, start, min(start + CHUNK, hands))
                for start in range(0, hands, CHUNK)
            ]
            for case, hands in plans
        }
        for case, hands in plans:
            started = time.perf_counter()
            recorded = [r for future in futures[case.name] for r in future.result()]
            _write(case, hands, recorded)
            steps = sum(len(r.line["actions"]) for r in recorded)
            size = case.path.stat().st_size
            print(
                f"{case.name:28} {hands:5} hands {steps:7} actions "
                f"{size / 1024:7.0f} KiB (waited {time.perf_counter() - started:.1f} s)",
                flush=True,
            )


def _write(case: Case, hands: int, recorded: list[Recorded]) -> None:
    header = {
        "format": FORMAT,
        "game": case.game,
        "ruleset": case.ruleset,
        "overrides": case.overrides,
        "options": msgspec.to_builtins(case.options()),
        "hands": hands,
    }
    # mtime=0: the same hands give the same bytes, so an unchanged case shows no diff
    with open(case.path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(_json.encode(header) + b"\n")
        for r in recorded:
            f.write(_json.encode(r.line) + b"\n")
    # snapshots spread over the case's hands, skipping hands too short to have one
    snaps = [r.snapshot for r in recorded if r.snapshot is not None]
    stride = max(1, len(snaps) // SNAPSHOTS)
    kept = snaps[::stride][:SNAPSHOTS]
    case.states_path.write_bytes(msgspec.json.format(_json.encode(kept)) + b"\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--scale", type=float, default=1.0, help="fraction of each case's hands (trials)"
    )
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    args = parser.parse_args(argv)
    known = {case.name: case for case in cases()}
    if args.list:
        for case in known.values():
            print(f"{case.name:28} {case.hands:5} hands  {case.overrides or ''}")
        return 0
    unknown = [name for name in args.cases if name not in known]
    if unknown:
        print(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    selected = [known[name] for name in args.cases] or list(known.values())
    started = time.perf_counter()
    record(selected, args.jobs, args.scale)
    print(f"recorded {len(selected)} case(s) in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
