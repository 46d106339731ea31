#!/usr/bin/env python3
"""The image's HEALTHCHECK: exit 0 when this container's KaLaro process is ready.

A stdlib-only probe (the image has no curl). It asks, on loopback:
- ``KALARO_HEALTHCHECK_URL`` when set (any URL);
- else the health server, ``http://127.0.0.1:$KALARO_HEALTH_PORT/readyz``, when
  ``KALARO_HEALTH_PORT`` is a real port (every service but the gateway);
- else the gateway, ``http://127.0.0.1:$KALARO_HTTP_PORT/readyz`` (default 8000).

``/readyz`` (database, Redis, JetStream) is what ``depends_on: service_healthy`` must
wait for; a server that predates it answers 404 there, and then ``/healthz`` decides.
Usage: ``kalaro-healthcheck [URL]``.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request

TIMEOUT_SECONDS = 2.5


def target(argv: list[str], env: dict[str, str]) -> str:
    if len(argv) > 1:
        return argv[1]
    if env.get("KALARO_HEALTHCHECK_URL"):
        return env["KALARO_HEALTHCHECK_URL"]
    health_port = int(env.get("KALARO_HEALTH_PORT") or -1)
    if health_port > 0:
        return f"http://127.0.0.1:{health_port}/readyz"
    return f"http://127.0.0.1:{int(env.get('KALARO_HTTP_PORT') or 8000)}/readyz"


def status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except (OSError, ValueError) as exc:
        print(f"{url}: {exc}", file=sys.stderr)
        return 0


def main(argv: list[str]) -> int:
    url = target(argv, dict(os.environ))
    code = status(url)
    if code == 404 and url.endswith("/readyz"):
        url = url.removesuffix("/readyz") + "/healthz"
        code = status(url)
    if code == 200:
        return 0
    print(f"{url}: HTTP {code or 'unreachable'}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
