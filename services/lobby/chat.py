"""Table chat: masking offensive words and a per-player rate limit.

Masking is deliberately simple and predictable: a word list (English and
Tagalog/Taglish, ``wordlist.txt``) matched case-insensitively on word boundaries,
tolerant of stretched letters (``gaaago``) and common leetspeak (``g@g0``). A match is
replaced by asterisks of the same length, so the message keeps its shape and nobody
can tell which letters were there.

The rate limit is a sliding window per (table, player) in a Redis sorted set, updated
by one Lua script so every lobby replica enforces the same budget.
"""

from __future__ import annotations

import re
import uuid
from functools import cache
from importlib import resources
from typing import Any

from kalaro.bus.redislink import RedisLink

# Characters people substitute for a letter to slip past a filter.
_LEET: dict[str, str] = {
    "a": "@4",
    "b": "8",
    "e": "3",
    "g": "96",
    "i": "1!|",
    "l": "1|",
    "o": "0",
    "s": "$5",
    "t": "7+",
    "z": "2",
}

# Letters and digits; what may not touch a masked word on either side (so ``ass``
# never masks ``class``). Leet symbols like ``@`` are not letters, which is fine: they
# only ever appear inside a match.
_NOT_WORD_BEFORE = r"(?<![^\W_])"
_NOT_WORD_AFTER = r"(?![^\W_])"
_SEPARATOR = r"[\W_]*"


def _letter(char: str) -> str:
    # Each letter may be stretched ("gaaago"); its leet stand-ins count as the letter.
    return f"[{re.escape(char + _LEET.get(char, ''))}]+"


def _entry_pattern(entry: str) -> str:
    prefix = entry.endswith("*")
    words = entry.rstrip("*").split()
    body = _SEPARATOR.join("".join(_letter(c) for c in word) for word in words)
    if prefix:
        body += r"[^\W_]*"
    return body


def parse_wordlist(text: str) -> list[str]:
    """Entries from the word list's text: one per line, ``#`` comments, case folded."""
    entries = []
    for line in text.splitlines():
        entry = " ".join(line.split("#", 1)[0].split()).casefold()
        if entry:
            entries.append(entry)
    return entries


def compile_wordlist(entries: list[str]) -> re.Pattern[str]:
    """One regex for the whole list; longer entries first so phrases win over words."""
    ordered = sorted(set(entries), key=len, reverse=True)
    alternatives = "|".join(_entry_pattern(e) for e in ordered)
    return re.compile(f"{_NOT_WORD_BEFORE}(?:{alternatives}){_NOT_WORD_AFTER}", re.IGNORECASE)


@cache
def default_pattern() -> re.Pattern[str]:
    text = resources.files("services.lobby").joinpath("wordlist.txt").read_text("utf-8")
    return compile_wordlist(parse_wordlist(text))


def mask(text: str, pattern: re.Pattern[str] | None = None) -> str:
    """``text`` with every offensive word replaced by asterisks of the same length."""
    found = pattern if pattern is not None else default_pattern()
    return found.sub(lambda m: "*" * len(m.group(0)), text)


_WINDOW = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return math.max(1, tonumber(oldest[2]) + tonumber(ARGV[2]) - tonumber(ARGV[1]))
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 0
"""


class ChatLimiter:
    """At most ``limit`` messages per ``window_seconds`` per player per table."""

    def __init__(
        self, redis: RedisLink, prefix: str, *, limit: int = 5, window_seconds: float = 10.0
    ) -> None:
        self._redis = redis
        self._prefix = prefix
        self.limit = limit
        self.window_seconds = window_seconds
        self._script: Any = redis.register_script(_WINDOW)

    async def wait_ms(self, table_id: str, user_id: str, now: float) -> int:
        """Count one message at ``now`` (epoch seconds) if the budget allows it (0), else
        the ms until the oldest message in the window leaves it (a true Retry-After)."""
        key = f"{self._prefix}{table_id}:{user_id}"
        wait = await self._script(
            keys=[key],
            args=[
                int(now * 1000),
                int(self.window_seconds * 1000),
                self.limit,
                uuid.uuid4().hex,
            ],
        )
        return int(wait)
