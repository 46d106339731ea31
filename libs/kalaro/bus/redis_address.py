"""Where and how to reach Redis: the URL (``KALARO_REDIS_URL``) and the TLS options.

The URLs:

- ``redis://[[user]:password@]host[:port][/db]`` (or ``?db=N``); ``rediss://`` for TLS;
  ``unix:///path/to/redis.sock[?db=N]``.
- Sentinel (high availability):
  ``redis+sentinel://[[user]:password@]host1:26379,host2:26379,host3:26379/<master>[/db]``
  (``rediss+sentinel://`` for TLS to the sentinels and the master). The user and
  password are the master's (``AUTH``); ``?sentinel_password=...`` (and
  ``&sentinel_username=...``) authenticate to the sentinels when they require it. The
  client asks the sentinels in turn for the master (``SENTINEL
  get-master-addr-by-name``), checks that the server there says ``ROLE`` master, and
  asks again on every reconnect, so after a failover the next command reaches the new
  master. A ``READONLY`` reply (we reached a demoted master) drops the connection and
  the command is sent once more to the master the sentinels name now.

TLS options (certificate authority, client certificate, how strictly to verify) come
from :class:`TlsOptions`, built from settings by :func:`tls_options`.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal
from urllib.parse import parse_qs, unquote, urlsplit

if TYPE_CHECKING:
    from kalaro.settings import Settings


Verify = Literal["full", "ca", "none"]


@dataclass(frozen=True)
class TlsOptions:
    """How ``rediss://`` connections are secured.

    ``verify``: ``full`` checks the server's certificate against ``ca_file`` (or the
    system's authorities) and its name against the host; ``ca`` checks the certificate
    but not the name (a master found through Sentinel is named by its IP address, which
    certificates seldom list); ``none`` encrypts without checking anything (tests only).
    ``cert_file``/``key_file``: a client certificate, for servers with
    ``tls-auth-clients yes``.
    """

    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    verify: Verify = "full"

    def context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=self.ca_file or None)
        if self.verify != "full":
            context.check_hostname = False
        if self.verify == "none":
            context.verify_mode = ssl.CERT_NONE
        if self.cert_file:
            context.load_cert_chain(self.cert_file, self.key_file or None)
        return context


def tls_options(settings: Settings) -> TlsOptions:
    """The TLS options in ``KALARO_REDIS_TLS_*`` settings."""
    return TlsOptions(
        ca_file=settings.redis_tls_ca_file,
        cert_file=settings.redis_tls_cert_file,
        key_file=settings.redis_tls_key_file,
        verify=settings.redis_tls_verify,
    )


_SCHEMES = ("redis", "rediss", "unix", "redis+sentinel", "rediss+sentinel")


class RedisAddress:
    """Where and how to connect, from a ``redis://``, ``rediss://``, ``unix://`` or
    ``redis+sentinel://`` URL (see the module's documentation)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        query = parse_qs(parts.query)
        if parts.scheme not in _SCHEMES:
            raise ValueError(
                f"not a Redis URL: {url!r} (redis://, rediss://, unix:// or redis+sentinel://)"
            )
        self.unix_path = parts.path if parts.scheme == "unix" else None
        self.tls = parts.scheme.startswith("rediss")
        self.sentinels: list[tuple[str, int]] = []
        self.master_name = ""
        self.sentinel_username = query.get("sentinel_username", [""])[0] or None
        self.sentinel_password = query.get("sentinel_password", [""])[0] or None
        userinfo, _, hosts = parts.netloc.rpartition("@")
        user, _, password = userinfo.partition(":")
        self.username = unquote(user) if user else None
        self.password = unquote(password) if password else None
        db = query.get("db", [""])[0]
        if parts.scheme.endswith("+sentinel"):
            # urlsplit cannot read several hosts; the netloc is split by hand.
            for host in hosts.split(","):
                name, port = _host_port(host.strip(), 26379)
                self.sentinels.append((name, port))
            path = [p for p in parts.path.split("/") if p]
            if not path or not self.sentinels:
                raise ValueError(f"a Sentinel URL names sentinels and a master: {url!r}")
            self.master_name = unquote(path[0])
            db = db or (path[1] if len(path) > 1 else "")
            self.host, self.port = "", 0  # the master: found when connecting
        else:
            self.host = parts.hostname or "127.0.0.1"
            self.port = parts.port or 6379
            db = db or (parts.path.strip("/") if parts.scheme != "unix" else "")
        self.db = int(db or 0)

    def __str__(self) -> str:
        if self.sentinels:
            where = ",".join(f"{h}:{p}" for h, p in self.sentinels)
            return f"redis master {self.master_name!r} via sentinels {where} (db {self.db})"
        where = self.unix_path or f"{self.host}:{self.port}"
        return f"redis at {where} (db {self.db})"


def _host_port(text: str, default_port: int) -> tuple[str, int]:
    if text.startswith("["):  # [::1]:26379
        host, _, rest = text[1:].partition("]")
        return host, int(rest.lstrip(":") or default_port)
    host, _, port = text.rpartition(":") if ":" in text else (text, "", "")
    return host or "127.0.0.1", int(port or default_port)
