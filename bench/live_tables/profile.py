"""``--profile DIR``: py-spy flame graphs of the gateways and engines during each of our
phases, and the functions that took the most of them.

py-spy (``pip install py-spy``) samples a running process from outside, without
stopping it (``--nonblocking``), so what it shows is the production code as the bench
drives it. Each flame graph is an SVG whose frames carry their sample counts; ``top``
reads them back into self and total shares per function:

    .venv/bin/python bench/live_tables/profile.py DIR/gateway-1-500-tables.svg
    .venv/bin/python bench/live_tables/profile.py --layers DIR/*.svg   # by layer
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

PROFILED_PARTS = ("gateway", "engine", "lobby", "history")
RATE_HZ = 97  # samples a second per process; off the event loop's round numbers


class Recorder:
    """One ``py-spy record`` per profiled process, for the length of a phase."""

    def __init__(self, directory: Path, pids: dict[str, int]) -> None:
        self.py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        if not Path(self.py_spy).exists():
            raise RuntimeError("--profile needs py-spy: .venv/bin/pip install py-spy")
        self.directory = directory
        self.directory.mkdir(parents=True, exist_ok=True)
        self.pids = pids
        self.running: list[subprocess.Popen[bytes]] = []

    def start(self, phase_name: str, seconds: float) -> None:
        slug = re.sub(r"[^a-z0-9]+", "-", phase_name.lower()).strip("-")
        for name, pid in self.pids.items():
            out = self.directory / f"{name}-{slug}.svg"
            command = [self.py_spy, "record", "--pid", str(pid), "--rate", str(RATE_HZ),
                       "--duration", str(max(1, int(seconds))), "--nonblocking",
                       "--format", "flamegraph", "--output", str(out)]  # fmt: skip
            self.running.append(
                subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            )

    def wait(self) -> None:
        for process in self.running:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
        self.running = []


_FRAME = re.compile(
    r"<title>(?P<title>[^<]*?) \((?P<n>[\d,]+) samples?, [\d.]+%\)</title>"
    r"<rect [^>]*?y=\"(?P<y>[\d.]+)\"[^>]*?fg:x=\"(?P<x>\d+)\" fg:w=\"(?P<w>\d+)\""
)


def top(svg: Path, count: int = 15) -> tuple[int, list[tuple[str, float, float]]]:
    """Samples in a py-spy flame graph and its ``count`` functions with the largest self
    share: (function, self %, total %). A frame's self time is its width less its
    children's (the frames one row up inside its span)."""
    frames = []
    for m in _FRAME.finditer(svg.read_text(errors="replace")):
        name = m["title"].replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
        name = re.sub(r":\d+\)$", ")", name)  # a function's lines together
        frames.append((float(m["y"]), int(m["x"]), int(m["w"]), name))
    if not frames:
        return 0, []
    rows: dict[float, list[tuple[int, int, str]]] = defaultdict(list)
    for y, x, w, name in frames:
        rows[y].append((x, w, name))
    ys = sorted(rows)  # py-spy draws the root at the top
    total = sum(w for x, w, _ in rows[ys[0]])
    self_samples: dict[str, int] = defaultdict(int)
    inclusive: dict[str, int] = defaultdict(int)
    for depth, y in enumerate(ys):
        above = rows[ys[depth + 1]] if depth + 1 < len(ys) else []
        for x, w, name in rows[y]:
            children = sum(cw for cx, cw, _ in above if x <= cx < x + w)
            self_samples[name] += w - children
            inclusive[name] += w  # (a function on several levels counts on each)
    ranked = sorted(self_samples.items(), key=lambda kv: -kv[1])[:count]
    return total, [
        (name, 100 * n / total, min(100.0, 100 * inclusive[name] / total)) for name, n in ranked
    ]


#: Where a function's self time goes, by the file it is in (first match wins). The
#: event loop's own C code (uvloop: epoll, socket reads, callbacks) shows as the self
#: time of ``Runner.run``.
LAYERS = (
    ("event loop (uvloop C code)", ("Runner.run (asyncio/runners.py)",)),
    ("rules and views (pure)", ("kalaro/games/", "services/engine/step.py", "kalaro/proto/")),
    ("NATS client (nats-py)", ("(nats/",)),
    ("Redis client", ("kalaro/bus/redislink",)),
    ("SQL (SQLAlchemy, aiosqlite, asyncpg)", ("sqlalchemy/", "aiosqlite/", "asyncpg/", "sqlite3/")),
    ("socket writes and asyncio", ("(asyncio/", "services/gateway/wsserver.py",
                                   "services/gateway/connection.py", "(uvloop/")),
    ("our service code", ("services/", "kalaro/")),
)  # fmt: skip


def layers(svg: Path) -> tuple[int, dict[str, float]]:
    """Self time of a flame graph by layer (:data:`LAYERS`, else "other"), in %."""
    total, rows = top(svg, count=100_000)
    shares: dict[str, float] = defaultdict(float)
    for name, own, _ in rows:
        layer = next((lay for lay, keys in LAYERS if any(k in name for k in keys)), "other")
        shares[layer] += own
    return total, dict(sorted(shares.items(), key=lambda kv: -kv[1]))


def main() -> int:
    by_layer = "--layers" in sys.argv
    for path in (a for a in sys.argv[1:] if a != "--layers"):
        if by_layer:
            total, shares = layers(Path(path))
            print(f"{path}: {total} samples; self % by layer")
            for layer, share in shares.items():
                print(f"  {share:5.1f}  {layer}")
            continue
        total, rows = top(Path(path))
        print(f"{path}: {total} samples; self %, total %, function")
        for name, own, whole in rows:
            print(f"  {own:5.1f} {whole:5.1f}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
