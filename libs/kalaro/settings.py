"""Settings for every process, read from ``KALARO_*`` environment variables.

One struct for the whole system keeps names consistent across services; each
service reads only what it needs. Defaults suit ``make run`` on one machine.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import msgspec

_PREFIX = "KALARO_"

_GIB = 1024**3


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    # "development" (the default) or "production": in production the services that own
    # SQL tables refuse to start on the SQLite fallback (see ``production_problem``).
    env: Literal["development", "production"] = "development"
    # Infrastructure. ``nats_url`` may list several servers, comma-separated
    # ("nats://a:4222,nats://b:4222"): a client fails over between them.
    nats_url: str = "nats://127.0.0.1:4222"
    # redis://, rediss:// (TLS), unix:// or redis+sentinel://s1:26379,s2:26379/<master>
    # (see kalaro.bus.redislink for every form).
    redis_url: str = "redis://127.0.0.1:6379/0"
    # TLS for rediss:// (and rediss+sentinel://): a CA bundle (default: the system's),
    # a client certificate and key (servers with tls-auth-clients), and how strictly the
    # server is checked: "full" (certificate and host name), "ca" (certificate only:
    # Sentinel names masters by IP address) or "none" (encrypt only; never in production).
    redis_tls_ca_file: str = ""
    redis_tls_cert_file: str = ""
    redis_tls_key_file: str = ""
    redis_tls_verify: Literal["full", "ca", "none"] = "full"
    database_url: str = "sqlite+aiosqlite:///var/kalaro.db"
    var_dir: str = "var"
    # JetStream streams (RESULTS, EVENTS): copies kept by a NATS cluster, and how much
    # of each stream is kept. Replicas 0 (the default): as many as the cluster has
    # nodes, at most 3 (1 on a single server), read from the server at start
    # (kalaro.bus.replicas); set, exactly that many. A hand's result or event is ~1 KB,
    # so 1 GiB is about a million of them; messages stay after they are consumed, until
    # they are this old or the stream is this big (then the oldest go). See "Operating
    # it" in the README for the sizing.
    stream_replicas: int = 0
    results_stream_max_age_days: float = 7.0
    results_stream_max_bytes: int = _GIB
    events_stream_max_age_days: float = 7.0
    events_stream_max_bytes: int = _GIB
    # Gateway
    http_host: str = "127.0.0.1"
    http_port: int = 8000
    # permessage-deflate on /ws: views are small JSON, and compressing every frame cost
    # the gateway 15% of its CPU under load (bench/bench_tables.py); turn on for
    # bandwidth-starved deployments.
    ws_compression: bool = False
    # Clients ping at least this often; a socket silent for three heartbeats is closed.
    ws_heartbeat_seconds: int = 20
    # Sockets one account may hold open on one gateway process (tabs, devices); one more
    # is refused with an error frame and close code 1008. 0: no limit.
    ws_sockets_per_user: int = 16
    # Frames a socket may send a second, and in a burst; more get a rate_limited error
    # frame (nothing else happens). No person sends 20 a second; a load test may want 0
    # (no limit).
    ws_frame_rate: float = 20.0
    ws_frame_burst: float = 40.0
    # A request (headers and body) must arrive within this many seconds of the connection
    # (or of the request's first byte), or the gateway answers 408 and closes: a client
    # that sends nothing, or a byte at a time, does not hold a connection for ever.
    http_request_timeout_seconds: float = 10.0
    # REST rate limits (per gateway process, in-process token buckets): requests a second
    # and burst per signed-in user, and per client address (every HTTP request, signed
    # in or not). Over either, 429 with Retry-After. 0 turns a limit off.
    rest_user_rate: float = 20.0
    rest_user_burst: float = 60.0
    rest_address_rate: float = 100.0
    rest_address_burst: float = 300.0
    # Proxies (CIDRs, e.g. "10.0.0.0/8,fd00::/8") whose X-Forwarded-For the gateway
    # believes. Empty: the client address is the socket's peer, and the header is ignored.
    trusted_proxies: tuple[str, ...] = ()
    # Per-service health and metrics over HTTP (0 = pick a free port, -1 = off):
    # /healthz (liveness), /readyz (readiness: NATS, and the database, Redis and
    # JetStream streams the service uses) and /metrics. The address to listen on:
    # loopback by default; 0.0.0.0 in a container, so probes and Prometheus reach it.
    health_port: int = -1
    health_host: str = "127.0.0.1"
    # Engine replicas own partitions of a game's tables by a lease in Redis, renewed five
    # times a lease: a dead replica's tables move within about this long plus a fifth.
    engine_lease_ms: int = 1500
    # Auth
    jwt_private_key_file: str = "var/keys/jwt-ed25519.pem"
    jwt_issuer: str = "kalaro"
    jwt_audience: str = "kalaro-clients"
    access_token_seconds: int = 900
    refresh_token_days: int = 30
    google_client_id: str = ""
    google_jwks_file: str = ""  # a JWKS document with Google's signing keys
    google_issuers: tuple[str, ...] = ("https://accounts.google.com", "accounts.google.com")
    # Sign-in throttling (services/auth/throttle.py; counters in Redis, so every gateway
    # and auth replica shares them). Only failures count, within a window. A device that
    # signed in to an account before (its signed cookie) is never held up by the
    # account's failures; a new device is slowed down after ``throttle_max_failures``
    # (waits doubling up to ``throttle_max_delay_seconds``) and needs an emailed one-time
    # code after ``throttle_account_max_failures``: never a hard lock. One address may
    # fail ``throttle_address_max_failures`` times over all accounts (generous: a
    # carrier's address may carry hundreds of players). A device cookie stops counting
    # as known after ``throttle_device_max_failures`` failures of its own.
    throttle_window_seconds: int = 900
    throttle_max_failures: int = 5
    throttle_max_delay_seconds: int = 60
    throttle_account_max_failures: int = 15
    throttle_address_max_failures: int = 200
    throttle_device_max_failures: int = 10
    throttle_device_days: int = 180
    # Mail (verification links): an SMTP server ("smtp://host:25", "smtps://user:pass@host:465",
    # "smtp+starttls://host:587"). Empty: mails are written to <var_dir>/mail/*.eml and the
    # link is logged (development). ``public_url`` is where links point (default: the
    # gateway's own address).
    smtp_url: str = ""
    mail_from: str = "KaLaro <no-reply@kalaro.local>"
    public_url: str = ""
    verify_token_hours: int = 24
    admin_email: str = ""
    admin_password: str = ""
    # Wallet
    welcome_grant: int = 1000
    # The reconciler (services/wallet/reconciler.py) looks at hands open this often, and
    # releases a hold whose hand its engine has no trace of after this many minutes.
    reconcile_seconds: int = 30
    hold_release_minutes: int = 10
    # History: finished hands are kept this many days (0: for ever, the default); the
    # history service prunes older ones once a day (services/history/retention.py).
    history_retention_days: int = 0
    # Lobby: a practice table with nothing happening for this long is ended (bots leave)
    practice_idle_minutes: int = 30
    # ...and one player may have this many practice tables open at once (one more is
    # refused with ``practice_limit`` until they leave one or it goes idle)
    practice_tables_per_player: int = 3
    # Presence (a seat's player connected, reconnecting or offline): a seat whose sockets
    # all went away shows "reconnecting" this long, then "offline". Gateways re-announce
    # their seated sockets this often; the lobby forgets a gateway silent for three such
    # periods (it crashed), so nobody stays "connected" for ever.
    presence_grace_seconds: float = 30.0
    presence_refresh_seconds: float = 30.0


def load_settings(env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
    """Settings from ``env`` (default: the process environment) plus explicit overrides.

    ``DATABASE_URL`` and ``NATS_URL``/``REDIS_URL`` without the prefix are honoured too,
    since deployment platforms commonly set those names.
    """
    source: Mapping[str, str] = os.environ if env is None else env
    fields = {f.name: f for f in msgspec.structs.fields(Settings)}
    raw: dict[str, object] = {}
    for name in ("DATABASE_URL", "NATS_URL", "REDIS_URL"):
        if name in source:
            raw[name.lower()] = source[name]
    for key, value in source.items():
        if key.startswith(_PREFIX) and key[len(_PREFIX) :].lower() in fields:
            raw[key[len(_PREFIX) :].lower()] = value
    raw.update(overrides)
    for name, raw_value in list(raw.items()):
        if isinstance(raw_value, str) and name in fields and fields[name].type is not str:
            raw[name] = _parse(raw_value, fields[name].type)
    return msgspec.convert(raw, Settings, strict=False)


def nats_servers(url: str) -> list[str]:
    """The servers in a ``KALARO_NATS_URL``: one URL, or several comma-separated."""
    servers = [part.strip() for part in url.split(",") if part.strip()]
    if not servers:
        raise ValueError(f"no NATS server in {url!r}")
    return servers


DATABASE_URL_VARIABLES = ("KALARO_DATABASE_URL", "DATABASE_URL")


def production_problem(settings: Settings, env: Mapping[str, str] | None = None) -> str | None:
    """Why a service that owns SQL tables must not start, or None when it may.

    In production (``KALARO_ENV=production``) the database must be named explicitly:
    the SQLite file under ``var/`` that development falls back to would quietly keep
    users and credits on one container's disk.
    """
    if settings.env != "production":
        return None
    source: Mapping[str, str] = os.environ if env is None else env
    if any(source.get(name, "").strip() for name in DATABASE_URL_VARIABLES):
        return None
    return (
        "KALARO_ENV=production needs a database: set KALARO_DATABASE_URL (or DATABASE_URL),"
        " e.g. postgresql+asyncpg://kalaro:<password>@<host>:5432/kalaro"
    )


def _parse(value: str, type_: object) -> object:
    if type_ == tuple[str, ...]:
        return tuple(v.strip() for v in value.split(",") if v.strip())
    return value  # msgspec converts "8000" -> 8000 in non-strict mode


def var_path(settings: Settings, *parts: str) -> Path:
    path = Path(settings.var_dir, *parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path
