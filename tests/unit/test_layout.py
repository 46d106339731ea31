"""The deployment files and the code agree on what the services are."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

from kalaro.launcher import SERVICES

ROOT = Path(__file__).resolve().parents[2]
# Not KaLaro services: the infrastructure and the one-shot init step (keys, volumes).
INFRASTRUCTURE = {"nats", "redis", "postgres", "init"}


def _compose_commands() -> dict[str, list[str]]:
    """Service name -> its command (a JSON-style list in the file), from docker-compose.yml."""
    text = (ROOT / "docker-compose.yml").read_text()
    body = text.split("\nservices:\n", 1)[1].split("\nsecrets:", 1)[0].split("\nvolumes:", 1)[0]
    found: dict[str, list[str]] = {}
    current = None
    for line in body.splitlines():
        header = re.match(r"^  ([a-z][a-z0-9_-]*):\s*$", line)
        if header:
            current = header.group(1)
        command = re.match(r"^\s+command: (\[.*\])\s*$", line)
        if current and command:
            found[current] = json.loads(command.group(1))
    return found


def _compose_services() -> dict[str, str]:
    """Service name -> the module its command runs, read from docker-compose.yml."""
    text = (ROOT / "docker-compose.yml").read_text()
    body = text.split("\nservices:\n", 1)[1].split("\nsecrets:", 1)[0].split("\nvolumes:", 1)[0]
    found: dict[str, str] = {}
    current = None
    for line in body.splitlines():
        header = re.match(r"^  ([a-z][a-z0-9_-]*):\s*$", line)
        if header:
            current = header.group(1)
            found[current] = ""
        module = re.search(r'"-m", "([\w.]+)"', line)
        if current and module:
            found[current] = module.group(1)
    return found


def test_every_compose_service_is_an_entry_point_in_the_code() -> None:
    compose = _compose_services()
    app_services = {name: module for name, module in compose.items() if name not in INFRASTRUCTURE}
    assert app_services, "docker-compose.yml names no application services"
    for name, module in app_services.items():
        assert module, f"compose service {name} has no `python -m` command"
        assert importlib.util.find_spec(f"{module}.__main__") is not None, (
            f"compose service {name} runs {module}, which has no __main__"
        )


def test_make_run_and_compose_start_the_same_services() -> None:
    compose = {n for n in _compose_services() if n not in INFRASTRUCTURE}
    assert compose == {spec.name for spec in SERVICES}
    commands = _compose_commands()
    for spec in SERVICES:
        assert importlib.util.find_spec(f"{spec.module}.__main__") is not None
        assert commands[spec.name] == ["python", "-m", spec.module, *spec.args], spec.name


def test_ci_runs_the_readme_test_command() -> None:
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    assert "make test" in (ROOT / "README.md").read_text()
