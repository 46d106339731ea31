"""One log format for every process, ids carried across services, no repeated floods.

Format (``KALARO_LOG_FORMAT``): ``json`` writes one object per line::

    {"ts": "2026-12-01T19:45:42.123Z", "level": "WARNING", "service": "wallet",
     "logger": "kalaro.bus", "msg": "...", "request_id": "9f2c1a-3k", "hand_id": "...",
     "table_id": "...", "exc": "Traceback ..."}

(the ids and ``exc`` only when known). ``text`` is the same content as a readable line,
for a terminal. The default, ``auto``, is ``json`` when ``KALARO_ENV=production`` and
``text`` otherwise (``make run``). ``KALARO_LOG_LEVEL`` (default ``INFO``).

Ids: the gateway mints a request id per HTTP request and per WebSocket frame
(:func:`new_request_id`); :mod:`kalaro.bus.client` sends it in the
``Kalaro-Request-Id`` NATS header with every request, and JetStream publishes carry it
too; the receiving service binds it (and the request's ``table_id``/``hand_id``) in
context variables for the duration of the handler, so every line logged there says
which request, hand and table it was about.

Floods: a WARNING or worse identical to one logged in the last 30 s (same logger,
level, text and exception type) is held back and counted; the next one logged after
the 30 s says "(repeated N times in 30 s)". An outage then costs a line per 30 s per
kind of failure, not a traceback every half second.

Secrets: JWTs, ``Bearer`` values and ``token=``/``password=`` values are replaced by
``[redacted]`` in every line, whatever logged them.
"""

from __future__ import annotations

import contextvars
import itertools
import json
import logging
import os
import re
import secrets
import sys
import time
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

REQUEST_HEADER = "Kalaro-Request-Id"

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)
hand_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("hand_id", default=None)
table_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("table_id", default=None)

_IDS = (("request_id", request_id), ("hand_id", hand_id), ("table_id", table_id))

# Request ids: a per-process prefix and a counter (unique, and cheap enough for every
# WebSocket frame; random bytes per frame showed in the gateway's profile elsewhere).
_PREFIX = secrets.token_hex(4)
_COUNTER = itertools.count(1)


def new_request_id() -> str:
    """Mint a request id and bind it to the current context; returns it."""
    rid = f"{_PREFIX}-{next(_COUNTER):x}"
    request_id.set(rid)
    return rid


def bind(*, request: str | None = None, hand: str | None = None, table: str | None = None) -> None:
    """Bind ids to the current context (a task's own copy); None leaves one as it is."""
    if request:
        request_id.set(request)
    if hand:
        hand_id.set(hand)
    if table:
        table_id.set(table)


def bind_from(message: object, headers: Mapping[str, str] | None) -> None:
    """Bind the request id from NATS ``headers`` and the ``table_id``/``hand_id`` the
    decoded ``message`` names; each is unset when absent, so a loop handling one
    message after another carries nothing over."""
    rid = headers.get(REQUEST_HEADER) if headers else None
    request_id.set(rid or None)
    table = getattr(message, "table_id", None)
    table_id.set(table if isinstance(table, str) and table else None)
    hand = getattr(message, "hand_id", None)
    hand_id.set(hand if isinstance(hand, str) and hand else None)


@contextmanager
def bound(**ids: str | None) -> Iterator[None]:
    """``with bound(request=..., hand=..., table=...):`` ids for a block, then restored."""
    variables = {"request": request_id, "hand": hand_id, "table": table_id}
    tokens = [(variables[k], variables[k].set(v)) for k, v in ids.items() if v]
    try:
        yield
    finally:
        for variable, token in reversed(tokens):
            variable.reset(token)


def outgoing_headers(extra: dict[str, str] | None = None) -> dict[str, str] | None:
    """Headers for a NATS publish: ``extra`` plus the bound request id, if any."""
    rid = request_id.get()
    if rid is None:
        return extra
    headers = dict(extra) if extra else {}
    headers[REQUEST_HEADER] = rid
    return headers


# --- secrets ------------------------------------------------------------------------

_SECRETS = (
    # A JWT: three base64url parts, the first an encoded JSON header ("eyJ").
    (re.compile(r"eyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]*"), "[redacted]"),
    (re.compile(r"(?i)(bearer\s+)[\w.~+/=-]+"), r"\1[redacted]"),
    (
        re.compile(
            r"(?i)((?:access_token|refresh_token|token|password|passwd|secret)"
            r"[\"']?\s*[=:]\s*[\"']?)[^&\s\"',;}]+"
        ),
        r"\1[redacted]",
    ),
    # A password inside a URL: nats://user:pw@host, redis+sentinel://:pw@h1,h2/m, postgres…
    (re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^:/@\s]*:)[^@\s/]+(@)"), r"\1[redacted]\2"),
)


def redact(text: str) -> str:
    """``text`` with tokens and passwords replaced by ``[redacted]``."""
    if "ey" not in text and "=" not in text and ":" not in text and "earer" not in text:
        return text
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


# --- rate limiting ------------------------------------------------------------------

REPEAT_WINDOW = 30.0
_MAX_KINDS = 2048


class RepeatFilter(logging.Filter):
    """Hold back a WARNING-or-worse line identical to one let through in the last
    ``window`` seconds; the first one after the window carries the count."""

    def __init__(self, window: float = REPEAT_WINDOW, clock: Any = time.monotonic) -> None:
        super().__init__()
        self.window = window
        self._clock = clock
        self._seen: dict[tuple[str, int, str, str], list[float]] = {}  # [since, held]

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        exc = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else ""
        try:
            text = record.getMessage()
        except Exception:
            text = str(record.msg)
        key = (record.name, record.levelno, text, exc)
        now = self._clock()
        seen = self._seen.get(key)
        if seen is not None and now - seen[0] < self.window:
            seen[1] += 1
            return False
        if seen is not None and seen[1]:
            record.repeated = (int(seen[1]), self.window)
        if len(self._seen) >= _MAX_KINDS:
            self._seen.clear()  # a flood of distinct lines: forget, rather than grow
        self._seen[key] = [now, 0]
        return True


# --- formats --------------------------------------------------------------------------


def _message(record: logging.LogRecord) -> str:
    try:
        text = record.getMessage()
    except Exception:
        text = f"{record.msg!r} {record.args!r}"
    repeated = getattr(record, "repeated", None)
    if repeated:
        text += f" (repeated {repeated[0]} times in {repeated[1]:.0f} s)"
    return text


def _exception(record: logging.LogRecord) -> str | None:
    if record.exc_info and record.exc_info[0] is not None:
        return "".join(traceback.format_exception(*record.exc_info)).rstrip()
    if record.exc_text:
        return record.exc_text
    return None


def _ids(record: logging.LogRecord) -> dict[str, str]:
    ids = {}
    for name, variable in _IDS:
        value = getattr(record, name, None) or variable.get()
        if value:
            ids[name] = str(value)
    return ids


class JsonFormatter(logging.Formatter):
    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        line: dict[str, Any] = {
            "ts": f"{ts}.{int(record.msecs):03d}Z",
            "level": record.levelname,
            "service": self.service,
            "logger": record.name,
            "msg": redact(_message(record)),
        }
        line.update(_ids(record))
        exc = _exception(record)
        if exc is not None:
            line["exc"] = redact(exc)
        return json.dumps(line, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        ts = time.strftime("%H:%M:%S", time.localtime(record.created))
        ids = " ".join(f"{k}={v}" for k, v in _ids(record).items())
        text = f"{ts}.{int(record.msecs):03d} {record.levelname} {self.service} {record.name}: "
        text += _message(record) + (f" [{ids}]" if ids else "")
        exc = _exception(record)
        if exc is not None:
            text += "\n" + exc
        return redact(text)


def log_format(env: Mapping[str, str] | None = None) -> str:
    """``json`` or ``text``: ``KALARO_LOG_FORMAT``, or by ``KALARO_ENV`` when ``auto``."""
    source = os.environ if env is None else env
    chosen = source.get("KALARO_LOG_FORMAT", "auto").strip().lower() or "auto"
    if chosen == "auto":
        return "json" if source.get("KALARO_ENV", "").strip() == "production" else "text"
    if chosen not in ("json", "text"):
        raise ValueError(f"KALARO_LOG_FORMAT must be json, text or auto, not {chosen!r}")
    return chosen


def setup(
    service: str,
    *,
    env: Mapping[str, str] | None = None,
    stream: Any = None,
    fmt: str | None = None,
) -> logging.Handler:
    """Send every logger's lines (uvicorn's too) to stderr in the chosen format, with
    repeats held back. Replaces handlers a previous ``setup`` or ``basicConfig`` put on
    the root logger. Returns the handler."""
    source = os.environ if env is None else env
    chosen = fmt or log_format(source)
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JsonFormatter(service) if chosen == "json" else TextFormatter(service))
    handler.addFilter(RepeatFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(source.get("KALARO_LOG_LEVEL", "INFO").strip().upper() or "INFO")
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        # uvicorn's own configuration gives these their own handlers; ours instead.
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    return handler


__all__ = [
    "REQUEST_HEADER",
    "JsonFormatter",
    "RepeatFilter",
    "TextFormatter",
    "bind",
    "bind_from",
    "bound",
    "hand_id",
    "log_format",
    "new_request_id",
    "outgoing_headers",
    "redact",
    "request_id",
    "setup",
    "table_id",
]
