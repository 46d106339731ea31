"""Versioned records in Redis with compare-and-set writes.

Each record is a hash ``{v: version, d: data}``. A write names the version it was
made against; the Lua script applies it only if that is still the current version,
so any replica can serve any record and two racing writes cannot both apply.
"""

from __future__ import annotations

from typing import Any

from kalaro.bus.redislink import RedisLink, tls_options
from kalaro.settings import Settings

_CAS = """
local current = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if current ~= tonumber(ARGV[1]) then
  return current
end
redis.call('HSET', KEYS[1], 'v', ARGV[1] + 1, 'd', ARGV[2])
if tonumber(ARGV[3]) > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return -1
"""


def connect_redis(url: str, settings: Settings | None = None) -> RedisLink:
    """The services' Redis client (see :mod:`kalaro.bus.redislink`); it connects on
    first use, so a service may start before Redis does. ``settings`` gives the TLS
    options (``KALARO_REDIS_TLS_*``)."""
    return RedisLink(url, tls=tls_options(settings) if settings is not None else None)


class StaleVersion(Exception):
    def __init__(self, key: str, expected: int, current: int) -> None:
        super().__init__(f"{key}: expected version {expected}, found {current}")
        self.key = key
        self.expected = expected
        self.current = current


class VersionedStore:
    def __init__(self, redis: RedisLink, prefix: str) -> None:
        self._redis = redis
        self._prefix = prefix
        self._cas: Any = redis.register_script(_CAS)

    def key(self, name: str) -> str:
        return f"{self._prefix}{name}"

    async def get(self, name: str) -> tuple[int, bytes | None]:
        """Current (version, data); version 0 and None when the record does not exist."""
        version, data = await self._redis.hmget(self.key(name), ("v", "d"))
        return (int(version) if version is not None else 0), data

    async def put(self, name: str, expected: int, data: bytes, ttl_ms: int = 0) -> int:
        """Write ``data`` if the record is still at ``expected``; return the new version."""
        current = int(await self._cas(keys=[self.key(name)], args=[expected, data, ttl_ms]))
        if current != -1:
            raise StaleVersion(name, expected, current)
        return expected + 1

    async def delete(self, name: str) -> None:
        await self._redis.delete(self.key(name))
