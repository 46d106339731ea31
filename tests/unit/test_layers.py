"""The dependency rule of docs/architecture.md: imports point down the layers only.

games (pure rules) <- proto (contracts) <- bus (runner, client, store) <- services.
A service never imports another service: they talk over NATS. Checked on the source,
so a stray import fails here, not in a code review.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIBS = ROOT / "libs" / "kalaro"

# Third-party I/O a pure rules package has no business with.
_IO = ("nats", "redis", "hiredis", "sqlalchemy", "litestar", "httpx", "websockets", "asyncio")


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _offending(folder: Path, forbidden: tuple[str, ...]) -> list[str]:
    bad = []
    for path in _files(folder):
        for name in _imports(path):
            if any(name == f or name.startswith(f + ".") for f in forbidden):
                bad.append(f"{path.relative_to(ROOT)} imports {name}")
    return bad


def test_rules_are_pure() -> None:
    forbidden = ("kalaro.bus", "kalaro.proto", "kalaro.client", "kalaro.bots", "services", *_IO)
    assert _offending(LIBS / "games", forbidden) == []


def test_contracts_know_no_transport() -> None:
    forbidden = ("kalaro.bus", "kalaro.client", "services", "nats", "redis", "sqlalchemy")
    assert _offending(LIBS / "proto", forbidden) == []


def test_the_bus_knows_no_service() -> None:
    assert _offending(LIBS / "bus", ("services",)) == []


def test_libraries_know_no_service() -> None:
    assert _offending(LIBS, ("services",)) == []


def test_the_engine_worker_is_the_engine_service_code() -> None:
    """libs/ keeps what several services share; the worker that applies moves is the
    engine service's own (issue 32), so no library is named ``engine`` any more (the
    games' pure rules modules, ``games/<game>/engine.py``, are not libraries of it)."""
    assert not (LIBS / "engine").exists()
    assert not (LIBS / "engine.py").exists()
    assert (ROOT / "services" / "engine" / "worker.py").exists()


def test_history_reads_records_through_the_shared_library() -> None:
    # History lists and trims the records the engines keep in Redis; the layout and
    # the summary of a hand are kalaro.records, never the engine service's code.
    history = ROOT / "services" / "history"
    assert _offending(history, ("services.engine", "kalaro.engine")) == []
    assert any("kalaro.records" in _imports(p) for p in _files(history))


_ENGINE_CODE = ("kalaro.engine", "services.engine")


def _engine_imports(path: Path) -> list[str]:
    """Where ``path`` imports the engine's code, in any spelling."""
    found = [
        n for n in _imports(path) if any(n == e or n.startswith(e + ".") for e in _ENGINE_CODE)
    ]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.ImportFrom) or node.level != 0:
            continue
        if node.module in ("kalaro", "services"):
            found += [f"{node.module}.{a.name}" for a in node.names if a.name == "engine"]
    return found


def test_the_gateway_holds_no_rule() -> None:
    """The gateway forwards a move to the game's engine service and fans out what it
    publishes; it never applies one itself (issue 32: one move path)."""
    gateway = _files(ROOT / "services" / "gateway")
    assert gateway, "no gateway source found"
    bad = [f"{p.relative_to(ROOT)} imports {n}" for p in gateway for n in _engine_imports(p)]
    assert bad == []


def test_the_gateway_loads_no_engine_code_at_all() -> None:
    # Not through another library either: import the gateway's program in a fresh
    # interpreter and see what it loaded.
    probe = (
        "import sys, services.gateway.__main__, services.gateway.app\n"
        "print(sorted(m for m in sys.modules if m.split('.')[:2] == ['kalaro', 'engine']"
        " or m.split('.')[:2] == ['services', 'engine']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


SERVICES = sorted(p.name for p in (ROOT / "services").iterdir() if (p / "__init__.py").exists())


@pytest.mark.parametrize("service", [s for s in SERVICES if s != "migrate"])
def test_services_talk_over_nats_not_imports(service: str) -> None:
    others = tuple(f"services.{s}" for s in SERVICES if s != service)
    assert _offending(ROOT / "services" / service, others) == []


def test_the_checks_see_real_imports() -> None:
    # The rule above would pass on an empty walk; make sure it reads what it should.
    assert "kalaro.games.tongits.state" in _imports(
        LIBS / "games" / "tongits" / "engine.py"
    ) or any(
        name.startswith("kalaro.games")
        for name in _imports(LIBS / "games" / "tongits" / "engine.py")
    )
    assert any(
        name.startswith("services.gateway")
        for name in _imports(ROOT / "services" / "gateway" / "app.py")
    )


def test_the_gateway_rule_sees_both_spellings(tmp_path: Path) -> None:
    source = tmp_path / "moves.py"
    source.write_text(
        "from kalaro import engine\nimport kalaro.engine.slots\nimport kalaro.bus\n"
        "from services import engine\nfrom services.engine.step import Steps\n"
    )
    assert sorted(_engine_imports(source)) == [
        "kalaro.engine",
        "kalaro.engine.slots",
        "services.engine",
        "services.engine.step",
    ]
