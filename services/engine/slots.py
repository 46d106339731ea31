"""The hand slot: one versioned Redis record per table, and the sorted sets beside it.

A slot holds everything a worker needs to continue a hand and everything a verifier
needs to replay it: options, seats, seed material, the engine state (msgpack of the
game's ``State``), the action log and the dealt hands. Workers keep nothing between
messages; every write is compare-and-set on the slot's version, which is also the hand
version clients see.

A slot is stored in two keys, so that a move writes only what it changed:

- ``hand:<table_id>``, a hash: ``v`` the version, ``h`` the hand id, ``f`` what is fixed
  at the deal (options, players, seed material, dealt hands: a :class:`Slot` with the
  moving part left empty, written once per hand), ``d`` what moves change (engine
  state, status, the pending timer);
- ``handlog:<table_id>``, a list: the action log, one ``seat:action-json`` entry per
  action (time-outs included), appended to.

Writing the whole slot on every move cost about 2.4 KB of Redis write, and so of AOF,
per move at mid-hand; a move now writes the ~0.9 KB state and its ~30-byte action.
A write sends the fixed part only while the hand has no action yet (the deal, or a
cancel before the first move). Otherwise the script checks that ``h`` is this hand and,
if it is not, refuses and the store sends the whole slot again: that is how a slot an
older worker wrote as one ``d`` field (the whole :class:`Slot`, still read) is written
back in this layout.

The write is this module's own script: in the same atomic step as the compare-and-set
it also moves the hand's timer deadline in ``deadlines:<game>`` and its pending outcome
in ``outcomes:<game>``. A worker that dies between "state written" and "deadline
scheduled" would otherwise leave a Fight/Fold window that never closes, or a finished
hand that nobody settles.

``deadlines:<game>`` members are ``table_id|hand_id|version`` scored by due epoch ms;
``outcomes:<game>`` members are ``table_id|hand_id`` scored by when the sweeper may
take over publishing. Both are claimed with a lease (:meth:`SlotStore.claim`), so an
entry claimed by a worker that then dies is claimed again by another one later.

All keys sit in one Redis instance (scripts touch several keys; fine for a single
primary with Sentinel, not for Redis Cluster without hash tags).
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

import msgspec
from msgspec.structs import replace

from kalaro.bus.redislink import RedisLink
from kalaro.bus.store import StaleVersion
from kalaro.proto.engine import HandRecord
from kalaro.records import RECORD_TTL_MS, index_key, record_key
from services.engine.hand import Slot, Status

#: A finished or cancelled slot whose outcome is out lingers this long (a late GetView
#: still answers); the hand record outlives it.
DONE_SLOT_TTL_MS = 24 * 3600 * 1000


class _Progress(msgspec.Struct, kw_only=True):
    """The slot's part that moves change (``d``)."""

    state: bytes = b""
    status: Status = "playing"
    outcome_published: bool = False
    deadline_ms: int | None = None
    timer_window: str = ""


_PROGRESS_FIELDS = _Progress.__struct_fields__
_NO_PROGRESS = {name: getattr(_Progress(), name) for name in _PROGRESS_FIELDS}
_encode = msgspec.msgpack.Encoder().encode
_decode_slot = msgspec.msgpack.Decoder(Slot).decode
_decode_progress = msgspec.msgpack.Decoder(_Progress).decode
_json_encode = msgspec.json.Encoder().encode
#: What the write script answers when the stored fixed part is another hand's.
_OTHER_HAND = -2
#: A write that took is answered -1, or -3 when the audience mark existed.
_WATCHED = -3
#: What the write script answers when the writer's ownership lease is gone.
_FENCED = -4


class Fenced(Exception):
    """A write refused: the writer's lease on the table's partition is gone."""

    def __init__(self, table_id: str) -> None:
        super().__init__(f"table {table_id}: this replica's lease on it is gone")
        self.table_id = table_id


class Fence(NamedTuple):
    """A partition's lease key, the value its owner put there (``<replica>:<token>``)
    and the key counting its acquisitions. The writer owns the partition while the
    lease holds that value, or has lapsed with the counter still at its token."""

    key: str
    value: str
    counter: str


class Written(NamedTuple):
    """A slot write that took: the new version, and whether the audience mark asked for
    (``watch_key``) existed just after it."""

    version: int
    watched: bool


def _deal_of(slot: Slot) -> bytes:
    return _encode(replace(slot, actions=(), **_NO_PROGRESS))


def _progress_of(slot: Slot) -> bytes:
    return _encode(_Progress(**{name: getattr(slot, name) for name in _PROGRESS_FIELDS}))


def _log_entry(seat: int, action: bytes) -> bytes:
    return b"%d:%b" % (seat, action)


def _parse_log_entry(entry: bytes) -> tuple[int, bytes]:
    seat, _, action = entry.partition(b":")
    return int(seat), action


# KEYS: slot, log, deadlines, outcomes, the table's audience mark ('' none), the
# partition's lease and acquisitions counter ('' '': unfenced; see Fence).
# Answers -1 when written, -3 if the audience mark exists (read after the write, in the
# same atomic step: see the engine's _publish_views); -4 when the lease does not hold
# the writer's fencing token (it is not the owner any more); -2 (another hand's), or
# the current version (someone wrote first).
# ARGV: expected version, hand id, progress, deal ('': the stored one, which must be
#       this hand's, else -2; given: the log starts again), ttl ms (0: persist),
#       deadline member to drop ('' none), deadline member to add ('' none), its score,
#       outcome op ('add'/'del'/''), outcome member, outcome score, the lease value the
#       writer holds, then the log entries to append.
_WRITE = """
if KEYS[6] ~= '' then
  local held = redis.call('GET', KEYS[6])
  if held ~= ARGV[12] and (held or redis.call('GET', KEYS[7]) ~= ARGV[12]:match(':(%d+)$')) then
    return -4
  end
end
local current = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if current ~= tonumber(ARGV[1]) then
  return current
end
if ARGV[4] == '' then
  if redis.call('HGET', KEYS[1], 'h') ~= ARGV[2] then
    return -2
  end
  redis.call('HSET', KEYS[1], 'v', ARGV[1] + 1, 'd', ARGV[3])
else
  redis.call('HSET', KEYS[1], 'v', ARGV[1] + 1, 'h', ARGV[2], 'd', ARGV[3], 'f', ARGV[4])
  redis.call('DEL', KEYS[2])
end
if #ARGV > 12 then
  redis.call('RPUSH', KEYS[2], unpack(ARGV, 13))
end
for i = 1, 2 do
  if tonumber(ARGV[5]) > 0 then
    redis.call('PEXPIRE', KEYS[i], ARGV[5])
  else
    redis.call('PERSIST', KEYS[i])
  end
end
if ARGV[6] ~= '' then
  redis.call('ZREM', KEYS[3], ARGV[6])
end
if ARGV[7] ~= '' then
  redis.call('ZADD', KEYS[3], ARGV[8], ARGV[7])
end
if ARGV[9] == 'add' then
  redis.call('ZADD', KEYS[4], ARGV[11], ARGV[10])
elseif ARGV[9] == 'del' then
  redis.call('ZREM', KEYS[4], ARGV[10])
end
if KEYS[5] ~= '' and redis.call('EXISTS', KEYS[5]) == 1 then
  return -3
end
return -1
"""

# KEYS: slot, log. One round trip for a consistent read of both.
_READ = """
local fields = redis.call('HMGET', KEYS[1], 'v', 'd', 'f')
return {fields[1], fields[2], fields[3], redis.call('LRANGE', KEYS[2], 0, -1)}
"""

# KEYS: a sorted set. ARGV: now ms, lease-until ms, most members to take.
# Taking a member pushes its score to the lease's end instead of removing it: if the
# worker that took it dies before finishing, the member falls due again.
_CLAIM = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
for _, member in ipairs(due) do
  redis.call('ZADD', KEYS[1], ARGV[2], member)
end
return due
"""


# KEYS: the record, then each human player's index. ARGV: the record, its TTL ms, now
# ms, the hand id, now - TTL (index entries older than the records are dropped).
# A record already there is a repeated outcome (a retry, the sweeper): left as it is,
# for history may have stored the hand already, cut the record's TTL to an hour and
# taken it out of the indexes; written again it would last days more in Redis.
_SAVE_RECORD = """
if not redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then
  return 0
end
for i = 2, #KEYS do
  redis.call('ZADD', KEYS[i], 'NX', ARGV[3], ARGV[4])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[5])
  redis.call('PEXPIRE', KEYS[i], ARGV[2])
end
return 1
"""


def deadline_member(table_id: str, hand_id: str, version: int) -> str:
    return f"{table_id}|{hand_id}|{version}"


def parse_deadline(member: str) -> tuple[str, str, int]:
    table_id, hand_id, version = member.rsplit("|", 2)
    return table_id, hand_id, int(version)


def outcome_member(table_id: str, hand_id: str) -> str:
    return f"{table_id}|{hand_id}"


def parse_outcome(member: str) -> tuple[str, str]:
    table_id, hand_id = member.rsplit("|", 1)
    return table_id, hand_id


class SlotStore:
    """Slots of one game's tables, their deadlines and their pending outcomes.

    ``namespace`` prefixes every key; it exists so tests sharing one redis-server keep
    apart (services use the default, empty one).
    """

    def __init__(self, redis: RedisLink, game: str, namespace: str = "") -> None:
        self._redis = redis
        self._slots = f"{namespace}hand:"
        self._logs = f"{namespace}handlog:"
        self.deadlines_key = f"{namespace}deadlines:{game}"
        self.outcomes_key = f"{namespace}outcomes:{game}"
        self._namespace = namespace
        self._game = game
        self._write: Any = redis.register_script(_WRITE)
        self._read: Any = redis.register_script(_READ)
        self._claim: Any = redis.register_script(_CLAIM)
        self._save_record: Any = redis.register_script(_SAVE_RECORD)

    def key(self, table_id: str) -> str:
        return self._slots + table_id

    def log_key(self, table_id: str) -> str:
        return self._logs + table_id

    async def load(self, table_id: str) -> tuple[int, Slot | None]:
        """The slot and its version (one EVALSHA); ``(0, None)`` when there is none."""
        version, progress, deal, log = await self._read(
            keys=[self.key(table_id), self.log_key(table_id)], args=[]
        )
        if progress is None:
            return 0, None
        if deal is None:  # the older layout: the whole slot in ``d``
            return int(version), _decode_slot(progress)
        moving = _decode_progress(progress)
        slot = replace(
            _decode_slot(deal),
            actions=tuple(_parse_log_entry(entry) for entry in log),
            **{name: getattr(moving, name) for name in _PROGRESS_FIELDS},
        )
        return int(version), slot

    async def save(
        self,
        slot: Slot,
        expected: int,
        *,
        appended: tuple[tuple[int, bytes], ...] = (),
        drop_deadline: str = "",
        add_deadline: tuple[str, int] | None = None,
        outcome: Literal["add", "del", ""] = "",
        outcome_due_ms: int = 0,
        ttl_ms: int = 0,
        watch_key: str = "",
        fence: Fence | None = None,
    ) -> Written:
        """Write ``slot`` if it is still at ``expected``. One EVALSHA, two when the stored
        fixed part turns out to be another hand's. With ``watch_key`` (a table's audience
        mark) the same step says whether that key exists: no separate read per move.

        ``appended`` are the actions ``slot.actions`` ends with that are not stored yet:
        they are added to the log, and only the moving part is rewritten. A hand with no
        action yet, or whose stored fixed part is another hand's (the script says so),
        is written whole: fixed part and log.

        Raises :class:`~kalaro.bus.store.StaleVersion` if someone wrote first, and
        :class:`Fenced` if ``fence`` is given and its lease does not hold its value any
        more; then nothing at all was changed, deadlines and outcomes included.
        """
        table_id, hand_id = slot.table_id, slot.hand_id
        keys = [self.key(table_id), self.log_key(table_id), self.deadlines_key, self.outcomes_key]
        keys += [watch_key, *((fence.key, fence.counter) if fence is not None else ("", ""))]
        member, score = add_deadline if add_deadline is not None else ("", 0)
        progress = _progress_of(slot)
        outcome_args = [outcome, outcome_member(table_id, hand_id), outcome_due_ms]

        async def write(whole: bool) -> int:
            deal, log = (_deal_of(slot), slot.actions) if whole else (b"", appended)
            args = [expected, hand_id, progress, deal, ttl_ms, drop_deadline, member, score]
            args += [*outcome_args, fence.value if fence is not None else ""]
            args += [_log_entry(seat, action) for seat, action in log]
            return int(await self._write(keys=keys, args=args))

        current = await write(whole=not slot.actions)
        if current == _OTHER_HAND:
            current = await write(whole=True)
        if current == _FENCED:
            raise Fenced(table_id)
        if current >= 0:
            raise StaleVersion(table_id, expected, current)
        return Written(expected + 1, watched=current == _WATCHED)

    async def claim(self, key: str, now_ms: int, lease_ms: int, limit: int = 64) -> list[str]:
        """Members of ``key`` due by ``now_ms``, leased to the caller until now + lease."""
        members = await self._claim(keys=[key], args=[now_ms, now_ms + lease_ms, limit])
        return [m.decode() for m in members]

    async def release(self, key: str, member: str) -> None:
        await self._redis.zrem(key, member)

    async def due_again(self, key: str, member: str, at_ms: int) -> None:
        """Give back a claimed member early, due again at ``at_ms`` (it failed for now,
        and its lease would otherwise keep it for the whole lease)."""
        await self._redis.execute("ZADD", key, "XX", at_ms, member)

    async def save_record(self, record: HandRecord, now_ms: int) -> None:
        """The record, and in the same step each human player's index of their hands
        (hand history), scored by when the hand finished. Once only (see _SAVE_RECORD)."""
        humans = dict.fromkeys(p.user_id for p in record.players if not p.is_bot)
        await self._save_record(
            keys=[
                record_key(self._namespace, record.hand_id),
                *(index_key(self._namespace, self._game, u) for u in humans),
            ],
            args=[
                _json_encode(record),
                RECORD_TTL_MS,
                now_ms,
                record.hand_id,
                now_ms - RECORD_TTL_MS,
            ],
        )

    async def player_hands(
        self, user_id: str, before_ms: int | None, limit: int
    ) -> list[tuple[int, HandRecord]]:
        """The player's finished hands, newest first, that finished before ``before_ms``."""
        top = f"({before_ms}" if before_ms is not None else "+inf"
        flat = await self._redis.execute(
            "ZREVRANGEBYSCORE", index_key(self._namespace, self._game, user_id), top, "-inf",
            "WITHSCORES", "LIMIT", 0, limit,
        )  # fmt: skip
        pairs = [(m.decode(), int(float(s))) for m, s in zip(flat[::2], flat[1::2], strict=True)]
        if not pairs:
            return []
        keys = (record_key(self._namespace, m) for m, _ in pairs)
        found = await self._redis.execute("MGET", *keys)
        return [
            (score, msgspec.json.decode(data, type=HandRecord))
            for (_, score), data in zip(pairs, found, strict=True)
            if data is not None
        ]

    async def load_record(self, hand_id: str) -> HandRecord | None:
        data = await self._redis.get(record_key(self._namespace, hand_id))
        return None if data is None else msgspec.json.decode(data, type=HandRecord)

    async def has_record(self, hand_id: str) -> bool:
        return bool(await self._redis.exists(record_key(self._namespace, hand_id)))


__all__ = [
    "DONE_SLOT_TTL_MS",
    "Fence",
    "Fenced",
    "SlotStore",
    "StaleVersion",
    "deadline_member",
    "outcome_member",
    "parse_deadline",
    "parse_outcome",
]
