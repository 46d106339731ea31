"""Sign-in throttling that an attacker cannot turn against the account's owner.

Three counters, all in Redis, fixed windows of ``window_seconds``:

* **account + address** (``max_failures``, default 5): the guesses one address may make
  at one account. This is the lock a guesser runs into; the owner signing in from
  anywhere else is not affected by it.
* **address** (``address_max_failures``, default 20): one address's budget across all
  accounts, so one address cannot spray guesses over many accounts.
* **account** (``account_max_failures``, default 100): a global budget per account
  against guessing from many addresses at once. It is much higher than the per-address
  lock, and it does *not* apply to an address the account has signed in from
  successfully before (remembered for ``known_address_days``): a botnet can stop new
  devices from signing in to an account for a window, but never the owner at home.
  We chose this over a slow-down (sleeping before answering): a delay per request is
  defeated by sending requests in parallel, and holding them costs the service.

Each attempt is counted *before* the password is checked, atomically with the limit
checks (one Lua script), so a burst of parallel guesses cannot all slip past a limit
while the slow hash runs. A success clears the account+address counter and takes its
own attempt back off the others; what remains are failures.

Redis keys hold a hash of the email, not the email itself.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

from kalaro.bus import ServiceError
from kalaro.bus.redislink import RedisLink
from kalaro.proto import errors as codes

# KEYS[1]: account+address counter; KEYS[2]: account counter; KEYS[3]: the "known
# address" marker; KEYS[4] (optional): address counter.
# ARGV[1]: window (ms); ARGV[2..4]: limits of the pair, account and address counters.
# Returns {0, 0} when the attempt may go ahead (and has been counted), else
# {which, ms until that counter expires}: 1 pair, 2 account, 3 address.
_CHECK_AND_COUNT = """
local checks = {{KEYS[1], ARGV[2], 1}}
if redis.call('EXISTS', KEYS[3]) == 0 then
  table.insert(checks, {KEYS[2], ARGV[3], 2})
end
if KEYS[4] then
  table.insert(checks, {KEYS[4], ARGV[4], 3})
end
for _, check in ipairs(checks) do
  local count = tonumber(redis.call('GET', check[1]) or '0')
  if count >= tonumber(check[2]) then
    return {check[3], redis.call('PTTL', check[1])}
  end
end
for _, key in ipairs({KEYS[1], KEYS[2], KEYS[4]}) do
  if redis.call('INCR', key) == 1 then
    redis.call('PEXPIRE', key, ARGV[1])
  end
end
return {0, 0}
"""

# KEYS as above. ARGV[1]: how long the address stays known (ms).
_SUCCEEDED = """
redis.call('DEL', KEYS[1])
if tonumber(redis.call('GET', KEYS[2]) or '0') > 0 then
  redis.call('DECR', KEYS[2])
end
redis.call('SET', KEYS[3], '1', 'PX', ARGV[1])
if KEYS[4] and tonumber(redis.call('GET', KEYS[4]) or '0') > 0 then
  redis.call('DECR', KEYS[4])
end
return 1
"""

_SCOPES = {
    1: "this account from your network address",
    2: "this account",
    3: "your network address",
}


class Throttle:
    def __init__(
        self,
        redis: RedisLink,
        *,
        max_failures: int,
        address_max_failures: int,
        window_seconds: int,
        account_max_failures: int = 100,
        known_address_days: int = 30,
        prefix: str = "kalaro:auth:throttle:",
    ) -> None:
        self._redis = redis
        self._max = max_failures
        self._address_max = address_max_failures
        self._account_max = account_max_failures
        self._window_ms = window_seconds * 1000
        self._known_ms = known_address_days * 86_400_000
        self._prefix = prefix
        self._check: Any = redis.register_script(_CHECK_AND_COUNT)
        self._succeeded: Any = redis.register_script(_SUCCEEDED)

    def _keys(self, email: str, address: str) -> list[str]:
        digest = hashlib.sha256(email.encode()).hexdigest()[:32]
        # Internal callers without a client address share one "" address per account.
        pair = hashlib.sha256(f"{email}\0{address}".encode()).hexdigest()[:32]
        keys = [
            f"{self._prefix}pair:{pair}",
            f"{self._prefix}account:{digest}",
            f"{self._prefix}known:{pair}",
        ]
        if address:
            keys.append(f"{self._prefix}address:{address}")
        return keys

    async def attempt(self, email: str, address: str) -> None:
        """Count a sign-in attempt, or raise ``throttled`` if a limit is already reached."""
        keys = self._keys(email, address)
        limits = [self._max, self._account_max, self._address_max]
        which, ttl_ms = await self._check(keys=keys, args=[self._window_ms, *limits])
        if int(which) == 0:
            return
        retry_after = max(1, math.ceil(int(ttl_ms) / 1000)) if int(ttl_ms) > 0 else 1
        raise ServiceError(
            codes.THROTTLED,
            f"too many failed sign-in attempts for {_SCOPES[int(which)]}; "
            f"try again in {retry_after} seconds",
        )

    async def succeeded(self, email: str, address: str) -> None:
        await self._succeeded(keys=self._keys(email, address), args=[self._known_ms])
