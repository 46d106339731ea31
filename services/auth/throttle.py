"""Sign-in throttling that never locks out the owner (OWASP's authentication cheat sheet
and its "device cookie" scheme). Every counter is in Redis, so all auth replicas behind
all gateways share it; each lives for ``window_seconds`` from its first failure.

* **Only failures count.** A correct password is never refused because of others'
  failures before it: 200 players behind one carrier address sign in together.
* **Known devices** (a valid device cookie for the account, see
  :mod:`services.auth.devices`) are not held up by the account's failures, nor by their
  address's. Their own failures count on the device (``device_max_failures``); past
  that the cookie is treated like a new device until its next success, so a cookie
  left on a shared computer is no free pass for guessing.
* **New devices**, per account: after ``max_failures`` failures each further try waits
  (1, 2, 4 … s, at most ``max_delay_seconds``, a 429 with ``Retry-After``), one try in
  flight at a time; after ``account_max_failures`` a new device needs a one-time code
  mailed to the owner (checked before the password, so guessing stops there). Never a
  hard lock: the owner's devices keep working, and a new one gets in with the code.
* **Addresses**: ``address_max_failures`` failures from one address over all accounts,
  then that address is refused (except known devices) until its window ends. Generous,
  since one carrier address (CGNAT) can carry hundreds of players.

Checks and the reservation of a new device's try are one Lua script, so a burst of
parallel guesses at one account cannot all slip past a limit while the slow hash runs:
a new device's try is "pending" until it is decided, and pending tries count.
Redis keys hold a hash of the email, not the email.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any

from kalaro.bus import ServiceError
from kalaro.bus.redislink import RedisLink
from kalaro.proto import errors as codes

# KEYS: 1 address, 2 account, 3 wait, 4 device, 5 pending.
# ARGV: 1 known device (1/0), 2 address limit, 3 device limit, 4 slow-down after,
# 5 code after, 6 pending life (ms), 7 has a code (1/0).
# Returns {verdict, ms}: 0 go (known device), 1 go (new device, try reserved),
# 2 wait (account), 3 wait (address), 4 code required.
_CHECK = """
local function num(key) return tonumber(redis.call('GET', key) or '0') end
if ARGV[1] == '1' and num(KEYS[4]) < tonumber(ARGV[3]) then
  return {0, 0}
end
if num(KEYS[1]) >= tonumber(ARGV[2]) then
  return {3, redis.call('PTTL', KEYS[1])}
end
local seen = num(KEYS[2]) + num(KEYS[5])
if seen >= tonumber(ARGV[5]) then
  if ARGV[7] ~= '1' then return {4, 0} end
else
  local wait = redis.call('PTTL', KEYS[3])
  if wait > 0 then return {2, wait} end
  if seen >= tonumber(ARGV[4]) and num(KEYS[5]) > 0 then return {2, 1000} end
end
redis.call('INCR', KEYS[5])
redis.call('PEXPIRE', KEYS[5], ARGV[6])
return {1, 0}
"""

# KEYS as above. ARGV: 1 outcome (fail/ok/none), 2 known (1/0), 3 has an address (1/0),
# 4 window (ms), 5 slow-down after, 6 longest wait (ms). Returns the wait set (ms).
_FINISH = """
local function bump(key)
  local n = redis.call('INCR', key)
  if n == 1 then redis.call('PEXPIRE', key, ARGV[4]) end
  return n
end
if ARGV[2] == '0' and tonumber(redis.call('GET', KEYS[5]) or '0') > 0 then
  redis.call('DECR', KEYS[5])
end
if ARGV[1] == 'ok' then
  redis.call('DEL', KEYS[4])  -- the device's own failures are forgiven
  return 0
end
if ARGV[1] ~= 'fail' then return 0 end
if ARGV[3] == '1' then bump(KEYS[1]) end
if ARGV[2] == '1' then bump(KEYS[4]) return 0 end
local over = bump(KEYS[2]) - tonumber(ARGV[5])
if over < 0 then return 0 end
local wait = math.floor(math.min(tonumber(ARGV[6]), 1000 * 2 ^ over))
if wait > redis.call('PTTL', KEYS[3]) then
  redis.call('SET', KEYS[3], '1', 'PX', wait)
end
return wait
"""

# KEYS: 1 code. ARGV: 1 hash offered, 2 consume (1/0), 3 tries allowed.
# Returns 1 when the code matches (deleted if consuming), else 0 (a wrong one counts).
_CODE = """
local stored = redis.call('HGET', KEYS[1], 'h')
if not stored then return 0 end
if stored == ARGV[1] then
  if ARGV[2] == '1' then redis.call('DEL', KEYS[1]) end
  return 1
end
if redis.call('HINCRBY', KEYS[1], 'tries', 1) >= tonumber(ARGV[3]) then
  redis.call('DEL', KEYS[1])
end
return 0
"""

# KEYS: 1 code. ARGV: 1 hash, 2 life (ms). A live code stands: returns 0, else 1.
_STORE_CODE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'h', ARGV[1], 'tries', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""

_SCOPES = {2: "this account from a new device", 3: "your network address"}


@dataclass(frozen=True)
class Gate:
    """An attempt let through by :meth:`Throttle.check`; hand it to :meth:`Throttle.finish`."""

    keys: list[str]
    known: bool  # a known device: the account's limits do not apply
    has_address: bool
    with_code: bool  # the account needs a code from new devices; one was given


def retry_seconds(ms: int) -> int:
    """``Retry-After`` for a wait of ``ms``: whole seconds, rounded up, at least 1."""
    return max(1, math.ceil(ms / 1000))


class Throttle:
    def __init__(
        self,
        redis: RedisLink,
        *,
        window_seconds: int,
        max_failures: int,
        account_max_failures: int,
        address_max_failures: int,
        max_delay_seconds: int = 60,
        device_max_failures: int = 10,
        prefix: str = "kalaro:auth:throttle:",
    ) -> None:
        self._redis = redis
        self._window_ms = window_seconds * 1000
        self._max = max_failures
        self._code_after = account_max_failures
        self._address_max = address_max_failures
        self._max_delay_ms = max_delay_seconds * 1000
        self._device_max = device_max_failures
        self._prefix = prefix
        self._check: Any = redis.register_script(_CHECK)
        self._finish: Any = redis.register_script(_FINISH)
        self._code: Any = redis.register_script(_CODE)
        self._store_code: Any = redis.register_script(_STORE_CODE)

    def _digest(self, email: str) -> str:
        return hashlib.sha256(email.encode()).hexdigest()[:32]

    def _keys(self, email: str, address: str, device_id: str) -> list[str]:
        d, p = self._digest(email), self._prefix
        return [
            f"{p}address:{address}",
            f"{p}account:{d}",
            f"{p}wait:{d}",
            f"{p}device:{device_id or '-'}",
            f"{p}pending:{d}",
        ]

    def code_key(self, email: str) -> str:
        return f"{self._prefix}code:{self._digest(email)}"

    async def check(self, email: str, address: str, *, device_id: str, has_code: bool) -> Gate:
        """Let an attempt through, or raise ``throttled`` (with ``retry_after``) or
        ``code_required``. ``device_id``: a valid device cookie's, for this account."""
        keys = self._keys(email, address, device_id)
        args = [
            1 if device_id else 0,
            self._address_max,
            self._device_max,
            self._max,
            self._code_after,
            30_000,  # longer than any hash takes: a crashed try frees its place
            1 if has_code else 0,
        ]
        verdict, ms = (int(x) for x in await self._check(keys=keys, args=args))
        if verdict in (0, 1):
            known = verdict == 0
            return Gate(keys, known, bool(address), has_code and not known)
        if verdict == 4:
            raise ServiceError(codes.CODE_REQUIRED, "")  # the caller words it
        wait = retry_seconds(ms)
        raise ServiceError(
            codes.THROTTLED,
            f"too many failed sign-in attempts for {_SCOPES[verdict]}; try again in {wait} seconds",
            retry_after=wait,
        )

    async def finish(self, gate: Gate, outcome: str) -> int:
        """Record how the attempt ended: ``fail``, ``ok`` or ``none`` (it broke off).
        Returns the wait (ms) a failure put on new devices, 0 if none."""
        args = [
            outcome,
            1 if gate.known else 0,
            1 if gate.has_address else 0,
            self._window_ms,
            self._max,
            self._max_delay_ms,
        ]
        return int(await self._finish(keys=gate.keys, args=args))

    async def store_code(self, email: str, code_hash: str, seconds: int) -> bool:
        """Keep a new code's hash, unless one is still live (then the mailed one stands,
        and nobody can replace the owner's code by asking again). True if stored."""
        stored = await self._store_code(
            keys=[self.code_key(email)], args=[code_hash, seconds * 1000]
        )
        return bool(int(stored))

    async def match_code(self, email: str, code_hash: str, *, consume: bool, tries: int) -> bool:
        key = self.code_key(email)
        found = await self._code(keys=[key], args=[code_hash, 1 if consume else 0, tries])
        return bool(int(found))
