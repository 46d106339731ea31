"""The ranked queue's live state in Redis: who waits, who was seated, where accounts
were seen from.

Keys (``<ns>`` keeps tests sharing one redis-server apart):

- ``<ns>ranked:queue`` hash: user id -> the :class:`Waiting` entry (JSON).
- ``<ns>ranked:matching`` hash: user id -> ``<taken ms>|<entry>``, players the matcher
  took out of the queue while the lobby opens their table: they still count as waiting
  (``GET /api/queue`` never answers "idle" between "waiting" and "seated"); an entry
  older than :data:`STALE_MATCH_MS` (a matcher that died mid-open) goes back to the queue.
- ``<ns>ranked:seated:<user>``: the table the queue seated them at, for
  :data:`SEATED_TTL_MS` (``GET /api/queue`` answers ``seated`` meanwhile).
- ``<ns>ranked:seen:<kind>:<user>`` sorted sets (kind ``address`` or ``device``): each
  address or device id scored by when it was last seen; older than 24 h is trimmed on
  every write and never read. ``<ns>ranked:seen:users`` scores each user by their last
  note, so fair play lists the last day's accounts without scanning keys.
- ``<ns>ranked:matcher``: the matcher's lease (:class:`Lease`).

Taking a formed table out of the queue is one script that removes its players only if
every one of them still waits (:meth:`RankedQueue.take`): a player who left meanwhile
is never seated, and two matchers (a lease lost mid-tick) cannot both seat one player.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import msgspec

from kalaro.bus.redislink import RedisLink
from services.ranked.matching import QueueEntry

DAY_MS = 24 * 3600 * 1000
#: How long ``GET /api/queue`` keeps answering ``seated`` after the queue seated someone.
SEATED_TTL_MS = 15 * 60 * 1000
SEEN_KINDS = ("address", "device")
#: A table the lobby has not opened by then never will be by that matcher (its open
#: times out in seconds): its players go back to the queue, their wait kept.
STALE_MATCH_MS = 20_000


class Waiting(msgspec.Struct, frozen=True, kw_only=True):
    game: str
    bet: int
    rating: int
    joined_ms: int


class Seat(msgspec.Struct, frozen=True, kw_only=True):
    table_id: str
    game: str
    bet: int
    match_id: str


_waiting = msgspec.json.Decoder(Waiting)
_seat = msgspec.json.Decoder(Seat)
_encode = msgspec.json.Encoder().encode

# KEYS[1] the queue hash, KEYS[2] the matching hash; ARGV now ms, then user ids. All
# still waiting: move them to matching, answer their entries; else change nothing and
# answer an empty list.
_TAKE = """
local users = {unpack(ARGV, 2)}
local entries = redis.call('HMGET', KEYS[1], unpack(users))
for i = 1, #entries do
  if not entries[i] then return {} end
end
redis.call('HDEL', KEYS[1], unpack(users))
for i = 1, #users do
  redis.call('HSET', KEYS[2], users[i], ARGV[1] .. '|' .. entries[i])
end
return entries
"""

# KEYS[1] the lease; ARGV holder, ms. Renew if ours, take if free; 1 if held after.
_LEASE = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


@dataclass(frozen=True)
class Seen:
    """Where each of some accounts was seen in the last 24 h."""

    addresses: dict[str, frozenset[str]]
    devices: dict[str, frozenset[str]]


class RankedQueue:
    def __init__(self, redis: RedisLink, namespace: str = "") -> None:
        self.redis = redis
        self.ns = namespace
        self._queue = f"{namespace}ranked:queue"
        self._matching = f"{namespace}ranked:matching"
        self._take = redis.register_script(_TAKE)
        self._lease = redis.register_script(_LEASE)
        self._release = redis.register_script(_RELEASE)

    def _seated_key(self, user_id: str) -> str:
        return f"{self.ns}ranked:seated:{user_id}"

    def _seen_key(self, kind: str, user_id: str) -> str:
        return f"{self.ns}ranked:seen:{kind}:{user_id}"

    # --- waiting ------------------------------------------------------------------
    async def join(self, user_id: str, entry: Waiting) -> None:
        await self.redis.execute_many(
            [
                ("HSET", self._queue, user_id, _encode(entry)),
                ("DEL", self._seated_key(user_id)),
            ]
        )

    async def leave(self, user_id: str) -> bool:
        """Out of the queue (and forget a seat it gave them); whether they waited. A
        player whose table the lobby is opening right now is still seated there."""
        removed, _, _ = await self.redis.execute_many(
            [
                ("HDEL", self._queue, user_id),
                ("HDEL", self._matching, user_id),
                ("DEL", self._seated_key(user_id)),
            ]
        )
        return bool(removed)

    async def waiting(self, user_id: str) -> Waiting | None:
        """Their entry while they wait: in the queue, or taken for a table the lobby is
        opening."""
        queued, matching = await self.redis.execute_many(
            [("HGET", self._queue, user_id), ("HGET", self._matching, user_id)]
        )
        if queued is not None:
            return _waiting.decode(queued)
        return None if matching is None else _waiting.decode(matching.split(b"|", 1)[1])

    async def matching(self, user_id: str) -> bool:
        """Whether the lobby is opening a table for them right now."""
        return bool(await self.redis.execute("HEXISTS", self._matching, user_id))

    async def everyone(self) -> dict[str, Waiting]:
        raw = await self.redis.hgetall(self._queue)
        return {k.decode(): _waiting.decode(v) for k, v in raw.items()}

    async def take(self, user_ids: Sequence[str], now_ms: int) -> dict[str, Waiting] | None:
        """Move ``user_ids`` from the queue to matching if all still wait (their
        entries), else change nothing (None)."""
        found = await self._take(keys=[self._queue, self._matching], args=[now_ms, *user_ids])
        if not found:
            return None
        return {u: _waiting.decode(d) for u, d in zip(user_ids, found, strict=True)}

    async def put_back(self, entries: dict[str, Waiting]) -> None:
        """Entries :meth:`take` removed, back as they were (their wait kept): in the
        queue first, then out of matching, so they never look idle meanwhile."""
        if entries:
            await self.redis.execute_many(
                [
                    *(("HSETNX", self._queue, u, _encode(e)) for u, e in entries.items()),
                    ("HDEL", self._matching, *entries),
                ]
            )

    async def put_back_stale(self, now_ms: int) -> list[str]:
        """Players taken for a table longer than :data:`STALE_MATCH_MS` ago (their
        matcher died before the lobby answered), back in the queue; who they are."""
        raw = await self.redis.hgetall(self._matching)
        stale = {}
        for user, value in raw.items():
            taken_ms, _, entry = value.partition(b"|")
            if int(taken_ms) < now_ms - STALE_MATCH_MS:
                stale[user.decode()] = _waiting.decode(entry)
        await self.put_back(stale)
        return list(stale)

    # --- seated -------------------------------------------------------------------
    async def mark_seated(self, user_ids: Iterable[str], seat: Seat) -> None:
        data = _encode(seat)
        users = list(user_ids)
        await self.redis.execute_many(
            [
                *(("SET", self._seated_key(u), data, "PX", SEATED_TTL_MS) for u in users),
                ("HDEL", self._matching, *users),  # after "seated": never idle between
            ]
        )

    async def seated(self, user_id: str) -> Seat | None:
        data = await self.redis.get(self._seated_key(user_id))
        return None if data is None else _seat.decode(data)

    # --- where accounts were seen -------------------------------------------------
    async def note_seen(self, user_id: str, now_ms: int, *, address: str, device_id: str) -> None:
        commands: list[tuple[str | int, ...]] = []
        for kind, value in (("address", address), ("device", device_id)):
            if not value:
                continue
            key = self._seen_key(kind, user_id)
            commands += [
                ("ZADD", key, now_ms, value[:128]),
                ("ZREMRANGEBYSCORE", key, "-inf", now_ms - DAY_MS),
                ("PEXPIRE", key, DAY_MS),
            ]
        if not commands:
            return
        users = f"{self.ns}ranked:seen:users"
        commands += [
            ("ZADD", users, now_ms, user_id),
            ("ZREMRANGEBYSCORE", users, "-inf", now_ms - DAY_MS),
        ]
        await self.redis.execute_many(commands)

    async def seen(self, user_ids: Sequence[str], now_ms: int) -> Seen:
        """Addresses and devices of ``user_ids`` in the last 24 h (one round trip)."""
        since = now_ms - DAY_MS
        commands = [
            ("ZRANGEBYSCORE", self._seen_key(kind, u), since, "+inf")
            for u in user_ids
            for kind in SEEN_KINDS
        ]
        found = await self.redis.execute_many(commands) if commands else []
        addresses: dict[str, frozenset[str]] = {}
        devices: dict[str, frozenset[str]] = {}
        for i, user_id in enumerate(user_ids):
            addresses[user_id] = frozenset(v.decode() for v in found[2 * i])
            devices[user_id] = frozenset(v.decode() for v in found[2 * i + 1])
        return Seen(addresses, devices)

    async def seen_users(self, now_ms: int) -> list[str]:
        """Accounts with a note in the last 24 h."""
        users = f"{self.ns}ranked:seen:users"
        found = await self.redis.execute("ZRANGEBYSCORE", users, now_ms - DAY_MS, "+inf")
        return [u.decode() for u in found]

    async def entries(self, now_ms: int) -> list[QueueEntry]:
        """Everyone waiting, with where they were seen: the matcher's input."""
        waiting = await self.everyone()
        seen = await self.seen(list(waiting), now_ms)
        return [
            QueueEntry(
                user_id=u,
                game=w.game,
                bet=w.bet,
                rating=w.rating,
                joined_ms=w.joined_ms,
                addresses=seen.addresses[u],
                devices=seen.devices[u],
            )
            for u, w in waiting.items()
        ]


class Lease:
    """One replica at a time runs the matcher: whoever holds ``<ns>ranked:matcher``.

    Renewed every tick, lapses ``ttl_ms`` after its holder stops (a replica that dies
    hands over within that); released at once when the holder drains."""

    def __init__(self, queue: RankedQueue, ttl_ms: int = 2_000) -> None:
        self._queue = queue
        self._key = f"{queue.ns}ranked:matcher"
        self.holder = secrets.token_hex(8)
        self.ttl_ms = ttl_ms

    async def hold(self) -> bool:
        got = await self._queue._lease(keys=[self._key], args=[self.holder, self.ttl_ms])
        return bool(got)

    async def release(self) -> None:
        await self._queue._release(keys=[self._key], args=[self.holder])
