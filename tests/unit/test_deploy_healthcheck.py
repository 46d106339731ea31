"""The image's HEALTHCHECK script (deploy/docker/healthcheck.py) against a real HTTP server."""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "deploy" / "docker" / "healthcheck.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kalaro_healthcheck", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HEALTHCHECK = load()
ANSWERS: dict[str, int] = {}


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(ANSWERS.get(self.path, 404))
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[int]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    ANSWERS.clear()


def test_target_prefers_the_health_port_then_the_gateway() -> None:
    assert HEALTHCHECK.target(["x"], {"KALARO_HEALTH_PORT": "9100"}).endswith(":9100/readyz")
    assert HEALTHCHECK.target(["x"], {"KALARO_HEALTH_PORT": "-1"}).endswith(":8000/readyz")
    assert HEALTHCHECK.target(["x"], {"KALARO_HTTP_PORT": "8080"}).endswith(":8080/readyz")
    assert HEALTHCHECK.target(["x", "http://h/readyz"], {}) == "http://h/readyz"


def test_ready_is_healthy_and_not_ready_is_not(server: int) -> None:
    url = f"http://127.0.0.1:{server}/readyz"
    ANSWERS["/readyz"] = 200
    assert HEALTHCHECK.main(["x", url]) == 0
    ANSWERS["/readyz"] = 503
    ANSWERS["/healthz"] = 200  # alive but not ready: not healthy for depends_on
    assert HEALTHCHECK.main(["x", url]) == 1


def test_a_server_without_readyz_falls_back_to_healthz(server: int) -> None:
    url = f"http://127.0.0.1:{server}/readyz"
    ANSWERS["/healthz"] = 200
    assert HEALTHCHECK.main(["x", url]) == 0
    ANSWERS["/healthz"] = 503
    assert HEALTHCHECK.main(["x", url]) == 1


def test_nothing_listening_is_unhealthy(server: int) -> None:
    from kalaro.devstack import free_port

    assert HEALTHCHECK.main(["x", f"http://127.0.0.1:{free_port()}/readyz"]) == 1
