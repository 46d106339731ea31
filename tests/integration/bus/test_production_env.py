"""``KALARO_ENV=production``: auth and wallet refuse the SQLite fallback, clearly.

Each service runs as a real process with no database URL (and NATS on a dead port):
it must exit non-zero at once, naming the variable to set, without a traceback and
without creating a SQLite file.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kalaro.devstack import free_port

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("service", ["services.wallet", "services.auth"])
def test_production_without_a_database_url_exits_with_one_clear_message(
    service: str, tmp_path: Path
) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("KALARO_DATABASE_URL", "DATABASE_URL") and not k.startswith("KALARO_")
    }
    env.update(
        KALARO_ENV="production",
        KALARO_NATS_URL=f"nats://127.0.0.1:{free_port()}",  # nothing listens there
        KALARO_VAR_DIR=str(tmp_path / "var"),
        KALARO_JWT_PRIVATE_KEY_FILE=str(tmp_path / "var" / "jwt.pem"),
    )
    done = subprocess.run(
        [sys.executable, "-m", service],
        cwd=tmp_path,  # the default SQLite file would land under here
        # libs first: in a git worktree the editable install points at another checkout.
        env={**env, "PYTHONPATH": os.pathsep.join([str(ROOT / "libs"), str(ROOT)])},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode != 0
    assert "KALARO_DATABASE_URL" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not list(tmp_path.rglob("*.db")), "no SQLite file is created"
