"""``python -m services.migrate`` (the Kubernetes migration Job): migrates once, then no-ops."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from services.migrate.__main__ import SCHEMAS

ROOT = Path(__file__).resolve().parents[2]


def run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "services.migrate"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_migrate_upgrades_every_service_once(tmp_path: Path) -> None:
    import os

    database = tmp_path / "kalaro.db"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "libs"), str(ROOT)]),
        "KALARO_DATABASE_URL": f"sqlite+aiosqlite:///{database}",
    }
    first = run(env)
    assert first.returncode == 0, first.stderr
    for schema in SCHEMAS:
        assert f"{schema.component}: schema revision {schema.head()}" in first.stdout
        recorded = sqlite3.connect(database).execute(
            f"SELECT version_num FROM {schema.version_table}"
        )
        assert [row[0] for row in recorded] == [schema.head()]
    assert "Running upgrade 0003 -> 0004" in first.stderr  # Alembic's steps, logged
    second = run(env)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert "Running upgrade" not in second.stderr  # nothing left to do


def test_migrate_in_production_without_a_database_url_says_so() -> None:
    import os

    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "libs"), str(ROOT)]),
        "KALARO_ENV": "production",
    }
    result = run(env)
    assert result.returncode == 2
    assert "KALARO_DATABASE_URL" in result.stderr and "Traceback" not in result.stderr
