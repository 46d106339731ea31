"""Hostile input: limits on what the gateway reads, and what it says back.

- **Depth**: a JSON body or WebSocket frame nested deeper than :data:`MAX_DEPTH` is
  refused before it is decoded (a decoder recursing a thousand levels raised
  ``RecursionError``, a 500). Counting brackets in C is the fast path; only a payload
  with more brackets than the limit is scanned byte by byte.
- **Rate**: in-process token buckets per user and per address (each gateway replica
  keeps its own, so the effective limit behind N replicas is up to N times these).
- **Headers**: a Content-Security-Policy the web client passes, and the usual others,
  on every HTTP response.
- **Logs**: uvicorn's access and WebSocket lines never show a ``token=`` value.
"""

from __future__ import annotations

import logging
import math
import re
import time

#: Deepest nesting of arrays and objects a client may send. Real bodies and frames
#: nest three or four levels.
MAX_DEPTH = 32
#: Largest REST body and WebSocket frame, in bytes (a table's options or a chat line are
#: the biggest real ones, well under 1 KB).
MAX_BODY_BYTES = 64 * 1024

_OPEN = frozenset(b"[{")
_CLOSE = frozenset(b"]}")
_QUOTE = ord('"')
_BACKSLASH = ord("\\")
_REF = re.compile(rb"\s*:\s*(-?\d{1,18})")


def scan(raw: bytes) -> tuple[int, int | None]:
    """The deepest nesting in ``raw`` (JSON), and its top-level ``ref`` if one is readable.

    Strings are skipped (a bracket in a string does not count). Pure Python: call it
    only on payloads already bounded in size (see :func:`too_deep`).
    """
    depth = deepest = 0
    ref: int | None = None
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == _QUOTE:
            start = i + 1
            i = start
            while i < n and raw[i] != _QUOTE:
                i += 2 if raw[i] == _BACKSLASH else 1
            if depth == 1 and ref is None and raw[start:i] == b"ref":
                match = _REF.match(raw, i + 1)
                if match:
                    ref = int(match.group(1))
        elif c in _OPEN:
            depth += 1
            deepest = max(deepest, depth)
        elif c in _CLOSE:
            depth -= 1
        i += 1
    return deepest, ref


def too_deep(raw: bytes) -> bool:
    """Whether ``raw`` nests deeper than :data:`MAX_DEPTH` (cheap for normal payloads)."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return False
    return scan(raw)[0] > MAX_DEPTH


class TokenBucket:
    __slots__ = ("burst", "rate", "stamp", "tokens")  # one per socket, too

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = time.monotonic()

    def refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def take(self) -> bool:
        self.refill(time.monotonic())
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    def wait(self) -> float:
        """Seconds until the next token (after a refused ``take``)."""
        return (1 - self.tokens) / self.rate if self.rate > 0 else 60.0


class RateLimited(Exception):
    def __init__(self, what: str, retry_after: float) -> None:
        super().__init__(f"too many requests from this {what}; retry later")
        self.retry_after = max(1, math.ceil(retry_after))


class RateLimiter:
    """One token bucket per key (a user id, an address); full, idle buckets are dropped."""

    MAX_KEYS = 10_000

    def __init__(self, what: str, rate: float, burst: float) -> None:
        self.what = what
        self.rate = rate
        self.burst = burst
        self.buckets: dict[str, TokenBucket] = {}

    def check(self, key: str) -> None:
        """Take a token for ``key``, or raise :class:`RateLimited`."""
        if self.rate <= 0:  # 0 turns the limit off
            return
        bucket = self.buckets.get(key)
        if bucket is None:
            if len(self.buckets) >= self.MAX_KEYS:
                self._prune()
            bucket = self.buckets[key] = TokenBucket(self.rate, self.burst)
        if not bucket.take():
            raise RateLimited(self.what, bucket.wait())

    def _prune(self) -> None:
        now = time.monotonic()
        for key, bucket in list(self.buckets.items()):
            bucket.refill(now)
            if bucket.tokens >= bucket.burst:
                del self.buckets[key]


# --- response headers ----------------------------------------------------------------
# Google Identity Services (the web client's "Sign in with Google") loads a script,
# a stylesheet and an iframe from accounts.google.com/gsi/.
_GSI = "https://accounts.google.com/gsi/"
CSP = "; ".join(
    (
        "default-src 'self'",
        f"script-src 'self' {_GSI}client",
        f"style-src 'self' {_GSI}style",
        "img-src 'self' data:",
        f"connect-src 'self' {_GSI}",
        f"frame-src {_GSI}",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
#: The API docs pages (/schema, /schema/swagger) load their renderers from a CDN and
#: start them with an inline script: they get only the framing rule.
DOCS_CSP = "frame-ancestors 'none'"

_COMMON = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
)


def security_headers(path: str) -> list[tuple[bytes, bytes]]:
    csp = DOCS_CSP if path == "/schema" or path.startswith("/schema/") else CSP
    return [(b"content-security-policy", csp.encode()), *_COMMON]


def header_lines(headers: list[tuple[bytes, bytes]]) -> bytes:
    """Headers as raw HTTP/1.1 lines, each ending in CRLF: for the answers written
    straight to the socket (a 408, a refused WebSocket handshake)."""
    return b"".join(name + b": " + value + b"\r\n" for name, value in headers)


# --- logs ----------------------------------------------------------------------------
_TOKEN = re.compile(r"((?:^|[?&])(?:access_)?token=)[^&\s\"]*")


def redact(text: str) -> str:
    return _TOKEN.sub(r"\1[redacted]", text)


class RedactTokens(logging.Filter):
    """Replaces ``token=`` query values in a record's message arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and record.args:
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.msg, str) and "token=" in record.msg:
            record.msg = redact(record.msg)
        return True


_REDACTOR = RedactTokens()


def redact_tokens_in_server_logs() -> None:
    """Install the filter on uvicorn's loggers (the access log; WebSocket lines go to
    ``uvicorn.error``). Safe to call more than once."""
    for name in ("uvicorn.access", "uvicorn.error"):
        logger = logging.getLogger(name)
        if _REDACTOR not in logger.filters:
            logger.addFilter(_REDACTOR)
