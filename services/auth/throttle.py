"""Sign-in throttling per account and per client address, with its state in Redis.

Each attempt is counted *before* the password is checked, atomically with the limit
check (one Lua script), so a burst of parallel guesses cannot all slip past the
limit while the slow hash runs. A successful sign-in clears the account's counter
and takes its own attempt back off the address counter; what remains are failures.
Counters expire one window after the first failure (fixed window).

Redis keys hold a hash of the email, not the email itself.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

from kalaro.bus import ServiceError
from kalaro.bus.redislink import RedisLink
from kalaro.proto import errors as codes

# KEYS: counters; ARGV[1]: window (ms); ARGV[i + 1]: the limit of KEYS[i].
# Returns {0, 0} when the attempt may go ahead (and has been counted), else
# {i, ms until KEYS[i] expires} for the first counter over its limit.
_CHECK_AND_COUNT = """
for i, key in ipairs(KEYS) do
  local count = tonumber(redis.call('GET', key) or '0')
  if count >= tonumber(ARGV[i + 1]) then
    return {i, redis.call('PTTL', key)}
  end
end
for _, key in ipairs(KEYS) do
  if redis.call('INCR', key) == 1 then
    redis.call('PEXPIRE', key, ARGV[1])
  end
end
return {0, 0}
"""

# KEYS[1]: account counter (deleted); KEYS[2], if given: address counter (decremented).
_SUCCEEDED = """
redis.call('DEL', KEYS[1])
if KEYS[2] and tonumber(redis.call('GET', KEYS[2]) or '0') > 0 then
  redis.call('DECR', KEYS[2])
end
return 1
"""


class Throttle:
    def __init__(
        self,
        redis: RedisLink,
        *,
        max_failures: int,
        address_max_failures: int,
        window_seconds: int,
        prefix: str = "kalaro:auth:throttle:",
    ) -> None:
        self._redis = redis
        self._max = max_failures
        self._address_max = address_max_failures
        self._window_ms = window_seconds * 1000
        self._prefix = prefix
        self._check: Any = redis.register_script(_CHECK_AND_COUNT)
        self._succeeded: Any = redis.register_script(_SUCCEEDED)

    def _keys(self, email: str, address: str) -> list[str]:
        digest = hashlib.sha256(email.encode()).hexdigest()[:32]
        keys = [f"{self._prefix}account:{digest}"]
        # Internal callers without a client address are throttled per account only.
        if address:
            keys.append(f"{self._prefix}address:{address}")
        return keys

    async def attempt(self, email: str, address: str) -> None:
        """Count a sign-in attempt, or raise ``throttled`` if a limit is already reached."""
        keys = self._keys(email, address)
        limits = [self._max, self._address_max][: len(keys)]
        which, ttl_ms = await self._check(keys=keys, args=[self._window_ms, *limits])
        if int(which) == 0:
            return
        retry_after = max(1, math.ceil(int(ttl_ms) / 1000)) if int(ttl_ms) > 0 else 1
        scope = "this account" if int(which) == 1 else "your network address"
        raise ServiceError(
            codes.THROTTLED,
            f"too many failed sign-in attempts for {scope}; try again in {retry_after} seconds",
        )

    async def succeeded(self, email: str, address: str) -> None:
        await self._succeeded(keys=self._keys(email, address), args=[])
