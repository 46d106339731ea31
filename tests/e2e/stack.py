"""The whole stack as ``make run`` starts it, for tests that act as a client would.

Every service in :data:`kalaro.launcher.SERVICES` runs as its own process
(``python -m services.<name>``) against the session's real nats-server and
redis-server and a fresh SQLite file. The auth service trusts a Google key set the
tests generate, so Google sign-in is exercised end to end with tokens we sign.
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path
from typing import cast

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

from kalaro.devstack import NatsServer, RedisServer, die_with_parent, free_port, wait_for_port
from kalaro.launcher import ServiceSpec

GOOGLE_CLIENT_ID = "kalaro-tests.apps.googleusercontent.com"
ADMIN_EMAIL = "root-admin@kalaro.test"
ADMIN_PASSWORD = "an admin passphrase 4 tests"


def _b64(n: int) -> str:
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@dataclass
class GoogleSigner:
    """Plays Google: signs ID tokens with a key the auth service was told to trust."""

    key: rsa.RSAPrivateKey = field(
        default_factory=lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )
    kid: str = "test-google-key"

    def jwks(self) -> dict[str, object]:
        numbers = self.key.public_key().public_numbers()
        jwk = {"kty": "RSA", "kid": self.kid, "alg": "RS256", "use": "sig"}
        jwk |= {"n": _b64(numbers.n), "e": _b64(numbers.e)}
        return {"keys": [jwk]}

    def id_token(self, sub: str, email: str, **overrides: object) -> str:
        now = int(time.time())
        claims: dict[str, object] = {
            "iss": "https://accounts.google.com",
            "aud": GOOGLE_CLIENT_ID,
            "sub": sub,
            "email": email,
            "email_verified": True,
            "name": email.split("@")[0],
            "iat": now,
            "exp": now + 600,
        }
        claims.update(overrides)
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": self.kid})


_running: list[Stack] = []


def mails_to(var_dir: Path, email: str) -> list[EmailMessage]:
    """The mails the auth service wrote for ``email`` (no SMTP server in tests:
    ``<var_dir>/mail/*.eml``), oldest first."""
    found = []
    needle = email.encode()
    for path in sorted((var_dir / "mail").glob("*.eml")):
        raw = path.read_bytes()
        if needle not in raw:
            continue
        msg = cast(EmailMessage, message_from_bytes(raw, policy=default))
        if msg["To"] == email:
            found.append(msg)
    return found


def mailed_token(var_dir: Path, email: str, page: str = "verify") -> str:
    """The token of the newest ``#/<page>?token=`` link mailed to ``email``."""
    for msg in reversed(mails_to(var_dir, email)):
        match = re.search(rf"/#/{page}\?token=([A-Za-z0-9_-]+)", msg.get_content())
        if match:
            return match.group(1)
    raise AssertionError(f"no {page} link was mailed to {email}")


def verify_email(var_dir: Path, base_url: str, email: str) -> None:
    """Follow the newest verification link mailed to ``email``, as its page's button
    does (the welcome grant follows through JetStream)."""
    token = mailed_token(var_dir, email)
    with httpx.Client(base_url=base_url, timeout=15) as client:
        r = client.post("/api/auth/verify", json={"token": token})
    assert r.status_code == 200, r.text


def running() -> Stack:
    """The session's stack, for helpers handed only a page or an HTTP client (they read
    its mail folder to verify the accounts they sign up)."""
    assert _running, "the e2e stack fixture is not running"
    return _running[-1]


class Stack:
    def __init__(self, root: Path, nats: NatsServer, redis: RedisServer) -> None:
        self.root = root
        self.nats = nats
        self.redis = redis
        self.http_port = free_port()
        self.base_url = f"http://127.0.0.1:{self.http_port}"
        self.google = GoogleSigner()
        jwks_file = root / "google-jwks.json"
        jwks_file.write_text(json.dumps(self.google.jwks()))
        self.env = dict(os.environ)
        self.env.update(
            KALARO_NATS_URL=nats.url,
            KALARO_REDIS_URL=redis.url,
            KALARO_DATABASE_URL=f"sqlite+aiosqlite:///{root / 'kalaro.db'}",
            KALARO_VAR_DIR=str(root),
            KALARO_JWT_PRIVATE_KEY_FILE=str(root / "keys" / "jwt.pem"),
            KALARO_HTTP_PORT=str(self.http_port),
            KALARO_GOOGLE_CLIENT_ID=GOOGLE_CLIENT_ID,
            KALARO_GOOGLE_JWKS_FILE=str(jwks_file),
            KALARO_ADMIN_EMAIL=ADMIN_EMAIL,
            KALARO_ADMIN_PASSWORD=ADMIN_PASSWORD,
            KALARO_WELCOME_GRANT="1000",
            KALARO_WS_HEARTBEAT_SECONDS="3",  # idle sockets close after 9 s (tested)
            KALARO_BOT_THINK_MS="40",  # bots think briefly, so whole hands fit in a test
            KALARO_PRESENCE_GRACE_SECONDS="2",  # reconnecting → offline fits in a test
            # Every test's clients share one address: the REST rate limits stay on, but
            # well above what the suite sends (tests/integration/gateway tests them).
            KALARO_REST_ADDRESS_RATE="1000",
            KALARO_REST_ADDRESS_BURST="3000",
            # Sign-in throttling reaches its emailed-code step within seconds (the waits
            # stop at 4 s, the code after 8 failures): test_sign_in_throttle_browser.py.
            KALARO_THROTTLE_MAX_DELAY_SECONDS="4",
            KALARO_THROTTLE_ACCOUNT_MAX_FAILURES="8",
            PYTHONUNBUFFERED="1",
        )
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, spec: ServiceSpec, env: dict[str, str] | None = None) -> None:
        """Run ``spec`` with the stack's environment (and ``env`` on top)."""
        log = open(self.root / f"{spec.name}.log", "ab")  # noqa: SIM115 - lives with the process
        self.processes[spec.name] = subprocess.Popen(
            [sys.executable, "-m", spec.module, *spec.args],
            env={**self.env, **(env or {})},
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent,  # a killed test run leaves no services behind
        )

    def start_gateway(self, name: str, **env: str) -> str:
        """Another gateway process (``KALARO_*`` settings in ``env``), on a port of its
        own: its base URL, once it answers."""
        port = free_port()
        self.start(ServiceSpec(name, "services.gateway"), {**env, "KALARO_HTTP_PORT": str(port)})
        wait_for_port(port, timeout=30)
        base_url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        with httpx.Client(base_url=base_url) as client:
            while client.get("/readyz").status_code != 200:
                assert time.monotonic() < deadline, f"{name} not ready:\n{self.log(name)[-3000:]}"
                time.sleep(0.1)
        return base_url

    def stop(self, name: str, sig: int = signal.SIGTERM) -> None:
        process = self.processes.pop(name)
        process.send_signal(sig)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def log(self, name: str) -> str:
        return (self.root / f"{name}.log").read_text(errors="replace")

    def mails_to(self, email: str) -> list[EmailMessage]:
        return mails_to(self.root, email)

    def mailed_token(self, email: str, page: str = "verify") -> str:
        return mailed_token(self.root, email, page)

    def verify_email(self, email: str) -> None:
        verify_email(self.root, self.base_url, email)

    def wait_ready(self, timeout: float = 60) -> None:
        wait_for_port(self.http_port, timeout=timeout)
        deadline = time.monotonic() + timeout
        with httpx.Client(base_url=self.base_url) as client:
            while time.monotonic() < deadline:
                # Ready when the gateway can reach auth: the public config + a sign-in attempt.
                r = client.post(
                    "/api/auth/sign-in", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}
                )
                if r.status_code == 200:
                    return
                time.sleep(0.2)
        logs = "\n".join(f"--- {n}\n{self.log(n)[-3000:]}" for n in self.processes)
        raise RuntimeError(f"stack not ready in {timeout}s\n{logs}")
