"""The lobby's rules: tables, seats, readiness, dealing, chat — plain async functions.

Each table is one record in Redis (:class:`TableRecord`), written by compare-and-set
on its version (:class:`~kalaro.bus.store.VersionedStore`), so any lobby replica can
serve any table and two racing requests cannot both apply: every change reads the
record, applies a pure ``change`` function to it and writes it back at the version it
read, retrying a bounded number of times when someone else wrote first.

The record is the public :class:`~kalaro.proto.lobby.TableInfo` plus its secrets: the
invite code, the next hand's server seed, and each seat's entropy. Only ``info`` is
ever returned or published, so a secret cannot leak by accident: it is not a field of
anything that leaves this module.

Dealing is the one multi-step flow (flows 3 and 6 in DESIGN.md): claim the table by
CAS (``waiting`` → ``dealing`` with a new hand id, so two racing Deals cannot both
deal), hold every player's maximum loss at the wallet (all or nothing), ask the
engine to start the hand, then CAS to ``playing``. Every failure on the way undoes
what was done (release the holds, back to ``waiting``).

**One outcome per hand.** Once a StartHand may have reached the engine, the lobby never
voids the hand at the wallet itself: it asks the engine to cancel it, and the engine's
compare-and-set on its hand slot decides between that cancel and the last move. The
engine then sends exactly one of settlement or void to the wallet, under the hand id.
(Voiding here too once let a host's cancel void a hand that had just finished: its
winners were never paid.) The lobby voids directly only holds whose StartHand was never
sent or was refused. A cancel the engine did not answer is kept in a set and retried by
:meth:`Lobby.retry_cancels` until the engine decides; meanwhile the holds stay (the
wallet's reconciler settles or releases any hold left behind for good).

Bots are players with the ``bot`` role, seated by the bots service (``bots.seat``). They
never play for credits: a bot may sit only at a zero-bet table, and only in a seat the
host kept for one (:meth:`Lobby.add_bot`, or :meth:`Lobby.create_practice`), which also
lets bots into private and practice tables without an invite code. A practice table is a
zero-bet table its creator (any player) hosts against bots: it is never listed, only its
host and bots may sit there, it deals itself once every seat is ready, and it ends when
its host leaves.

Private means private: a private table is listed only to its host, seated players and
admins, and shown (:meth:`Lobby.get_table`, which the gateway also asks before letting
a socket watch) to anyone else only with its invite code; without it the answer is the
``not_found`` of a table that does not exist. Only its players, host and admins chat
there; spectators who came with the code read.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import random
import re
import secrets
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import msgspec
from msgspec.structs import replace
from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError, ServiceError, request
from kalaro.bus.codec import encode
from kalaro.bus.redislink import RedisLink
from kalaro.bus.store import StaleVersion, VersionedStore
from kalaro.games.registry import GameRules, UnknownGame, rules_for
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.bots import BotSeated, SeatBot
from kalaro.proto.engine import (
    CancelHand,
    GetView,
    HandCancelled,
    HandStarted,
    Player,
    StartHand,
)
from kalaro.proto.lobby import (
    AddBot,
    Caller,
    CancelTable,
    ChatSent,
    CreatePractice,
    CreateTable,
    Deal,
    EndTable,
    GetTable,
    HandFinished,
    Leave,
    LeaveAfterHand,
    ListTables,
    Presence,
    PresenceNoted,
    RemovePlayer,
    ReportPresence,
    SeatInfo,
    SendChat,
    SetChat,
    SetReady,
    Sit,
    TableCreated,
    TableInfo,
    TableList,
)
from kalaro.proto.wallet import (
    Balance,
    GetBalance,
    HoldRequest,
    HoldsPlaced,
    PlaceHolds,
    Settlement,
    VoidHand,
)
from kalaro.proto.ws import ChatPosted, HandView, TableChanged
from services.lobby.chat import ChatLimiter, mask

log = logging.getLogger("kalaro.lobby")

MAX_BET = 100_000
MAX_ENTROPY = 64
MAX_CHAT = 300
MAX_LIST = 200
HOST_ROLES = frozenset({"host", "admin"})
BOT_ROLE = "bot"
#: A practice table with nothing happening at it for this long is ended (its host left
#: without saying so, and its bots would otherwise wait for them for ever).
PRACTICE_IDLE_SECONDS = 30 * 60
CLOSED = ("ended", "cancelled")
IN_HAND = ("dealing", "playing")

# A handful of CAS attempts is plenty: a table sees a few writes a second at most, and
# a lost race resolves on the next read. Past that the table is genuinely contended.
_CAS_ATTEMPTS = 12
# Closed tables stay readable for a day (late sockets, hand history links), then go.
_CLOSED_TTL_MS = 24 * 3600 * 1000
_LIST_CHUNK = 200
# A seat kept for a bot stays kept this long: the bots service sits its bot within a
# second or two, and a lost request must not block the seat for good.
_BOT_SEAT_HOLD_SECONDS = 30.0
#: A table whose options leave this out gets the engines' default clock (seconds).
DEFAULT_TURN_SECONDS = 30
#: Presence: how long a seat shows "reconnecting" after its last socket went, and how
#: often gateways re-announce their sockets (a gateway silent for
#: ``PRESENCE_FORGET_PERIODS`` of them is taken for dead and forgotten).
PRESENCE_GRACE_SECONDS = 30.0
PRESENCE_REFRESH_SECONDS = 30.0
PRESENCE_FORGET_PERIODS = 3


class GatewaySockets(msgspec.Struct, frozen=True, array_like=True):
    """The seated players with a socket on a table at one gateway process."""

    gateway_id: str
    user_ids: tuple[str, ...]
    heard: float  # epoch seconds of the gateway's last report for this table


class TableRecord(msgspec.Struct, frozen=True):
    """What Redis holds for one table: the public info plus what must stay secret."""

    info: TableInfo
    server_seed: str  # hex of 32 random bytes; info.seed_commitment is sha256 of them
    entropy: tuple[str, ...]  # per seat, as given with Ready ("" when none)
    invite_code: str | None = None
    last_hand_id: str | None = None  # the hand the engine most recently reported finished
    cancelled_hand_id: str | None = None  # the hand voided by CancelTable, for retries
    dealing_since: float = 0.0  # epoch seconds the current deal began (stale-deal rescue)
    bot_seats: tuple[tuple[int, float], ...] = ()  # (seat, epoch seconds) kept for a bot
    # Presence: each gateway's seated sockets here, and when a player last had one (for
    # seats with none now, within the grace period). The seats' ``presence`` in ``info``
    # is derived from these by :func:`_derive_presence` on every write.
    gateways: tuple[GatewaySockets, ...] = ()
    last_connected: tuple[tuple[str, float], ...] = ()  # (user id, epoch seconds)


def _derive_presence(
    rec: TableRecord, now: float, *, grace: float, forget_after: float
) -> TableRecord:
    """The record with every seat's presence derived from its gateways' reports (the
    same object when nothing changes).

    A gateway not heard from for ``forget_after`` seconds is forgotten; its players
    were last known connected when it last reported. A seated player with a socket on
    any live gateway is ``connected``; one whose last socket went less than ``grace``
    seconds ago is ``reconnecting``; anyone else ``offline``.
    """
    live = tuple(g for g in rec.gateways if now - g.heard < forget_after)
    last = dict(rec.last_connected)
    if len(live) != len(rec.gateways):
        for gone in (g for g in rec.gateways if g not in live):
            for user_id in gone.user_ids:
                last[user_id] = max(last.get(user_id, 0.0), gone.heard)
    connected = {u for g in live for u in g.user_ids}
    seated = {s.user_id for s in rec.info.seats if s is not None}
    recent = tuple(
        sorted(
            (u, at)
            for u, at in last.items()
            if u in seated and u not in connected and now - at < grace
        )
    )
    recent_users = {u for u, _ in recent}
    seats: list[SeatInfo | None] = []
    moved = False
    for seat in rec.info.seats:
        if seat is None:
            seats.append(None)
            continue
        presence: Presence = (
            "connected"
            if seat.user_id in connected
            else "reconnecting"
            if seat.user_id in recent_users
            else "offline"
        )
        if presence != seat.presence:
            moved = True
            seat = replace(seat, presence=presence)
        seats.append(seat)
    if not moved and live == rec.gateways and recent == rec.last_connected:
        return rec
    info = replace(rec.info, seats=tuple(seats)) if moved else rec.info
    return replace(rec, info=info, gateways=live, last_connected=recent)


def _presence_due(rec: TableRecord, *, grace: float, forget_after: float) -> float | None:
    """When the record's presence next changes by itself (a reconnecting seat goes
    offline, or a silent gateway is forgotten); None if it never will."""
    times = [g.heard + forget_after for g in rec.gateways]
    times.extend(at + grace for _, at in rec.last_connected)
    return min(times) if times else None


def _public(info: TableInfo) -> TableInfo:
    """``info`` without its version, to tell whether a write changed what people see."""
    return replace(info, version=0)


def _cancelled(rec: TableRecord) -> TableRecord:
    if rec.info.status in CLOSED:
        return rec
    return replace(rec, info=replace(rec.info, status="cancelled"))


def _ended_if_waiting(rec: TableRecord) -> TableRecord:
    # Only between hands: if the host came back and dealt meanwhile, leave it be.
    if rec.info.status != "waiting":
        return rec
    return replace(rec, info=replace(rec.info, status="ended"))


class _DealAborted(Exception):
    """The table moved on (cancelled, or rescued) while a deal was in flight."""


def new_server_seed() -> tuple[str, str]:
    """A fresh server seed (hex) and its commitment: sha256 of the seed's bytes, hex."""
    seed = secrets.token_bytes(32)
    return seed.hex(), hashlib.sha256(seed).hexdigest()


def _error(code: str, message: str) -> ServiceError:
    return ServiceError(code, message)


def _seat_of(info: TableInfo, user_id: str) -> int | None:
    for index, seat in enumerate(info.seats):
        if seat is not None and seat.user_id == user_id:
            return index
    return None


def _require_seat(info: TableInfo, caller: Caller) -> int:
    seat = _seat_of(info, caller.user_id)
    if seat is None:
        raise _error(codes.CONFLICT, "you are not sitting at this table")
    return seat


def _require_open(info: TableInfo) -> None:
    if info.status in CLOSED:
        raise _error(codes.CONFLICT, f"this table has been {info.status}")


def _require_host(info: TableInfo, caller: Caller) -> None:
    # Admins may run any table too: they moderate, and a host can vanish mid-hand.
    if caller.user_id != info.host_id and "admin" not in caller.roles:
        raise _error(codes.FORBIDDEN, "only the host of this table can do that")


def _require_between_hands(info: TableInfo, what: str) -> None:
    _require_open(info)
    if info.status in IN_HAND:
        raise _error(codes.CONFLICT, f"hand in progress — {what}")


def _with_seat(rec: TableRecord, index: int, seat: SeatInfo | None) -> TableRecord:
    seats = list(rec.info.seats)
    seats[index] = seat
    entropy = list(rec.entropy)
    if seat is None or not seat.ready:
        entropy[index] = ""  # entropy belongs to one Ready, never carried over
    return replace(rec, info=replace(rec.info, seats=tuple(seats)), entropy=tuple(entropy))


def _kept_for_bots(rec: TableRecord, now: float) -> set[int]:
    """Empty seats a bot is on its way to (the hold has not run out)."""
    return {
        seat
        for seat, since in rec.bot_seats
        if now - since < _BOT_SEAT_HOLD_SECONDS and rec.info.seats[seat] is None
    }


def _bot_seat(rec: TableRecord, seat: int | None, now: float) -> int:
    """The seat a bot may take, or why not: bots never play for credits."""
    info = rec.info
    if info.bet > 0 or info.max_loss > 0:
        raise _error(
            codes.FORBIDDEN, "bots never play for credits: they sit only at zero-bet tables"
        )
    kept = _kept_for_bots(rec, now)
    if seat is None and kept:
        seat = min(kept)
    if seat is None or seat not in kept:
        raise _error(codes.FORBIDDEN, "a bot sits only in a seat the host kept for a bot")
    return seat


def _member(info: TableInfo, caller: Caller) -> bool:
    """The table's host, a player seated there, or an admin."""
    return (
        caller.user_id == info.host_id
        or "admin" in caller.roles
        or _seat_of(info, caller.user_id) is not None
    )


def _code_matches(rec: TableRecord, given: str | None) -> bool:
    if not given or rec.invite_code is None:
        return False
    return hmac.compare_digest(given.encode(), rec.invite_code.encode())


def _may_watch(rec: TableRecord, caller: Caller, invite_code: str | None, now: float) -> bool:
    """Whether ``caller`` may see (get, watch) the table: anyone for a public one; for a
    private one its members, a bot on its way to a seat kept for one, or the code."""
    info = rec.info
    if not info.private or _member(info, caller):
        return True
    if BOT_ROLE in caller.roles and _kept_for_bots(rec, now):
        return True
    return _code_matches(rec, invite_code)


def _names(info: TableInfo, seats: list[int]) -> str:
    return ", ".join(s.display_name for i in seats if (s := info.seats[i]) is not None)


class Lobby:
    """The lobby's operations over its dependencies (NATS for peers, Redis for tables).

    ``prefix`` namespaces every Redis key (tests give each test its own); ``clock``
    returns epoch seconds and is injected so chat limits and timestamps can be tested.
    """

    def __init__(
        self,
        nc: NATS,
        redis: RedisLink,
        *,
        prefix: str = "lobby:",
        clock: Callable[[], float] = time.time,
        wallet_timeout: float = 5.0,
        engine_timeout: float = 10.0,
        bots_timeout: float = 8.0,
        chat_limit: int = 5,
        chat_window_seconds: float = 10.0,
        practice_idle_seconds: float = PRACTICE_IDLE_SECONDS,
        presence_grace_seconds: float = PRESENCE_GRACE_SECONDS,
        presence_refresh_seconds: float = PRESENCE_REFRESH_SECONDS,
    ) -> None:
        self._nc = nc
        self._redis = redis
        self._store = VersionedStore(redis, f"{prefix}table:")
        self._index = f"{prefix}tables"
        # Open practice tables, scored by when something last happened at them (epoch
        # s), and the hand version each was last seen at (see end_idle_practice).
        self._practice = f"{prefix}practice"
        self._practice_hands = f"{prefix}practice-hands"
        # Hands whose cancel the engine has not confirmed yet: ``game|table|hand``,
        # scored by when the cancel was first asked for (see retry_cancels).
        self._cancels = f"{prefix}pending-cancels"
        # Tables whose presence changes by itself at some time (a reconnecting seat goes
        # offline, a silent gateway is forgotten), scored by that time (see sweep_presence).
        self._presence_due = f"{prefix}presence-due"
        self.presence_grace_seconds = presence_grace_seconds
        self.presence_forget_seconds = PRESENCE_FORGET_PERIODS * presence_refresh_seconds
        self.practice_idle_seconds = practice_idle_seconds
        self._chat = ChatLimiter(
            redis, f"{prefix}chat:", limit=chat_limit, window_seconds=chat_window_seconds
        )
        self._clock = clock
        self._wallet_timeout = wallet_timeout
        self._engine_timeout = engine_timeout
        self._bots_timeout = bots_timeout
        # A deal still "dealing" after both peers' timeouts (plus margin) was interrupted
        # (a lobby replica died mid-deal); the host's next Deal rescues the table.
        self.stale_deal_seconds = 2 * (wallet_timeout + engine_timeout) + 5

    # --- storage ------------------------------------------------------------------------

    def _now_iso(self) -> str:
        return datetime.fromtimestamp(self._clock(), UTC).isoformat(timespec="milliseconds")

    async def _load(self, table_id: str) -> tuple[int, TableRecord]:
        version, data = await self._store.get(table_id)
        if data is None:
            raise _error(codes.NOT_FOUND, f"no table {table_id!r}")
        rec = msgspec.json.decode(data, type=TableRecord)
        return version, replace(rec, info=replace(rec.info, version=version))

    async def _update(
        self,
        table_id: str,
        change: Callable[[TableRecord], TableRecord],
        *,
        quiet: bool = False,
    ) -> TableRecord:
        """Read → ``change`` → compare-and-set, retried on a lost race; then publish.

        ``change`` is pure: it raises a :class:`ServiceError` to refuse, or returns the
        record unchanged (the same object) to do nothing, which writes and publishes
        nothing. Every write also derives the seats' presence. ``quiet`` (presence
        reports and sweeps, which mostly change nothing): publish only if the public info
        changed, and it is no activity at a practice table.
        """
        for attempt in range(_CAS_ATTEMPTS):
            version, rec = await self._load(table_id)
            changed = change(rec)
            if changed is rec:
                return rec
            changed = self._with_presence(changed)
            info = replace(changed.info, version=version + 1)
            changed = replace(changed, info=info)
            closed = info.status in CLOSED
            try:
                await self._store.put(
                    table_id,
                    version,
                    msgspec.json.encode(changed),
                    ttl_ms=_CLOSED_TTL_MS if closed else 0,
                )
            except StaleVersion:
                # Someone wrote between our read and write; jitter keeps racers apart.
                await asyncio.sleep(random.uniform(0, 0.002 * (attempt + 1)))
                continue
            if closed:
                await self._redis.zrem(self._index, table_id)
                await self._redis.zrem(self._presence_due, table_id)
            else:
                await self._note_presence_due(rec, changed)
            if info.practice and not quiet:
                # Presence is not activity: the bots' sockets, re-announced by their
                # gateway, must not keep a table its host abandoned open for ever.
                await self._note_practice(table_id, closed=closed)
            if not quiet or _public(info) != _public(rec.info):
                await self._publish_table(info)
            return changed
        raise _error(codes.CONFLICT, "the table is busy right now; please try again")

    async def _publish_table(self, info: TableInfo) -> None:
        await self._nc.publish(subjects.table_events(info.table_id), encode(TableChanged(info)))

    # --- presence -----------------------------------------------------------------------

    def _with_presence(self, rec: TableRecord) -> TableRecord:
        return _derive_presence(
            rec,
            self._clock(),
            grace=self.presence_grace_seconds,
            forget_after=self.presence_forget_seconds,
        )

    def _due(self, rec: TableRecord) -> float | None:
        return _presence_due(
            rec, grace=self.presence_grace_seconds, forget_after=self.presence_forget_seconds
        )

    async def _note_presence_due(self, old: TableRecord, new: TableRecord) -> None:
        """Make sure the sweep looks at the table by when its presence next changes.

        ``LT``: a write only ever brings the time forward, so two replicas writing at
        once cannot push it past a change that is due; a time left too early costs the
        sweep one look, after which it sets the exact time (:meth:`sweep_presence`).
        """
        due = self._due(new)
        if due is not None and due != self._due(old):
            await self._redis.execute("ZADD", self._presence_due, "LT", due, new.info.table_id)

    async def report_presence(self, req: ReportPresence) -> PresenceNoted:
        """A gateway's seated sockets on a table (all of them): note them, and publish
        the table if any seat's presence changed."""
        now = self._clock()
        users = tuple(sorted(set(req.user_ids)))

        read: list[TableRecord] = []

        def note(rec: TableRecord) -> TableRecord:
            read[:] = [rec]
            if rec.info.status in CLOSED:
                return rec
            old = next((g for g in rec.gateways if g.gateway_id == req.gateway_id), None)
            if old is None and not users:
                return rec
            others = tuple(g for g in rec.gateways if g.gateway_id != req.gateway_id)
            mine = (GatewaySockets(req.gateway_id, users, now),) if users else ()
            last = dict(rec.last_connected)
            for user_id in old.user_ids if old is not None else ():
                if user_id not in users:
                    last[user_id] = now  # their socket here just went
            return replace(rec, gateways=others + mine, last_connected=tuple(sorted(last.items())))

        after = await self._update(req.table_id, note, quiet=True)
        return PresenceNoted(req.table_id, _public(after.info) != _public(read[0].info))

    async def sweep_presence(self, limit: int = 200) -> int:
        """Downgrade seats whose grace ran out (``reconnecting`` → ``offline``) and forget
        gateways silent too long, at the tables where that is due; how many tables
        changed. Every replica may run this: each change is a compare-and-set."""
        due = await self._redis.execute(
            "ZRANGEBYSCORE", self._presence_due, "-inf", self._clock(), "LIMIT", 0, limit
        )
        changed = 0
        for member in due:
            try:
                changed += await self._sweep_presence_at(member.decode())
            except ServiceError as exc:
                log.warning("table %s: presence not swept yet (%s)", member.decode(), exc)
        return changed

    async def _sweep_presence_at(self, table_id: str) -> bool:
        read: list[TableRecord] = []

        def derive(rec: TableRecord) -> TableRecord:
            read[:] = [rec]
            return self._with_presence(rec)

        try:
            rec = await self._update(table_id, derive, quiet=True)
        except ServiceError as exc:
            if exc.code != codes.NOT_FOUND:
                raise
            await self._redis.zrem(self._presence_due, table_id)
            return False
        next_due = self._due(rec)
        if next_due is None or rec.info.status in CLOSED:
            await self._redis.zrem(self._presence_due, table_id)
        else:
            await self._redis.execute("ZADD", self._presence_due, next_due, table_id)
        return rec is not read[0]

    # --- tables -------------------------------------------------------------------------

    async def create_table(self, req: CreateTable) -> TableCreated:
        if not HOST_ROLES & set(req.caller.roles):
            raise _error(
                codes.FORBIDDEN, "only hosts can create tables; ask an admin for host access"
            )
        rules = self._rules(req.game)
        options = self._options(rules, req.ruleset, req.options)
        if not 0 <= req.bet <= MAX_BET:
            raise _error(codes.BAD_REQUEST, f"the bet must be between 0 and {MAX_BET} credits")
        options_dict = rules.options_dict(options)
        # DESIGN.md flow 7: every turn has a clock, off only at private zero-bet tables
        # (and practice tables, which are zero-bet and their host's alone).
        if options_dict.get("turn_seconds", DEFAULT_TURN_SECONDS) is None and not (
            req.private and req.bet == 0
        ):
            raise _error(
                codes.BAD_REQUEST,
                "this table needs a turn clock: set turn_seconds (seconds per turn); only "
                "private tables with no bet may play without one (turn_seconds null)",
            )
        invite_code = secrets.token_urlsafe(8) if req.private else None
        info = TableInfo(
            table_id="",
            game=req.game,
            ruleset=req.ruleset,
            options=options_dict,
            bet=req.bet,
            max_loss=rules.max_loss_units(options) * req.bet,
            private=req.private,
            chat_enabled=req.chat_enabled,
            host_id=req.caller.user_id,
            host_name=req.caller.display_name,
            seats=(None,) * rules.seats,
            status="waiting",
            hand_no=0,
            created_at=self._now_iso(),
            version=1,
        )
        rec = await self._insert(
            TableRecord(info, "", ("",) * rules.seats, invite_code=invite_code), listed=True
        )
        return TableCreated(rec.info, invite_code)

    async def _insert(self, rec: TableRecord, *, listed: bool) -> TableRecord:
        """Store a new table under a fresh id with a fresh seed; index it if ``listed``."""
        seed, commitment = new_server_seed()
        created = self._clock()
        for _ in range(3):
            table_id = uuid.uuid4().hex[:16]
            info = replace(rec.info, table_id=table_id, seed_commitment=commitment)
            new = replace(rec, info=info, server_seed=seed)
            try:
                await self._store.put(table_id, 0, msgspec.json.encode(new))
            except StaleVersion:  # an id collision; vanishingly rare, just pick another
                continue
            if listed:
                await self._redis.zadd(self._index, {table_id: int(created * 1000)})
            await self._publish_table(info)
            return new
        raise _error(codes.CONFLICT, "could not create the table; please try again")

    @staticmethod
    def _rules(game: str) -> GameRules:
        try:
            return rules_for(game)
        except UnknownGame as exc:
            raise _error(codes.BAD_REQUEST, str(exc)) from None

    async def create_practice(self, req: CreatePractice) -> TableCreated:
        """A zero-bet table hosted by the caller (any player) in seat 0, bots elsewhere.

        Answers once every bot has sat down, so the table it returns is complete; if
        the bots service cannot seat them all, the table is cancelled (no hand was
        dealt, so nothing else needs undoing) and the error says so.
        """
        caller = req.caller
        if BOT_ROLE in caller.roles:
            raise _error(codes.FORBIDDEN, "bots do not start practice tables")
        rules = self._rules(req.game)
        options = self._options(rules, req.ruleset, req.options)
        now = self._clock()
        info = TableInfo(
            table_id="",
            game=req.game,
            ruleset=req.ruleset,
            options=rules.options_dict(options),
            bet=0,
            max_loss=0,
            private=False,
            chat_enabled=True,
            host_id=caller.user_id,
            host_name=caller.display_name,
            seats=(SeatInfo(caller.user_id, caller.display_name),) + (None,) * (rules.seats - 1),
            status="waiting",
            hand_no=0,
            created_at=self._now_iso(),
            version=1,
            practice=True,
        )
        bot_seats = range(1, rules.seats)
        rec = TableRecord(
            info, "", ("",) * rules.seats, bot_seats=tuple((seat, now) for seat in bot_seats)
        )
        # Never listed: a practice table is its host's alone (they open it by its id).
        rec = await self._insert(rec, listed=False)
        table_id = rec.info.table_id
        await self._note_practice(table_id, closed=False)
        outcomes = await asyncio.gather(
            *(self._seat_bot(rec.info, seat) for seat in bot_seats), return_exceptions=True
        )
        failed = [o for o in outcomes if isinstance(o, BaseException)]
        if failed:
            await self._update(table_id, _cancelled)
            first = failed[0]
            if not isinstance(first, ServiceError):
                raise first
            raise _error(first.code, f"could not seat the bots ({first.message}); please try again")
        _, rec = await self._load(table_id)
        return TableCreated(rec.info)

    async def _note_practice(self, table_id: str, *, closed: bool) -> None:
        """Something happened at a practice table: it is not idle (or, closed, not open)."""
        if closed:
            await self._redis.zrem(self._practice, table_id)
            await self._redis.execute("HDEL", self._practice_hands, table_id)
        else:
            await self._redis.zadd(self._practice, {table_id: self._clock()})

    async def end_idle_practice(self, limit: int = 100) -> list[str]:
        """End the practice tables idle for ``practice_idle_seconds``; their ids.

        A host who closes the tab never comes back to leave, and the table's bots would
        wait for them for ever, each holding a socket and a task. Any change to the
        table counts as activity. Moves do not pass through the lobby, so a table in a
        hand that has been quiet that long is asked for its hand's version at the engine,
        and ends only if that has not moved since the previous look either: an idle
        hand is cancelled (zero bet, so nothing to void) and the bots leave.
        """
        now = self._clock()
        due = await self._redis.execute(
            "ZRANGEBYSCORE", self._practice, "-inf", now - self.practice_idle_seconds,
            "LIMIT", 0, limit,
        )  # fmt: skip
        ended: list[str] = []
        for member in due:
            table_id = member.decode()
            try:
                if await self._end_if_idle(table_id):
                    ended.append(table_id)
            except (ServiceError, RemoteError) as exc:
                log.warning("idle practice table %s: not ended yet (%s)", table_id, exc)
        return ended

    async def _end_if_idle(self, table_id: str) -> bool:
        try:
            _, rec = await self._load(table_id)
        except ServiceError as exc:
            if exc.code != codes.NOT_FOUND:
                raise
            await self._note_practice(table_id, closed=True)  # expired or never finished
            return False
        info = rec.info
        if info.status in CLOSED:
            await self._note_practice(table_id, closed=True)
            return False
        if info.status == "dealing":
            return False  # a moment's state: look again next time
        if info.status == "playing":
            version = await self._hand_version(info)
            seen = await self._redis.execute("HGET", self._practice_hands, table_id)
            if version is not None and (seen is None or int(seen) != version):
                await self._redis.execute("HSET", self._practice_hands, table_id, version)
                await self._note_practice(table_id, closed=False)
                return False
        idle_minutes = self.practice_idle_seconds / 60
        log.info("practice table %s: idle for %.0f min, ending it", table_id, idle_minutes)
        host = Caller(info.host_id, info.host_name, ())
        if info.status == "playing":
            await self.cancel_table(CancelTable(host, table_id))
        else:
            await self._update(table_id, _ended_if_waiting)
        return True

    async def _hand_version(self, info: TableInfo) -> int | None:
        """The version of the table's hand at the engine; None if it has no hand there."""
        try:
            view = await request(
                self._nc,
                subjects.engine_view(info.game),
                GetView(info.table_id),
                HandView,
                timeout=self._engine_timeout,
            )
        except RemoteError as exc:
            if exc.code == codes.NOT_FOUND:
                return None
            raise
        return view.version

    async def add_bot(self, req: AddBot) -> TableInfo:
        """Keep a seat for a bot, then have the bots service sit one there (host, 0 bet)."""
        now = self._clock()
        chosen: list[int] = []

        def keep(rec: TableRecord) -> TableRecord:
            info = rec.info
            _require_host(info, req.caller)
            _require_open(info)
            if info.bet > 0:
                raise _error(
                    codes.FORBIDDEN,
                    "bots never play for credits: only zero-bet tables can have bots",
                )
            kept = _kept_for_bots(rec, now)
            if req.seat is None:
                free = [i for i, s in enumerate(info.seats) if s is None and i not in kept]
                if not free:
                    raise _error(codes.CONFLICT, "there is no free seat for a bot")
                seat = free[0]
            else:
                seat = req.seat
                if not 0 <= seat < len(info.seats):
                    raise _error(
                        codes.BAD_REQUEST, f"seat must be between 0 and {len(info.seats) - 1}"
                    )
                if info.seats[seat] is not None:
                    raise _error(codes.CONFLICT, f"seat {seat} is taken")
                if seat in kept:
                    raise _error(codes.CONFLICT, f"a bot is already on its way to seat {seat}")
            chosen[:] = [seat]
            held = tuple(k for k in rec.bot_seats if k[0] in kept)
            return replace(rec, bot_seats=(*held, (seat, now)))

        rec = await self._update(req.table_id, keep)
        await self._seat_bot(rec.info, chosen[0])
        _, rec = await self._load(req.table_id)
        return rec.info

    async def _seat_bot(self, info: TableInfo, seat: int) -> BotSeated:
        """Ask the bots service to sit a bot in ``seat``; free the seat if it cannot.

        A bots service that is still starting (it answers only once its accounts exist)
        or briefly away answers ``unavailable``: ask again, until ``bots_timeout``.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._bots_timeout
        pause = 0.1
        try:
            while True:
                try:
                    return await request(
                        self._nc,
                        subjects.BOTS_SEAT,
                        SeatBot(info.table_id, seat, info.game),
                        BotSeated,
                        timeout=max(0.1, deadline - loop.time()),
                    )
                except RemoteError as exc:
                    if exc.code != codes.UNAVAILABLE or deadline - loop.time() <= pause:
                        raise
                await asyncio.sleep(pause)
                pause = min(pause * 2, 1.0)
        except RemoteError:
            # A bot that turns up late finds its seat no longer kept and is refused.
            def release(rec: TableRecord) -> TableRecord:
                if all(k[0] != seat for k in rec.bot_seats):
                    return rec
                return replace(rec, bot_seats=tuple(k for k in rec.bot_seats if k[0] != seat))

            await self._update(info.table_id, release)
            raise

    @staticmethod
    def _options(rules: GameRules, ruleset: str, options: dict[str, Any]) -> Any:
        if options.get("ruleset", ruleset) != ruleset:
            raise _error(codes.BAD_REQUEST, "give the ruleset once, not also inside options")
        try:
            return rules.options({**options, "ruleset": ruleset})
        except (ValueError, TypeError) as exc:
            raise _error(codes.BAD_REQUEST, str(exc)) from None

    async def list_tables(self, req: ListTables) -> TableList:
        """Open tables, newest first, optionally one game's or those with a free seat."""
        if not 1 <= req.limit <= MAX_LIST:
            raise _error(codes.BAD_REQUEST, f"limit must be between 1 and {MAX_LIST}")
        found: list[TableInfo] = []
        start = 0
        while len(found) < req.limit:
            ids = await self._redis.zrevrange(self._index, start, start + _LIST_CHUNK - 1)
            if not ids:
                break
            start += len(ids)
            names = [i.decode() for i in ids]
            async with self._redis.pipeline(transaction=False) as pipe:
                for name in names:
                    pipe.hmget(self._store.key(name), ["v", "d"])
                rows = await pipe.execute()
            gone = []
            for name, (version, data) in zip(names, rows, strict=True):
                if data is None:
                    gone.append(name)
                    continue
                info = replace(
                    msgspec.json.decode(data, type=TableRecord).info, version=int(version)
                )
                if info.status in CLOSED:
                    gone.append(name)
                elif self._listed(info, req):
                    found.append(info)
                    if len(found) == req.limit:
                        break
            if gone:
                # Index entries whose table expired or closed without its zrem landing.
                await self._redis.zrem(self._index, *gone)
                start -= len(gone)
        return TableList(tuple(found))

    @staticmethod
    def _listed(info: TableInfo, req: ListTables) -> bool:
        if info.practice:  # never indexed; this only guards against an old index entry
            return False
        if info.private and (req.caller is None or not _member(info, req.caller)):
            return False  # private means private: its invitees open it by its link
        if req.game is not None and info.game != req.game:
            return False
        return not (req.open_seats_only and None not in info.seats)

    async def get_table(self, req: GetTable) -> TableInfo:
        _, rec = await self._load(req.table_id)
        if req.caller is not None and not _may_watch(
            rec, req.caller, req.invite_code, self._clock()
        ):
            # Exactly what an unknown table answers: a private table's existence is
            # not told to someone without its code.
            raise _error(codes.NOT_FOUND, f"no table {req.table_id!r}")
        return rec.info

    # --- seats --------------------------------------------------------------------------

    async def sit(self, req: Sit) -> TableInfo:
        caller = req.caller
        is_bot = BOT_ROLE in caller.roles
        now = self._clock()

        def check(rec: TableRecord) -> int:
            info = rec.info
            _require_open(info)
            already = _seat_of(info, caller.user_id)
            if already is not None:
                raise _error(codes.CONFLICT, f"you are already sitting in seat {already}")
            if is_bot:
                return _bot_seat(rec, req.seat, now)
            if info.practice and caller.user_id != info.host_id:
                raise _error(codes.FORBIDDEN, "a practice table is for its host and bots only")
            kept = _kept_for_bots(rec, now)
            if info.private and caller.user_id != info.host_id:
                given = (req.invite_code or "").encode()
                if not hmac.compare_digest(given, (rec.invite_code or "").encode()):
                    raise _error(
                        codes.FORBIDDEN,
                        "this table is private: ask the host for its invite code"
                        if not req.invite_code
                        else "that invite code is not right for this table",
                    )
            if req.seat is None:
                free = [i for i, s in enumerate(info.seats) if s is None and i not in kept]
                if not free:
                    raise _error(codes.CONFLICT, "the table is full")
                return free[0]
            if not 0 <= req.seat < len(info.seats):
                raise _error(codes.BAD_REQUEST, f"seat must be between 0 and {len(info.seats) - 1}")
            if info.seats[req.seat] is not None:
                raise _error(codes.CONFLICT, f"seat {req.seat} is taken")
            if req.seat in kept:
                raise _error(codes.CONFLICT, f"seat {req.seat} is kept for a bot")
            return req.seat

        # Check what needs no I/O first, so a wrong code or a full table never costs a
        # wallet round trip; the same checks run again inside the CAS below.
        _, rec = await self._load(req.table_id)
        check(rec)
        await self._require_available(caller.user_id, rec.info)

        def take(rec: TableRecord) -> TableRecord:
            seat = check(rec)
            taken = _with_seat(
                rec, seat, SeatInfo(caller.user_id, caller.display_name, is_bot=is_bot)
            )
            if not is_bot:
                return taken
            return replace(taken, bot_seats=tuple(k for k in rec.bot_seats if k[0] != seat))

        return (await self._update(req.table_id, take)).info

    async def _require_available(self, user_id: str, info: TableInfo) -> None:
        if info.max_loss <= 0:
            return
        balance = await request(
            self._nc,
            subjects.WALLET_BALANCE,
            GetBalance(user_id),
            Balance,
            timeout=self._wallet_timeout,
        )
        if balance.available < info.max_loss:
            units = info.max_loss // info.bet
            raise _error(
                codes.INSUFFICIENT_FUNDS,
                f"you need {info.max_loss} credits available to sit here "
                f"({units}x the bet of {info.bet}); you have {balance.available}",
            )

    async def leave(self, req: Leave) -> TableInfo:
        def go(rec: TableRecord) -> TableRecord:
            seat = _require_seat(rec.info, req.caller)
            _require_between_hands(rec.info, "use leave after this hand")
            gone = _with_seat(rec, seat, None)
            if rec.info.practice and req.caller.user_id == rec.info.host_id:
                # A practice table is its host's: without them the bots would play alone.
                return replace(gone, info=replace(gone.info, status="ended"))
            return gone

        return (await self._update(req.table_id, go)).info

    async def leave_after_hand(self, req: LeaveAfterHand) -> TableInfo:
        def flag(rec: TableRecord) -> TableRecord:
            _require_open(rec.info)
            index = _require_seat(rec.info, req.caller)
            seat = rec.info.seats[index]
            assert seat is not None
            if seat.leave_after_hand == req.leave:
                return rec
            return _with_seat(rec, index, replace(seat, leave_after_hand=req.leave))

        return (await self._update(req.table_id, flag)).info

    async def set_ready(self, req: SetReady) -> TableInfo:
        if len(req.entropy) > MAX_ENTROPY:
            raise _error(codes.BAD_REQUEST, f"entropy must be at most {MAX_ENTROPY} characters")
        if not req.entropy.isprintable():
            raise _error(codes.BAD_REQUEST, "entropy must be printable text")

        def ready(rec: TableRecord) -> TableRecord:
            index = _require_seat(rec.info, req.caller)
            _require_between_hands(rec.info, "tap Ready for the next one when it ends")
            seat = rec.info.seats[index]
            assert seat is not None
            changed = _with_seat(rec, index, replace(seat, ready=req.ready))
            if req.ready:
                entropy = list(changed.entropy)
                entropy[index] = req.entropy
                changed = replace(changed, entropy=tuple(entropy))
            return changed

        info = (await self._update(req.table_id, ready)).info
        if info.practice and req.ready:
            return await self._deal_practice(info)
        return info

    async def _deal_practice(self, info: TableInfo) -> TableInfo:
        """A practice table deals itself when the last seat taps Ready (as its host)."""
        if info.status != "waiting" or any(s is None or not s.ready for s in info.seats):
            return info
        try:
            return await self.deal(Deal(Caller(info.host_id, info.host_name), info.table_id))
        except ServiceError as exc:
            # Usually another Ready dealt first; a failed deal has already said why on the
            # table (everyone un-readied), and the next round of Ready tries again.
            log.info("practice table %s: no deal (%s)", info.table_id, exc)
            _, rec = await self._load(info.table_id)
            return rec.info

    async def remove_player(self, req: RemovePlayer) -> TableInfo:
        def remove(rec: TableRecord) -> TableRecord:
            info = rec.info
            _require_host(info, req.caller)
            _require_between_hands(info, "remove the player after this hand")
            if not 0 <= req.seat < len(info.seats):
                raise _error(codes.BAD_REQUEST, f"seat must be between 0 and {len(info.seats) - 1}")
            if info.seats[req.seat] is None:
                raise _error(codes.CONFLICT, f"seat {req.seat} is already empty")
            return _with_seat(rec, req.seat, None)

        return (await self._update(req.table_id, remove)).info

    # --- dealing ------------------------------------------------------------------------

    async def deal(self, req: Deal) -> TableInfo:
        """Claim the table, hold every player's max loss, start the hand, mark it playing."""
        await self._rescue_stale_deal(req)
        hand_id = f"h_{uuid.uuid4().hex}"
        now = self._clock()

        def claim(rec: TableRecord) -> TableRecord:
            info = rec.info
            _require_host(info, req.caller)
            _require_open(info)
            if info.status in IN_HAND:
                raise _error(codes.CONFLICT, "a hand is already in progress at this table")
            if info.bet > 0 and any(s is not None and s.is_bot for s in info.seats):
                raise _error(codes.FORBIDDEN, "bots never play for credits")  # sit refuses
            empty = [i for i, s in enumerate(info.seats) if s is None]
            if empty:
                raise _error(
                    codes.CONFLICT,
                    f"cannot deal yet: {len(empty)} empty seat(s) ({', '.join(map(str, empty))})",
                )
            not_ready = [i for i, s in enumerate(info.seats) if s is not None and not s.ready]
            if not_ready:
                raise _error(
                    codes.CONFLICT, f"cannot deal yet: not ready: {_names(info, not_ready)}"
                )
            return replace(
                rec, info=replace(info, status="dealing", hand_id=hand_id), dealing_since=now
            )

        rec = await self._update(req.table_id, claim)
        info = rec.info
        seated = [s for s in info.seats if s is not None]
        if info.bet > 0:
            await self._place_holds(rec, hand_id, seated)
        start = StartHand(
            table_id=info.table_id,
            hand_id=hand_id,
            options=info.options,
            bet=info.bet,
            players=tuple(Player(s.user_id, s.display_name, s.is_bot) for s in seated),
            server_seed=rec.server_seed,
            entropy=rec.entropy,
            dealer=info.dealer,
        )
        try:
            await request(
                self._nc,
                subjects.engine_start(info.game),
                start,
                HandStarted,
                timeout=self._engine_timeout,
            )
        except Exception as exc:
            refused = isinstance(exc, RemoteError) and exc.code != codes.UNAVAILABLE
            if not refused:
                # No answer: the engine may have started the hand anyway. Only its
                # cancel may decide (it also voids the holds).
                await self._stop_hand(info.game, info.table_id, hand_id)
            elif info.bet > 0:
                await self._void(info.table_id, hand_id)  # refused: it never started
            # The seed went out in a StartHand that did not happen; never reuse it, and
            # since players' entropy was given against its commitment, ask them again.
            await self._revert_deal(info.table_id, hand_id, unready=None, fresh_seed=True)
            if isinstance(exc, ServiceError):
                raise _error(
                    exc.code,
                    f"the hand could not start ({exc.message}); any credits held for it "
                    "were released. Everyone please tap Ready again.",
                ) from None
            raise

        def playing(rec: TableRecord) -> TableRecord:
            if rec.info.hand_id == hand_id and rec.info.status == "dealing":
                return replace(
                    rec, info=replace(rec.info, status="playing", hand_no=rec.info.hand_no + 1)
                )
            if rec.last_hand_id == hand_id:
                return rec  # the engine already finished it (a very fast void)
            raise _DealAborted(hand_id)  # cancelled or rescued while we dealt

        try:
            return (await self._update(info.table_id, playing)).info
        except _DealAborted:
            # The table was cancelled (or rescued) while we dealt: stop our hand.
            await self._stop_hand(info.game, info.table_id, hand_id)
            raise _error(
                codes.CONFLICT, "the table changed while dealing; the hand was voided"
            ) from None

    async def _place_holds(self, rec: TableRecord, hand_id: str, seated: list[SeatInfo]) -> None:
        info = rec.info
        holds = tuple(HoldRequest(s.user_id, info.max_loss) for s in seated)
        try:
            await request(
                self._nc,
                subjects.WALLET_PLACE_HOLDS,
                PlaceHolds(info.table_id, hand_id, holds, game=info.game),
                HoldsPlaced,
                timeout=self._wallet_timeout,
            )
        except RemoteError as exc:
            if exc.code == codes.INSUFFICIENT_FUNDS:
                # All or nothing: nothing is held. The short players sit out until they
                # have the credits and tap Ready again.
                short = await self._short_players(info, exc.message)
                await self._revert_deal(info.table_id, hand_id, unready=set(short))
                who = _names(info, short) or "someone"
                raise _error(
                    codes.INSUFFICIENT_FUNDS,
                    f"cannot deal: {who} does not have {info.max_loss} credits available "
                    "for this hand and was marked not ready",
                ) from None
            # Unknown outcome (a time-out may still have placed them): void to be sure.
            # No StartHand was sent, so no engine can ever finish this hand.
            await self._void(info.table_id, hand_id)
            await self._revert_deal(info.table_id, hand_id, unready=set())
            raise _error(exc.code, f"could not hold credits for the hand: {exc.message}") from None
        except Exception:
            await self._void(info.table_id, hand_id)
            await self._revert_deal(info.table_id, hand_id, unready=set())
            raise

    async def _short_players(self, info: TableInfo, message: str) -> list[int]:
        """Seats the wallet named as short of credits (or, failing that, that are short)."""
        named = [
            i
            for i, s in enumerate(info.seats)
            if s is not None
            and re.search(rf"(?<![\w-]){re.escape(s.user_id)}(?![\w-])", message) is not None
        ]
        if named:
            return named
        short = []
        for i, s in enumerate(info.seats):
            if s is None:
                continue
            try:
                balance = await request(
                    self._nc,
                    subjects.WALLET_BALANCE,
                    GetBalance(s.user_id),
                    Balance,
                    timeout=self._wallet_timeout,
                )
            except RemoteError:
                continue
            if balance.available < info.max_loss:
                short.append(i)
        return short

    async def _revert_deal(
        self,
        table_id: str,
        hand_id: str,
        *,
        unready: set[int] | None,
        fresh_seed: bool = False,
    ) -> None:
        """Back to ``waiting`` after a failed deal; ``unready`` None: everyone."""

        def revert(rec: TableRecord) -> TableRecord:
            if rec.info.hand_id != hand_id or rec.info.status != "dealing":
                return rec  # cancelled or rescued meanwhile: theirs to handle
            changed = replace(rec, info=replace(rec.info, status="waiting", hand_id=None))
            for index, seat in enumerate(rec.info.seats):
                if seat is not None and (unready is None or index in unready):
                    changed = _with_seat(changed, index, replace(seat, ready=False))
            if fresh_seed:
                seed, commitment = new_server_seed()
                changed = replace(
                    changed,
                    server_seed=seed,
                    info=replace(changed.info, seed_commitment=commitment),
                )
            return changed

        await self._update(table_id, revert)

    async def _rescue_stale_deal(self, req: Deal) -> None:
        """A deal left half-done by a lobby replica that died: void it, reset the table."""
        _, rec = await self._load(req.table_id)
        info = rec.info
        if info.status != "dealing" or info.hand_id is None:
            return
        _require_host(info, req.caller)
        if self._clock() - rec.dealing_since < self.stale_deal_seconds:
            return  # still in flight somewhere; the claim below refuses this Deal
        log.warning("table %s: rescuing interrupted deal %s", info.table_id, info.hand_id)
        # The dead replica may or may not have sent StartHand: the engine decides (its
        # cancel of a hand it never saw blocks a late start and voids the holds).
        await self._stop_hand(info.game, info.table_id, info.hand_id)
        await self._revert_deal(info.table_id, info.hand_id, unready=None, fresh_seed=True)
        raise _error(
            codes.CONFLICT,
            "the previous deal was interrupted and has been voided; "
            "everyone please tap Ready again",
        )

    async def _void(self, table_id: str, hand_id: str) -> bool:
        """Release the holds of a hand no engine has started or ever will (idempotent);
        True when confirmed. Any other hand is stopped with :meth:`_stop_hand`."""
        try:
            await request(
                self._nc,
                subjects.WALLET_VOID,
                VoidHand(hand_id, table_id),
                Settlement,
                timeout=self._wallet_timeout,
            )
        except RemoteError as exc:
            if exc.code == codes.CONFLICT:
                return True  # already settled: its holds are gone either way
            log.error("table %s: could not void hand %s: %s", table_id, hand_id, exc)
            return False
        return True

    async def _stop_hand(self, game: str, table_id: str, hand_id: str) -> bool:
        """Have the engine cancel the hand unless it finished; True once it decided.

        The engine voids a hand it cancels (and one it never saw, which it also blocks
        from starting late), and settles one it finished. Until it answers, the cancel
        is kept for :meth:`retry_cancels`.
        """
        member = f"{game}|{table_id}|{hand_id}"
        if await self._cancel_engine_hand(game, table_id, hand_id):
            await self._redis.zrem(self._cancels, member)
            return True
        await self._redis.execute("ZADD", self._cancels, "NX", self._clock(), member)
        return False

    async def retry_cancels(self, limit: int = 100) -> int:
        """Ask the engines again about every hand whose cancel they did not confirm;
        the number confirmed now. Every replica may run this: a cancel is idempotent."""
        pending = await self._redis.execute("ZRANGE", self._cancels, 0, limit - 1)
        confirmed = 0
        for raw in pending:
            game, table_id, hand_id = raw.decode().split("|")
            if await self._stop_hand(game, table_id, hand_id):
                log.info("table %s: hand %s cancelled at the engine at last", table_id, hand_id)
                confirmed += 1
        return confirmed

    async def _cancel_engine_hand(self, game: str, table_id: str, hand_id: str) -> bool:
        try:
            answer = await request(
                self._nc,
                subjects.engine_cancel(game),
                CancelHand(table_id, hand_id),
                HandCancelled,
                timeout=self._engine_timeout,
            )
        except Exception as exc:
            # conflict: the engine's table is busy with another hand; ask again later
            # (said once; retry_cancels asks every few seconds).
            retried = await self._redis.execute(
                "ZSCORE", self._cancels, f"{game}|{table_id}|{hand_id}"
            )
            level = logging.DEBUG if retried is not None else logging.WARNING
            log.log(
                level, "table %s: engine did not cancel hand %s yet: %s", table_id, hand_id, exc
            )
            return False
        if not answer.voided:
            log.info("table %s: hand %s finished before the cancel; settled", table_id, hand_id)
        return True

    async def hand_finished(self, event: HandFinished) -> TableInfo | None:
        """The engine finished (or voided) a hand: back to waiting for the next one.

        Idempotent: only the hand the table is playing is applied, so a redelivered or
        stale event changes nothing.
        """

        def finish(rec: TableRecord) -> TableRecord:
            info = rec.info
            if info.hand_id != event.hand_id or info.status not in IN_HAND:
                return rec
            away = set(event.away_seats)
            if away:
                log.info("table %s: seats %s were away and sit out", info.table_id, sorted(away))
            # Seats that asked to leave after the hand, and seats the engine marked away
            # (they timed out twice in a row), are vacated: the table carries on without.
            seats: list[SeatInfo | None] = [
                None if s is None or s.leave_after_hand or i in away else replace(s, ready=False)
                for i, s in enumerate(info.seats)
            ]
            seed, commitment = new_server_seed()
            return replace(
                rec,
                info=replace(
                    info,
                    status="waiting",
                    hand_id=None,
                    seats=tuple(seats),
                    dealer=event.next_dealer,
                    seed_commitment=commitment,
                ),
                server_seed=seed,
                entropy=("",) * len(seats),
                last_hand_id=event.hand_id,
                dealing_since=0.0,
            )

        try:
            return (await self._update(event.table_id, finish)).info
        except ServiceError as exc:
            if exc.code == codes.NOT_FOUND:
                log.warning("hand %s finished at unknown table %s", event.hand_id, event.table_id)
                return None
            raise

    # --- closing ------------------------------------------------------------------------

    async def end_table(self, req: EndTable) -> TableInfo:
        def end(rec: TableRecord) -> TableRecord:
            _require_host(rec.info, req.caller)
            _require_between_hands(
                rec.info, "end the table after it, or cancel the table to void the hand"
            )
            return replace(rec, info=replace(rec.info, status="ended"))

        return (await self._update(req.table_id, end)).info

    async def cancel_table(self, req: CancelTable) -> TableInfo:
        """Close now; a hand in progress is cancelled at the engine, which voids it
        (unless its last move came first: then it is settled).

        Repeating it on a cancelled table repeats the engine's cancel (idempotent). If
        the engine does not answer, the table is closed all the same and the cancel is
        retried in the background (:meth:`retry_cancels`).
        """

        def cancel(rec: TableRecord) -> TableRecord:
            info = rec.info
            _require_host(info, req.caller)
            if info.status == "ended":
                raise _error(codes.CONFLICT, "this table has already ended")
            if info.status == "cancelled":
                return rec
            return replace(
                rec,
                info=replace(info, status="cancelled", hand_id=None),
                cancelled_hand_id=info.hand_id,
            )

        # Close the table first so no new Deal can start while the hand is voided.
        rec = await self._update(req.table_id, cancel)
        hand_id = rec.cancelled_hand_id
        if hand_id is not None:
            await self._stop_hand(rec.info.game, rec.info.table_id, hand_id)
        return rec.info

    # --- chat ---------------------------------------------------------------------------

    async def set_chat(self, req: SetChat) -> TableInfo:
        def toggle(rec: TableRecord) -> TableRecord:
            _require_host(rec.info, req.caller)
            _require_open(rec.info)
            if rec.info.chat_enabled == req.enabled:
                return rec
            return replace(rec, info=replace(rec.info, chat_enabled=req.enabled))

        return (await self._update(req.table_id, toggle)).info

    async def send_chat(self, req: SendChat) -> ChatSent:
        text = req.text.strip()
        if not 1 <= len(text) <= MAX_CHAT:
            raise _error(codes.BAD_REQUEST, f"a chat message is 1 to {MAX_CHAT} characters")
        _, rec = await self._load(req.table_id)
        _require_open(rec.info)
        if not rec.info.chat_enabled:
            raise _error(codes.FORBIDDEN, "chat is off at this table")
        if rec.info.private and not _member(rec.info, req.caller):
            # Spectators who came with the invite code read the chat but do not post.
            raise _error(codes.FORBIDDEN, "at a private table only its players and host may chat")
        if not await self._chat.allow(req.table_id, req.caller.user_id, self._clock()):
            raise _error(
                codes.THROTTLED,
                f"slow down: at most {self._chat.limit} messages every "
                f"{self._chat.window_seconds:g} seconds",
            )
        masked = mask(text)
        posted = ChatPosted(
            table_id=req.table_id,
            user_id=req.caller.user_id,
            display_name=req.caller.display_name,
            text=masked,
            at=self._now_iso(),
        )
        await self._nc.publish(subjects.table_events(req.table_id), encode(posted))
        return ChatSent(masked)
