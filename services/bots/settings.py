"""The bots service's settings: ``KALARO_BOT_*`` variables beside the shared ones.

* ``KALARO_BOT_GATEWAY_URL``: where bots connect, as any client would (default: the
  gateway of this host, from ``KALARO_HTTP_HOST``/``KALARO_HTTP_PORT``).
* ``KALARO_BOT_THINK_MS``: the thinking delay before each move (default 800), so people
  at the table can follow; it is always cut to a small share of any running time limit.
* ``KALARO_BOT_SECRET``: the secret bot passwords are derived from. Every replica must
  share it (Kubernetes: put it in ``kalaro-secrets``); without it a random one is kept in
  ``var/bots/secret``. Losing it is harmless: the service resets its bots' passwords.
* ``KALARO_BOT_POLICY`` (``smart`` or ``random``) and ``KALARO_BOT_POOL_SIZE`` (how many
  bot accounts to play with; each table needs distinct ones).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

from kalaro.bots import POLICY_NAMES
from kalaro.settings import Settings, var_path

DEFAULT_THINK_MS = 800
DEFAULT_POOL_SIZE = 16
MAX_THINK_MS = 10_000
MIN_POOL_SIZE = 4  # a Mahjong table needs three bots besides its host


@dataclass(frozen=True)
class BotSettings:
    gateway_url: str
    secret: bytes
    think_ms: int = DEFAULT_THINK_MS
    policy: str = "smart"
    pool_size: int = DEFAULT_POOL_SIZE
    redis_prefix: str = "kalaro:bots:"


def _gateway_url(settings: Settings) -> str:
    # A gateway listening on every interface is reached on loopback from this host.
    host = settings.http_host
    if host in ("", "0.0.0.0", "::"):
        host = "127.0.0.1"
    return f"http://{host}:{settings.http_port}"


def _stored_secret(settings: Settings) -> bytes:
    path = var_path(settings, "bots", "secret")
    if not path.exists():
        path.write_text(secrets.token_hex(32))
        path.chmod(0o600)
    return path.read_text().strip().encode()


def load_bot_settings(settings: Settings, env: Mapping[str, str] | None = None) -> BotSettings:
    """The bots' settings from ``env`` (default: the process environment)."""
    source: Mapping[str, str] = os.environ if env is None else env
    think_ms = int(source.get("KALARO_BOT_THINK_MS", DEFAULT_THINK_MS))
    if not 0 <= think_ms <= MAX_THINK_MS:
        raise ValueError(f"KALARO_BOT_THINK_MS must be 0..{MAX_THINK_MS}, not {think_ms}")
    policy = source.get("KALARO_BOT_POLICY", "smart")
    if policy not in POLICY_NAMES:
        raise ValueError(f"KALARO_BOT_POLICY must be one of {', '.join(POLICY_NAMES)}")
    pool_size = int(source.get("KALARO_BOT_POOL_SIZE", DEFAULT_POOL_SIZE))
    if pool_size < MIN_POOL_SIZE:
        raise ValueError(f"KALARO_BOT_POOL_SIZE must be at least {MIN_POOL_SIZE}")
    secret = source.get("KALARO_BOT_SECRET", "")
    return BotSettings(
        gateway_url=(source.get("KALARO_BOT_GATEWAY_URL") or _gateway_url(settings)).rstrip("/"),
        secret=secret.encode() if secret else _stored_secret(settings),
        think_ms=think_ms,
        policy=policy,
        pool_size=pool_size,
    )
