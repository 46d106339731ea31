"""A throwaway TLS certificate for tests that start a server with TLS on loopback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


def self_signed(where: Path, name: str = "server") -> tuple[Path, Path]:
    """``(cert, key)`` for localhost and 127.0.0.1, valid for a day; the certificate is
    its own CA, so a client that trusts it (and only such a client) verifies the server.
    Skips the test, saying why, when openssl cannot make one."""
    cert, key = where / f"{name}-cert.pem", where / f"{name}-key.pem"
    done = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert),
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        capture_output=True,
        check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"openssl could not make a certificate: {done.stderr.decode()[-200:]}")
    return cert, key
