"""NATS as production runs it: over TLS (deploy/nats/tls.conf) and with a password.

A service given a ``tls://`` URL (``KALARO_NATS_URL``) verifies the server's certificate
against the CA bundle in ``SSL_CERT_FILE`` (or the system's CAs) and talks to it; a
server its CAs do not vouch for gets nothing from it, not even the credentials. A
service that cannot get in (bad certificate, wrong password) says why in its log, once,
without the password, rather than wait in silence.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from kalaro.bus.runner import connect
from kalaro.devstack import NatsServer
from tests.certificates import self_signed


class TlsNatsServer(NatsServer):
    """A nats-server that takes TLS clients only (clients are not asked for certificates)."""

    name = "nats-server-tls"

    def __init__(self, data_dir: Path, cert: Path, key: Path) -> None:
        super().__init__(data_dir)
        self.cert, self.key = cert, key

    def command(self) -> list[str]:
        tls = ["--tls", "--tlscert", str(self.cert), "--tlskey", str(self.key)]
        return [*super().command(), *tls]

    @property
    def url(self) -> str:
        return f"tls://kalaro:s3cret-pw@127.0.0.1:{self.port}"


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[TlsNatsServer, Path]]:
    cert, key = self_signed(tmp_path)
    server = TlsNatsServer(tmp_path / "nats", cert, key)
    server.start()
    yield server, cert
    server.stop()


def _server_info(port: int) -> dict[str, object]:
    """The INFO line a NATS server sends first, in clear, to any TCP client."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        line = raw.makefile("rb").readline()
    assert line.startswith(b"INFO "), line
    return dict(json.loads(line[5:]))


async def test_a_service_verifies_the_server_against_ssl_cert_file_and_talks_over_tls(
    tls_server: tuple[TlsNatsServer, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    server, ca = tls_server
    assert _server_info(server.port).get("tls_required") is True  # no plain clients
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))
    nc = await asyncio.wait_for(connect(server.url, "tls-service"), 15)
    try:

        async def echo(msg) -> None:  # type: ignore[no-untyped-def]
            await msg.respond(b"pong:" + msg.data)

        await nc.subscribe("tls.echo", cb=echo)
        reply = await nc.request("tls.echo", b"ping", timeout=5)
        assert reply.data == b"pong:ping"
        assert nc.connected_url is not None and nc.connected_url.scheme == "tls"
    finally:
        await nc.close()


async def test_a_server_the_cas_do_not_vouch_for_is_refused(
    tls_server: tuple[TlsNatsServer, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    server, _ = tls_server
    # Trust only another CA: the server's self-signed certificate is then unknown.
    (tmp_path / "other").mkdir()
    other_ca, _ = self_signed(tmp_path / "other", "other")
    monkeypatch.setenv("SSL_CERT_FILE", str(other_ca))
    caplog.set_level(logging.WARNING)  # what an operator's log shows
    attempt = asyncio.ensure_future(connect(server.url, "tls-doubter"))
    done, _ = await asyncio.wait({attempt}, timeout=5)
    if done:  # nats-py gave up rather than kept trying: it must not have connected
        assert attempt.exception() is not None
    else:
        attempt.cancel()
        with pytest.raises(asyncio.CancelledError):
            await attempt
    logged = " ".join(f"{r.levelname}:{r.getMessage()}" for r in caplog.records)
    # Once, however often nats-py tried in those seconds (then once a minute).
    assert logged.count("tls-doubter: cannot connect to NATS yet") == 1, logged
    assert "certificate verify failed" in logged, logged
    assert "s3cret-pw" not in logged  # the URL's password stays out of the log


class PasswordNatsServer(NatsServer):
    """A nats-server with one user, as deploy/nats's configuration has."""

    name = "nats-server-auth"

    def command(self) -> list[str]:
        return [*super().command(), "--user", "kalaro", "--pass", "right-pw"]


async def test_a_wrong_nats_password_is_logged_without_the_password(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = PasswordNatsServer(tmp_path / "nats").start()
    try:
        caplog.set_level(logging.WARNING)
        url = f"nats://kalaro:wrong-pw@127.0.0.1:{server.port}"
        attempt = asyncio.ensure_future(connect(url, "locked-out"))
        done, _ = await asyncio.wait({attempt}, timeout=5)
        if done:
            assert attempt.exception() is not None
        else:
            attempt.cancel()
            with pytest.raises(asyncio.CancelledError):
                await attempt
        logged = " ".join(r.getMessage() for r in caplog.records)
        assert "locked-out" in logged and "authorization violation" in logged.lower(), logged
        assert "wrong-pw" not in logged
        # The right password gets in.
        nc = await asyncio.wait_for(
            connect(f"nats://kalaro:right-pw@127.0.0.1:{server.port}", "let-in"), 15
        )
        await nc.close()
    finally:
        server.stop()
