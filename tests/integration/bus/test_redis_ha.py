"""Redis high availability and Redis's own words, on real servers.

Sentinel: a master, a replica and three sentinels (``redis-server --sentinel``) on
loopback free ports; the master is killed with SIGKILL and the client, given only the
sentinels, carries on against the promoted replica. Refusals (protected mode's
``DENIED``, ``NOAUTH``, ``WRONGPASS``) reach the caller verbatim; ACL users sign in with
the URL's user and password; ``rediss://`` connects with the CA from the TLS options.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from kalaro.bus.redislink import (
    RedisAddress,
    RedisError,
    RedisLink,
    RedisUnavailable,
    ResponseError,
    TlsOptions,
)
from kalaro.devstack import ServerProcess, find_binary, free_port
from tests.certificates import self_signed

MASTER = "kalaro-test"


class _Redis(ServerProcess):
    """A redis-server with extra arguments (replica, password, ACL users, TLS...)."""

    name = "redis-server"

    def __init__(
        self, data_dir: Path, *extra: str, host: str = "127.0.0.1", port: int = 0, bind: bool = True
    ):
        super().__init__(data_dir, port=port or None)
        self.host = host
        self.bind = bind  # False: Redis's default (every interface), as protected mode wants
        self.extra = list(extra)

    def command(self) -> list[str]:
        return [
            find_binary("redis-server"),
            *(["--bind", self.host] if self.bind else []),
            "--port", str(self.port),
            "--dir", str(self.data_dir),
            "--save", "",
            "--appendonly", "no",
            *self.extra,
        ]  # fmt: skip

    def start(self) -> _Redis:
        if self.host == "127.0.0.1":
            super().start()
        else:
            self._start_elsewhere()
        return self

    def _start_elsewhere(self) -> None:
        with open(self.log_file, "ab") as log:
            self.process = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex((self.host, self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start on {self.host}:{self.port}")

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"


class _Sentinel(ServerProcess):
    name = "redis-sentinel"

    def __init__(self, data_dir: Path, master_port: int) -> None:
        super().__init__(data_dir)
        self.master_port = master_port

    def command(self) -> list[str]:
        config = self.data_dir / "sentinel.conf"  # sentinels rewrite their config
        config.write_text(
            f"port {self.port}\nbind 127.0.0.1\ndir {self.data_dir}\n"
            f"sentinel monitor {MASTER} 127.0.0.1 {self.master_port} 2\n"
            f"sentinel down-after-milliseconds {MASTER} 1000\n"
            f"sentinel failover-timeout {MASTER} 10000\n"
            f"sentinel parallel-syncs {MASTER} 1\n"
        )
        return [find_binary("redis-server"), str(config), "--sentinel"]


async def _until(check: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if await check():  # type: ignore[operator]
                return
        except RedisError:
            pass
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


class _Group:
    def __init__(self, root: Path) -> None:
        self.master = _Redis(root / "master").start()
        self.replica = _Redis(
            root / "replica", "--replicaof", "127.0.0.1", str(self.master.port)
        ).start()
        self.sentinels = [_Sentinel(root / f"s{i}", self.master.port) for i in range(3)]

    @property
    def url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels)
        return f"redis+sentinel://{hosts}/{MASTER}"

    def stop(self) -> None:
        for server in (*self.sentinels, self.replica, self.master):
            server.stop()


@pytest.fixture
async def group(tmp_path: Path) -> AsyncIterator[_Group]:
    servers = _Group(tmp_path)
    try:
        replica = RedisLink(servers.replica.url)
        try:

            async def linked() -> bool:
                info = await replica.execute("INFO", "replication")
                return b"master_link_status:up" in info

            await _until(linked, 20, "the replica to sync")
        finally:
            await replica.aclose()
        for sentinel in servers.sentinels:
            sentinel.start()

        async def known() -> bool:
            # Every sentinel knows the replica and the two other sentinels: a failover
            # needs a quorum and somewhere to fail over to.
            for sentinel in servers.sentinels:
                link = RedisLink(f"redis://127.0.0.1:{sentinel.port}")
                try:
                    replicas = await link.execute("SENTINEL", "REPLICAS", MASTER)
                    peers = await link.execute("SENTINEL", "SENTINELS", MASTER)
                finally:
                    await link.aclose()
                if len(replicas) != 1 or len(peers) != 2:
                    return False
            return True

        await _until(known, 30, "the sentinels to find the replica and each other")
        yield servers
    finally:
        servers.stop()


async def test_the_client_follows_the_master_through_a_sentinel_failover(
    group: _Group, unique: str
) -> None:
    link = RedisLink(group.url, connect_timeout=1)
    try:
        assert await link.set(f"{unique}:before", b"1")
        assert link.master == ("127.0.0.1", group.master.port)
        assert (await link.execute("ROLE"))[0] == b"master"
        assert await link.execute("WAIT", 1, 5000) == 1  # the replica has it

        group.master.kill()  # SIGKILL: no goodbye to anyone
        started = time.monotonic()
        written = False
        while time.monotonic() - started < 45:
            try:
                written = await link.set(f"{unique}:after", b"2")
                break
            except RedisUnavailable:
                await asyncio.sleep(0.2)  # down, or the sentinels still electing
        print(f"\n[sentinel] writes resumed {time.monotonic() - started:.1f} s after the kill")
        assert written, "no write succeeded within 45 s of the master's death"
        assert link.master == ("127.0.0.1", group.replica.port)
        assert (await link.execute("ROLE"))[0] == b"master"
        assert await link.get(f"{unique}:before") == b"1"  # replicated before the kill
        assert await link.get(f"{unique}:after") == b"2"
    finally:
        await link.aclose()


async def test_a_demoted_master_is_left_on_readonly_and_never_written_to(
    group: _Group, unique: str
) -> None:
    """A master turned replica under the client's feet (its connection survives) answers
    writes with READONLY: the client asks the sentinels again and checks ROLE, so it
    reports the problem instead of writing to a replica, and recovers with the master."""
    link = RedisLink(group.url, connect_timeout=1)
    admin = RedisLink(group.master.url)
    try:
        assert await link.set(f"{unique}:k", b"1")
        first = await link.execute("CLIENT", "ID")
        await admin.execute("REPLICAOF", "127.0.0.1", group.replica.port)
        try:
            with pytest.raises(RedisUnavailable, match="is a slave"):
                await link.set(f"{unique}:k", b"2")  # READONLY, then the ROLE check
        finally:
            await admin.execute("REPLICAOF", "NO", "ONE")
        assert await link.set(f"{unique}:k", b"3")
        assert await link.execute("CLIENT", "ID") != first  # a new connection
        assert await admin.get(f"{unique}:k") == b"3"
    finally:
        await link.aclose()
        await admin.aclose()


async def test_a_sentinel_that_does_not_answer_is_skipped(group: _Group, unique: str) -> None:
    dead = free_port()
    alive = ",".join(f"127.0.0.1:{s.port}" for s in group.sentinels)
    link = RedisLink(f"redis+sentinel://127.0.0.1:{dead},{alive}/{MASTER}/2", connect_timeout=1)
    try:
        assert await link.set(f"{unique}:k", b"v")
        assert await link.execute("CLIENT", "INFO") is not None
        direct = RedisLink(group.master.url.rsplit("/", 1)[0] + "/2")
        try:
            assert await direct.get(f"{unique}:k") == b"v"  # the URL's database, 2
        finally:
            await direct.aclose()
    finally:
        await link.aclose()


async def test_a_user_the_acl_denies_role_trusts_the_sentinels(
    group: _Group, unique: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A managed Redis may give the application a user without @admin, so ROLE answers
    NOPERM: the client then takes the sentinels' word for the master and works."""
    admin = RedisLink(group.master.url)
    await admin.execute(
        "ACL", "SETUSER", "app", "on", ">app-pw", "~*", "&*", "+@all", "-role"
    )  # fmt: skip
    hosts = ",".join(f"127.0.0.1:{s.port}" for s in group.sentinels)
    link = RedisLink(f"redis+sentinel://app:app-pw@{hosts}/{MASTER}", connect_timeout=1)
    caplog.set_level(logging.INFO, logger="kalaro.redis")
    try:
        with pytest.raises(ResponseError, match="NOPERM"):
            await link.execute("ROLE")  # the user really may not ask
        assert await link.set(f"{unique}:k", b"v")
        assert await link.execute("ACL", "WHOAMI") == b"app"
        assert await admin.get(f"{unique}:k") == b"v"  # written on the master
        assert "ROLE not permitted; trusting the sentinels" in caplog.text
    finally:
        await link.aclose()
        await admin.aclose()


async def test_an_unknown_master_name_says_so(group: _Group) -> None:
    hosts = ",".join(f"127.0.0.1:{s.port}" for s in group.sentinels)
    link = RedisLink(f"redis+sentinel://{hosts}/no-such-master", connect_timeout=1)
    try:
        with pytest.raises(RedisUnavailable, match="knows no master named 'no-such-master'"):
            await link.ping()
    finally:
        await link.aclose()


def test_sentinel_urls() -> None:
    address = RedisAddress(
        "redis+sentinel://app:p%40ss@s1.example:26380,s2.example,[::1]:26381/main/3"
        "?sentinel_password=sp"
    )
    assert address.sentinels == [("s1.example", 26380), ("s2.example", 26379), ("::1", 26381)]
    assert (address.master_name, address.db) == ("main", 3)
    assert (address.username, address.password) == ("app", "p@ss")
    assert (address.sentinel_password, address.tls) == ("sp", False)
    assert RedisAddress("rediss+sentinel://h:1/m").tls
    with pytest.raises(ValueError, match="names sentinels and a master"):
        RedisAddress("redis+sentinel://h:26379/")


# --- Redis's refusals, word for word ------------------------------------------------


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[_Redis]:
    server = _Redis(
        tmp_path, "--requirepass", "rightpw", "--user", "alice", "on", ">alicepw", "~*", "&*",
        "+@all",
    ).start()  # fmt: skip
    yield server
    server.stop()


async def test_noauth_and_wrongpass_reach_the_caller(locked: _Redis) -> None:
    base = f"127.0.0.1:{locked.port}"
    anonymous = RedisLink(f"redis://{base}")
    wrong = RedisLink(f"redis://:nope@{base}")
    right = RedisLink(f"redis://:rightpw@{base}")
    alice = RedisLink(f"redis://alice:alicepw@{base}/1")
    try:
        with pytest.raises(ResponseError, match=r"^NOAUTH"):
            await anonymous.get("k")
        with pytest.raises(RedisUnavailable, match="WRONGPASS"):
            await wrong.get("k")
        assert await right.ping()
        assert await alice.execute("ACL", "WHOAMI") == b"alice"
        assert await alice.set("k", b"a")
    finally:
        for link in (anonymous, wrong, right, alice):
            await link.aclose()


def _outside_address() -> str | None:
    """This machine's first non-loopback IPv4 address (protected mode refuses clients
    from it), or None."""
    try:
        listed = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for address in listed.stdout.split():
        if "." in address and not address.startswith("127."):
            return address
    return None


async def test_protected_mode_denial_reaches_the_caller_verbatim(tmp_path: Path) -> None:
    address = _outside_address()
    if address is None:
        pytest.skip("no non-loopback IPv4 address here: protected mode cannot be shown")
    # No --bind: Redis 6 enforces protected mode only on its default (all) interfaces.
    server = _Redis(
        tmp_path, "--protected-mode", "yes", host=address, port=free_port(), bind=False
    ).start()
    link = RedisLink(server.url, connect_timeout=2)
    try:
        for _ in range(3):  # whether the refusal comes before or after our command
            with pytest.raises(RedisError) as refused:
                await link.get("k")
            assert "DENIED" in str(refused.value)
            assert "protected mode" in str(refused.value)
            assert "nobody asked for" not in str(refused.value)
    finally:
        await link.aclose()
        server.stop()


# --- TLS --------------------------------------------------------------------------------


def _built_with_tls(binary: str) -> bool:
    # A Redis built without TLS stops at the tls-port directive; one with TLS reads past it
    # and stops at the made-up one instead (nothing starts either way).
    probe = subprocess.run(
        [binary, "--tls-port", "0", "--kalaro-no-such-directive", "x"],
        capture_output=True, text=True, check=False, timeout=10,
    )  # fmt: skip
    return ">>> 'tls-port" not in probe.stdout + probe.stderr


async def test_rediss_uses_the_tls_options(tmp_path: Path, unique: str) -> None:
    binary = find_binary("redis-server")
    if not _built_with_tls(binary):
        pytest.skip(f"{binary} was built without TLS support; a Redis with TLS runs this test")
    cert, key = self_signed(tmp_path)
    port = free_port()
    server = _Redis(
        tmp_path / "tls", "--tls-port", str(port), "--tls-cert-file", str(cert),
        "--tls-key-file", str(key), "--tls-ca-cert-file", str(cert),
        "--tls-auth-clients", "no",
    )  # fmt: skip
    server.start()  # the plain port; the TLS port opens with it
    url = f"rediss://127.0.0.1:{port}/0"
    trusting = RedisLink(url, tls=TlsOptions(ca_file=str(cert)))
    unverified = RedisLink(url, tls=TlsOptions(verify="none"))
    strict = RedisLink(url, connect_timeout=2)  # the system's CAs do not know ours
    try:
        assert await trusting.set(f"{unique}:tls", b"1")
        assert await unverified.get(f"{unique}:tls") == b"1"
        with pytest.raises(RedisUnavailable, match="CERTIFICATE_VERIFY_FAILED"):
            await strict.ping()
    finally:
        for link in (trusting, unverified, strict):
            await link.aclose()
        server.stop()
