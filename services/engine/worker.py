"""The engine worker: runs hands of one game type, statelessly, on NATS and Redis.

Every request loads the table's slot from Redis (one HMGET), applies the game's pure
rules, writes the slot back by compare-and-set on its version (one EVALSHA), then
publishes finished client frames: each seat's view on that seat's own subject, the
audience view on the public subject. A seat's view is never published anywhere else;
the engines' views and ``event_for`` already hide concealed cards from everyone else.

Timers (Tongits' Fight/Fold window, Mahjong's call window) are deadlines in a Redis
sorted set, written in the same atomic step as the state that opened them. Every
replica polls the set and *leases* what is due, so a worker that dies mid-timeout
loses nothing: the lease runs out and another replica applies it. A due deadline whose
version is not the slot's any more is stale (someone acted) and is dropped.

When a hand ends the worker publishes the settlement (RESULTS, for the wallet), the
``HandFinished`` event (EVENTS, for the lobby) and the ``HandResult`` frame, then marks
the slot. A finished hand is also entered in a pending-outcomes set in the same write
that finishes it, so if the worker dies in between, a sweeper on any replica publishes
the outcome later; JetStream's message ids make a repeat harmless.

The clock is one injected callable (``now_ms``) so tests can drive time.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import logging
import time
from collections.abc import Callable
from typing import Any, Literal, assert_never

import msgspec
from msgspec.structs import replace
from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError, Service, ServiceError, request
from kalaro.bus.jetstream import ensure_stream, publish_once
from kalaro.games.base import IllegalAction, derive_seed
from kalaro.games.registry import rules_for
from kalaro.proto import endpoints, subjects
from kalaro.proto import errors as codes
from kalaro.proto.engine import (
    Act,
    Acted,
    CancelHand,
    GetHandOutcome,
    GetHandRecord,
    GetView,
    HandCancelled,
    HandOutcomeReport,
    HandRecord,
    HandStarted,
    ListMyHands,
    MyHands,
    StartHand,
)
from kalaro.proto.history import StoredHand
from kalaro.proto.lobby import HandFinished
from kalaro.proto.wallet import Payment, SettleHand, VoidHand
from kalaro.proto.ws import HandResult, HandView
from kalaro.records import summary
from kalaro.settings import Settings
from services.engine.slots import (
    DONE_SLOT_TTL_MS,
    Slot,
    SlotStore,
    StaleVersion,
    deadline_member,
    hand_record,
    parse_deadline,
    parse_outcome,
)
from services.engine.stored import stored_record

log = logging.getLogger("kalaro.engine")


#: How long a claimed deadline or outcome stays with the worker that claimed it.
LEASE_MS = 5_000
#: How long the worker that finished a hand has to publish its outcome before a
#: sweeper may step in (a repeat is harmless, but the HandResult frame would show twice).
OUTCOME_GRACE_MS = 5_000
#: A failed outcome publish (the stream is electing a leader) is retried at once with
#: this backoff, for this long, before the sweeper's own retries take over.
OUTCOME_RETRY_SECONDS = 30.0
_OUTCOME_BACKOFF = (0.1, 0.2, 0.3, 0.5)
#: How long a StartHand waits for the previous hand's outcome to be published (a NATS
#: leader election takes up to ~6 s), within the lobby's 10 s wait for the engine.
START_WAIT_SECONDS = 7.0
#: A sweep that failed to publish an outcome tries again this soon.
SWEEP_RETRY_MS = 2_000
#: The timer loop's period and the sweeper's.
TICK_SECONDS = 0.1
#: how many tables' latest state a worker keeps to skip a read (see ``_remember``)
KNOWN_TABLES = 10_000
SWEEP_SECONDS = 3.0
#: The most hands one page of a player's hand history may ask for.
MAX_MY_HANDS = 100

_EMPTY_EVENTS = msgspec.Raw(b"[]")


class RecordNotPublished(Exception):
    """A voided hand's void went out, its record (for history) did not yet."""

    def __init__(self, hand_id: str) -> None:
        super().__init__(f"hand {hand_id}: voided, its record not published yet")


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def _bad_request(message: str) -> ServiceError:
    return ServiceError(codes.BAD_REQUEST, message)


def _stale(expected: int, current: int) -> ServiceError:
    return ServiceError(
        codes.STALE_VERSION, f"the hand is at version {current}, not {expected}; resync and retry"
    )


def _timer_window(timer: Any) -> str:
    """Which window a timer belongs to: moves and answers inside it do not restart its
    clock, but a change of its length does (a seat marked away is played at once; one
    back from away gets the whole clock again)."""
    return f"{timer.kind}:{getattr(timer, 'opened_at', '')}:{timer.seconds}"


class EngineWorker:
    """One game's hands: request handlers as plain async methods, plus the timer loop.

    ``namespace`` prefixes the worker's Redis keys (tests share one redis-server).
    """

    def __init__(
        self,
        game: str,
        nc: NATS,
        redis: Any,
        *,
        now_ms: Callable[[], int] = wall_clock_ms,
        namespace: str = "",
        tick_seconds: float = TICK_SECONDS,
        sweep_seconds: float = SWEEP_SECONDS,
        settings: Settings | None = None,
        audience: Literal["watched", "always"] = "watched",
    ) -> None:
        self.game = game
        # "watched": the audience view only while a gateway marks the table as watched
        # (``subjects.table_audience_key``); "always" for tests that listen on NATS alone.
        self._audience_always = audience == "always"
        self._audience_prefix = namespace
        self._redis = redis
        self._settings = settings  # stream replicas and limits (defaults without)
        self.rules = rules_for(game)
        self.now_ms = now_ms
        self.slots = SlotStore(redis, game, namespace)
        self._nc = nc
        self._js = nc.jetstream()
        self._tick = tick_seconds
        self._sweep_every = sweep_seconds
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        # Built once: the hot path only encodes and decodes.
        self._json = msgspec.json.Encoder()
        self._state_encoder = msgspec.msgpack.Encoder()
        self._state_decoder = msgspec.msgpack.Decoder(self.rules.state_type)
        self._time_out_type = type(self.rules.time_out())
        # table id -> (version, slot, decoded state) as this worker last wrote it
        self._known: dict[str, tuple[int, Slot, Any]] = {}
        self._retries: set[asyncio.Task[None]] = set()  # outcomes being published again

    # --- requests ---------------------------------------------------------------------

    async def start_hand(self, msg: StartHand) -> HandStarted:
        """Deal a new hand at the table; a repeat of the same hand id changes nothing."""
        rules = self.rules
        if len(msg.players) != rules.seats:
            raise _bad_request(f"{self.game} is played by {rules.seats}, not {len(msg.players)}")
        if len({p.user_id for p in msg.players}) != len(msg.players):
            raise _bad_request("a player cannot take two seats")
        if msg.bet < 0:
            raise _bad_request("the bet cannot be negative")
        try:
            server_seed = bytes.fromhex(msg.server_seed)
        except ValueError:
            raise _bad_request("the server seed must be hex") from None
        if not server_seed:
            raise _bad_request("the server seed is empty")
        try:
            options = rules.options(msg.options)
            state = rules.new_hand(options, derive_seed(server_seed, msg.entropy), msg.dealer)
        except ValueError as exc:
            raise _bad_request(str(exc)) from None

        for _ in range(8):
            version, slot = await self.slots.load(msg.table_id)
            if slot is not None:
                if slot.hand_id == msg.hand_id:
                    if slot.status == "cancelled":
                        raise ServiceError(codes.CONFLICT, f"hand {msg.hand_id} was cancelled")
                    return HandStarted(hand_id=msg.hand_id, version=version)
                if slot.status == "playing":
                    raise ServiceError(
                        codes.CONFLICT,
                        f"hand {slot.hand_id} is still being played at table {msg.table_id}",
                    )
                if not slot.outcome_published:
                    # Never overwrite a settlement nobody has sent yet. The table has moved
                    # on, so the old hand's result frame would only confuse its sockets.
                    await self._publish_outcome_within(slot, version, START_WAIT_SECONDS)
                    continue
            fresh = Slot(
                table_id=msg.table_id,
                hand_id=msg.hand_id,
                game=self.game,
                options=rules.options_dict(options),
                bet=msg.bet,
                players=msg.players,
                dealer=msg.dealer,
                seed_commitment=hashlib.sha256(server_seed).hexdigest(),
                server_seed=msg.server_seed,
                entropy=msg.entropy,
                initial_hands=rules.dealt(state),
                private=msg.private,
                ranked=msg.ranked,
            )
            try:
                new_version = await self._advance(fresh, version, state, [], (), was_timed=False)
            except StaleVersion:
                continue  # a racing StartHand (or the previous hand's marking) went first
            return HandStarted(hand_id=msg.hand_id, version=new_version)
        raise ServiceError(codes.CONFLICT, f"table {msg.table_id} is too busy; retry")

    async def act(self, msg: Act) -> Acted:
        """Apply one player's move made against ``msg.version``; nothing changes on error."""
        known = self._known.get(msg.table_id)
        if known is not None and known[0] == msg.version:
            version, slot, state = known  # the write below still checks the version in Redis
        else:
            version, slot = await self._load(msg.table_id)
            state = None
        if version != msg.version:
            raise _stale(msg.version, version)
        if slot.status == "cancelled":
            raise ServiceError(codes.HAND_CANCELLED, "this hand was cancelled")
        seat = self._seat_of(slot, msg.user_id)
        if seat is None:
            raise ServiceError(codes.FORBIDDEN, "you are not seated in this hand")
        try:
            action = self.rules.decode_action(bytes(msg.action))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise _bad_request(f"malformed action: {exc}") from None
        if isinstance(action, self._time_out_type):
            raise ServiceError(codes.FORBIDDEN, "time-outs are applied by the server")
        if state is None:
            state = self._state_decoder.decode(slot.state)
        try:
            state, events = self.rules.apply(state, seat, action)
        except IllegalAction as exc:
            if known is not None and self._known.pop(msg.table_id, None) is not None:
                # Judged on what this worker last wrote: make sure that is still the hand
                # (another replica may have moved it on) before calling the move illegal.
                return await self.act(msg)
            raise ServiceError(exc.code, exc.message) from None
        logged = ((seat, self._json.encode(action)),)
        try:
            new_version = await self._advance(
                slot, version, state, events, logged, was_timed=slot.deadline_ms is not None
            )
        except StaleVersion as exc:
            self._known.pop(msg.table_id, None)
            raise _stale(msg.version, exc.current) from None
        return Acted(hand_id=slot.hand_id, version=new_version)

    async def get_view(self, msg: GetView) -> HandView:
        """A full view: the caller's seat if seated, else the audience's."""
        version, slot = await self._load(msg.table_id)
        if not slot.state:
            raise ServiceError(codes.NOT_FOUND, f"no hand at table {msg.table_id}")
        seat = self._seat_of(slot, msg.user_id) if msg.user_id is not None else None
        state = self._state_decoder.decode(slot.state)
        return HandView(
            table_id=slot.table_id,
            hand_id=slot.hand_id,
            version=version,
            seat=seat,
            view=msgspec.Raw(self._json.encode(self.rules.view(state, seat))),
            events=_EMPTY_EVENTS,
            deadline_ms=slot.deadline_ms,
        )

    async def get_record(self, msg: GetHandRecord) -> HandRecord:
        """A finished hand's record while Redis keeps it (an hour once history has it,
        else 7 days): what ``kalaro verify`` checks. The gateway asks history first."""
        record = await self.slots.load_record(msg.hand_id)
        if record is None:
            raise ServiceError(codes.NOT_FOUND, f"no finished hand {msg.hand_id} (or it expired)")
        return record

    async def my_hands(self, msg: ListMyHands) -> MyHands:
        """A player's finished hands of this game that history has not stored yet (it
        takes stored ones out of the index), newest first."""
        if not 1 <= msg.limit <= MAX_MY_HANDS:
            raise ServiceError(codes.BAD_REQUEST, f"limit must be 1 to {MAX_MY_HANDS}")
        found = await self.slots.player_hands(msg.user_id, msg.before_ms, msg.limit)
        return MyHands(hands=tuple(summary(r, msg.user_id, ms) for ms, r in found))

    async def outcome(self, msg: GetHandOutcome) -> HandOutcomeReport:
        """What became of a hand, for the wallet's reconciler (read only).

        A finished hand is answered from its record (Redis's copy, else history's, kept
        for good), so a settlement lost on its way to the wallet can still be applied
        from here. "unknown" (the wallet may release the holds) only when history says
        it has no such hand: history not answering is ``unavailable``.
        """
        _, slot = await self.slots.load(msg.table_id)
        if slot is not None and slot.hand_id == msg.hand_id and slot.status != "finished":
            return HandOutcomeReport(hand_id=msg.hand_id, status=slot.status)
        record = await self.slots.load_record(msg.hand_id)
        if record is None and slot is not None and slot.hand_id == msg.hand_id:
            record = hand_record(slot)  # finished a moment ago; its record is being saved
        if record is None:
            record = await stored_record(self._nc, msg.hand_id)
        if record is None:
            return HandOutcomeReport(hand_id=msg.hand_id, status="unknown")
        if record.voided:
            return HandOutcomeReport(hand_id=msg.hand_id, status="cancelled")
        return HandOutcomeReport(
            hand_id=msg.hand_id,
            status="finished",
            players=tuple(p.user_id for p in record.players),
            payments=record.payments,
        )

    async def cancel(self, msg: CancelHand) -> HandCancelled:
        """Void the hand (no credits move), unless it has finished. Idempotent.

        This compare-and-set is the one place a hand's outcome is decided: whichever
        of the last move and the cancel writes first wins, and only that outcome (a
        settlement or a void, under the hand id) is ever published to the wallet.
        ``voided=False`` means the hand finished and is being settled. A ``conflict``
        means the table is busy with another hand: ask again later.
        """
        for _ in range(8):
            version, slot = await self.slots.load(msg.table_id)
            if slot is None or slot.hand_id != msg.hand_id:
                if slot is not None and (slot.status == "playing" or not slot.outcome_published):
                    raise ServiceError(
                        codes.CONFLICT,
                        f"table {msg.table_id} is at hand {slot.hand_id}, not {msg.hand_id}",
                    )
                if await self.slots.has_record(msg.hand_id):
                    return HandCancelled(hand_id=msg.hand_id, voided=False)  # finished: settled
                decided = await self._decided_in_history(msg.hand_id)
                if decided is not None:
                    return decided
                # Never seen here: a StartHand for it may still be on its way (the lobby
                # timed out). Leave a tombstone so it can never start, and void the holds.
                cancelled = Slot(
                    table_id=msg.table_id, hand_id=msg.hand_id, game=self.game, status="cancelled"
                )
            elif slot.status == "finished":
                return HandCancelled(hand_id=msg.hand_id, voided=False)
            elif slot.status == "cancelled":
                # Already voided. If its VoidHand is not out yet, the worker that cancelled
                # is sending it right now, or the sweeper will: sending it here too would
                # only repeat it.
                return HandCancelled(hand_id=msg.hand_id, voided=True)
            else:
                cancelled = replace(slot, status="cancelled", deadline_ms=None, timer_window="")
            drop = (
                deadline_member(slot.table_id, slot.hand_id, version)
                if slot is not None and slot.deadline_ms is not None
                else ""
            )
            try:
                new_version = (
                    await self.slots.save(
                        cancelled,
                        version,
                        drop_deadline=drop,
                        outcome="add",
                        outcome_due_ms=self.now_ms() + OUTCOME_GRACE_MS,
                    )
                ).version
            except StaleVersion:
                continue
            try:
                await self._publish_outcome(cancelled, new_version)
            except RecordNotPublished as exc:
                # The void is out: the cancel stands. Its slot is left unmarked, so the
                # sweeper publishes the outcome again, record included (JetStream drops
                # the void's repeat).
                log.warning("%s (%r); the sweeper will", exc, exc.__cause__)
            return HandCancelled(hand_id=msg.hand_id, voided=True)
        raise ServiceError(codes.CONFLICT, f"table {msg.table_id} is too busy; retry")

    async def _decided_in_history(self, hand_id: str) -> HandCancelled | None:
        """A hand whose Redis copy is gone (history stored it over an hour ago), as
        history answers it; None: history has no such hand, or does not answer. Then
        the caller voids it: right for a hand never started here, and a settled hand's
        late void is refused by the wallet (one outcome per hand)."""
        try:
            record = await stored_record(self._nc, hand_id)
        except ServiceError as exc:
            log.warning("hand %s: %s; cancelling it as never started here", hand_id, exc.message)
            return None
        return None if record is None else HandCancelled(hand_id=hand_id, voided=record.voided)

    # --- timers and the outcome sweeper ---------------------------------------------

    async def claim_due_timers(self) -> list[str]:
        """Lease the deadlines due now (what ``fire_due_timers`` does first)."""
        return await self.slots.claim(self.slots.deadlines_key, self.now_ms(), LEASE_MS)

    async def fire_due_timers(self) -> int:
        """Apply every due timer; the number of hands that changed."""
        members = await self.claim_due_timers()
        if not members:
            return 0
        fired = await asyncio.gather(*(self.fire_timer(m) for m in members))
        return sum(fired)

    async def fire_timer(self, member: str) -> bool:
        """Apply one claimed deadline if it still stands; release it either way."""
        table_id, hand_id, version = parse_deadline(member)
        applied = False
        try:
            current, slot = await self.slots.load(table_id)
            if (
                slot is not None
                and slot.hand_id == hand_id
                and current == version
                and slot.status == "playing"
            ):
                applied = await self._time_out(slot, current)
        except StaleVersion:
            pass  # someone acted first: this deadline is stale
        except Exception:
            # Leave the lease to run out: another try (here or elsewhere) comes later.
            log.exception("timer %s failed", member)
            return False
        await self.slots.release(self.slots.deadlines_key, member)
        return applied

    async def sweep_outcomes(self) -> int:
        """Publish outcomes of finished or cancelled hands nobody published in time."""
        members = await self.slots.claim(self.slots.outcomes_key, self.now_ms(), LEASE_MS * 6)
        published = 0
        for member in members:
            table_id, hand_id = parse_outcome(member)
            try:
                version, slot = await self.slots.load(table_id)
                if (
                    slot is not None
                    and slot.hand_id == hand_id
                    and slot.status != "playing"
                    and not slot.outcome_published
                ):
                    log.warning("hand %s: publishing its outcome late", hand_id)
                    await self._publish_outcome(slot, version)
                    published += 1
            except Exception as exc:
                log.warning("outcome of hand %s: publishing failed (%r); will retry", hand_id, exc)
                await self.slots.due_again(
                    self.slots.outcomes_key, member, self.now_ms() + SWEEP_RETRY_MS
                )
                continue
            await self.slots.release(self.slots.outcomes_key, member)
        return published

    async def ensure_streams(self) -> None:
        await ensure_stream(self._js, subjects.RESULTS_STREAM, settings=self._settings)
        await ensure_stream(self._js, subjects.EVENTS_STREAM, settings=self._settings)
        await ensure_stream(self._js, subjects.RECORDS_STREAM, settings=self._settings)

    async def start(self) -> None:
        """Ensure the streams, sweep once, then run the timer loop in the background."""
        await self.ensure_streams()
        try:
            await self.sweep_outcomes()
        except Exception:
            log.warning("engine %s: first sweep failed; the loop retries", self.game, exc_info=True)
        self._stopping = False
        self._task = asyncio.create_task(self._background(), name=f"engine-{self.game}-timers")

    async def stop(self) -> None:
        # The flag as well as the cancel: Python 3.11's wait_for (inside nats-py) can
        # swallow a cancellation that lands as its future completes, and the loop then
        # ran on, so SIGTERM left the worker hanging until it was killed.
        self._stopping = True
        for task in (self._task, *self._retries):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._task = None

    def build_service(self) -> Service:
        """The worker's endpoints on the queue group ``engine-<game>``."""
        service = Service(f"engine-{self.game}")
        service.add(endpoints.engine_start(self.game), self.start_hand)
        service.add(endpoints.engine_act(self.game), self.act)
        service.add(endpoints.engine_view(self.game), self.get_view)
        service.add(endpoints.engine_cancel(self.game), self.cancel)
        service.add(endpoints.engine_record(self.game), self.get_record)
        service.add(endpoints.engine_outcome(self.game), self.outcome)
        service.add(endpoints.engine_my_hands(self.game), self.my_hands)
        return service

    async def _background(self) -> None:
        loop = asyncio.get_running_loop()
        next_sweep = loop.time() + self._sweep_every
        while not self._stopping:
            try:
                await self.fire_due_timers()
                if loop.time() >= next_sweep:
                    next_sweep = loop.time() + self._sweep_every
                    await self.sweep_outcomes()
            except Exception:
                log.warning("engine %s: timer loop failed; retrying", self.game, exc_info=True)
            await asyncio.sleep(self._tick)

    # --- the hand's life ------------------------------------------------------------

    def _remember(self, table_id: str, version: int, slot: Slot, state: Any) -> None:
        """Keep what this worker just wrote, so the next move at the table usually needs no
        read: it is used only when the move names exactly that version, and the
        compare-and-set write still refuses it if another replica has moved the hand on.
        Redis stays the only truth; this saves one round trip per move."""
        known = self._known
        known.pop(table_id, None)
        known[table_id] = (version, slot, state)
        if len(known) > KNOWN_TABLES:
            del known[next(iter(known))]  # the least recently written table

    async def _load(self, table_id: str) -> tuple[int, Slot]:
        version, slot = await self.slots.load(table_id)
        if slot is None:
            raise ServiceError(codes.NOT_FOUND, f"no hand at table {table_id}")
        if slot.game != self.game:
            raise ServiceError(codes.CONFLICT, f"table {table_id} plays {slot.game}")
        return version, slot

    @staticmethod
    def _seat_of(slot: Slot, user_id: str) -> int | None:
        for seat, player in enumerate(slot.players):
            if player.user_id == user_id:
                return seat
        return None

    async def _time_out(self, slot: Slot, version: int) -> bool:
        """Time out every seat the window still waits on, in one write."""
        rules = self.rules
        state = self._state_decoder.decode(slot.state)
        events: list[Any] = []
        logged: list[tuple[int, bytes]] = []
        time_out = rules.time_out()
        encoded = self._json.encode(time_out)
        # Re-read the timer after each time-out: a Mahjong window may close early (no
        # one left could beat a claim), and then nobody else is timed out.
        for _ in range(rules.seats):
            timer = rules.pending_timer(state)
            if timer is None or _timer_window(timer) != slot.timer_window:
                break
            waiting = rules.to_act(state)
            seats = [s for s in timer.seats if s in waiting]
            if not seats:
                break
            state, new_events = rules.apply(state, seats[0], time_out)
            events.extend(new_events)
            logged.append((seats[0], encoded))
        if not logged:
            return False
        await self._advance(slot, version, state, events, tuple(logged), was_timed=True)
        return True

    async def _advance(
        self,
        slot: Slot,
        version: int,
        state: Any,
        events: list[Any],
        logged: tuple[tuple[int, bytes], ...],
        *,
        was_timed: bool,
    ) -> int:
        """Write the hand's next state (compare-and-set), then publish what changed.

        ``logged`` are the actions just applied (the store appends them to the log).
        """
        rules = self.rules
        now = self.now_ms()
        over = rules.is_over(state)
        deadline: int | None = None
        window = ""
        timer = None if over else rules.pending_timer(state)
        if timer is not None:
            window = _timer_window(timer)
            same = slot.deadline_ms is not None and slot.timer_window == window
            deadline = slot.deadline_ms if same else now + timer.seconds * 1000
        status: Literal["finished", "playing"] = "finished" if over else "playing"
        new = replace(
            slot,
            state=self._state_encoder.encode(state),
            actions=slot.actions + logged,
            status=status,
            deadline_ms=deadline,
            timer_window=window,
        )
        new_version = version + 1
        table_id, hand_id = slot.table_id, slot.hand_id
        written = await self.slots.save(
            new,
            version,
            appended=logged,
            drop_deadline=deadline_member(table_id, hand_id, version) if was_timed else "",
            add_deadline=(
                (deadline_member(table_id, hand_id, new_version), deadline)
                if deadline is not None
                else None
            ),
            outcome="add" if over else "",
            outcome_due_ms=now + OUTCOME_GRACE_MS,
            watch_key=(
                ""
                if self._audience_always
                else self._audience_prefix + subjects.table_audience_key(table_id)
            ),
        )
        self._remember(table_id, new_version, new, state)
        watched = self._audience_always or written.watched
        await self._publish_views(new, new_version, state, events, watched)
        if over:
            try:
                await self._publish_outcome(new, new_version)
            except Exception as exc:
                # The hand is over and stored. A stream whose leader just died answers
                # again within seconds: publish again from here, soon, rather than wait
                # for the sweeper (which also will, should this worker die).
                log.warning("hand %s: outcome not published yet (%r); retrying", new.hand_id, exc)
                task = asyncio.create_task(self._publish_outcome_again(new, new_version))
                self._retries.add(task)
                task.add_done_callback(self._retries.discard)
        return new_version

    async def _publish_outcome_within(self, slot: Slot, version: int, seconds: float) -> None:
        """Publish (no frame), retrying while the stream elects a leader; ``unavailable``
        if it still cannot after ``seconds``."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + seconds
        for attempt in itertools.count():
            try:
                await self._publish_outcome(slot, version, frame=False)
            except Exception as exc:
                if loop.time() >= give_up:
                    raise ServiceError(
                        codes.UNAVAILABLE,
                        f"the last hand's result could not be recorded yet ({exc!r}); retry",
                    ) from None
                await asyncio.sleep(_OUTCOME_BACKOFF[min(attempt, len(_OUTCOME_BACKOFF) - 1)])
            else:
                return

    async def _publish_outcome_again(self, slot: Slot, version: int) -> None:
        loop = asyncio.get_running_loop()
        give_up = loop.time() + OUTCOME_RETRY_SECONDS
        try:
            shown = await self._deliver_directly(slot)
        except Exception:
            log.warning("hand %s: direct delivery failed", slot.hand_id, exc_info=True)
            shown = False
        for attempt in itertools.count():
            await asyncio.sleep(_OUTCOME_BACKOFF[min(attempt, len(_OUTCOME_BACKOFF) - 1)])
            try:
                await self._publish_outcome(slot, version, frame=not shown)
            except Exception as exc:
                if loop.time() >= give_up or self._stopping:
                    log.error(
                        "hand %s: outcome still not published (%r); the sweeper will",
                        slot.hand_id,
                        exc,
                    )
                    return
            else:
                log.info("hand %s: outcome published after %d retries", slot.hand_id, attempt + 1)
                return

    def _view_frames(
        self, slot: Slot, version: int, state: Any, events: list[Any], watched: bool
    ) -> list[tuple[int | None, bytes]]:
        """Each seat's encoded ``HandView`` frame, and the audience's (seat None) only
        while someone watches: building and encoding a view nobody reads is a quarter of
        the views' cost. Each seat's frame shows only what that seat may see."""
        rules = self.rules
        encode = self._json.encode
        frames: list[tuple[int | None, bytes]] = []
        for seat in (*range(len(slot.players)), *((None,) if watched else ())):
            seen = [e for e in (rules.event_for(event, seat) for event in events) if e is not None]
            frame = HandView(
                table_id=slot.table_id,
                hand_id=slot.hand_id,
                version=version,
                seat=seat,
                view=msgspec.Raw(encode(rules.view(state, seat))),
                events=msgspec.Raw(encode(seen)) if seen else _EMPTY_EVENTS,
                deadline_ms=slot.deadline_ms,
            )
            frames.append((seat, encode(frame)))
        return frames

    async def _publish_views(
        self,
        slot: Slot,
        version: int,
        state: Any,
        events: list[Any],
        watched: bool,
    ) -> None:
        """Each seat's frame on its own subject; the audience's on the public subject.

        ``watched`` is the audience mark as the state's write found it, in the same
        atomic step. A gateway subscribes to the public subject, then sets the mark, then
        asks for the current view; so either the write saw the mark and this frame
        reaches the new spectator, or the mark came later and so did the view the
        gateway asked for, which then already shows this version.
        """
        frames = self._view_frames(slot, version, state, events, watched)
        await self._deliver(slot.table_id, frames)

    async def _deliver(self, table_id: str, frames: list[tuple[int | None, bytes]]) -> None:
        """Each frame on its seat's subject (the audience's, seat None, on the public one)."""
        publish = self._nc.publish
        for seat, frame in frames:
            subject = (
                subjects.table_public(table_id)
                if seat is None
                else subjects.table_seat(table_id, seat)
            )
            await publish(subject, frame)

    def _outcome_messages(
        self, slot: Slot
    ) -> tuple[SettleHand | VoidHand | None, HandFinished | None, HandResult | None]:
        """What a decided hand sends: to the wallet (None: a zero-bet hand held nothing),
        to the lobby (finished hands), and to the table's sockets (finished hands)."""
        table_id, hand_id = slot.table_id, slot.hand_id
        if slot.status != "finished":
            return VoidHand(hand_id=hand_id, table_id=table_id), None, None
        record = hand_record(slot)
        settle = None
        if slot.bet > 0:  # a zero-bet (practice) hand placed no holds to settle
            payments = tuple(
                Payment(user_id=player.user_id, amount=credits)
                for player, credits in zip(slot.players, record.payments, strict=True)
            )
            settle = SettleHand(hand_id=hand_id, payments=payments, table_id=table_id)
        finished = HandFinished(
            table_id=table_id,
            hand_id=hand_id,
            next_dealer=record.result["next_dealer"],
            away_seats=self.rules.away_seats(self._state_decoder.decode(slot.state)),
        )
        shown = HandResult(
            table_id=table_id,
            hand_id=hand_id,
            result=msgspec.Raw(self._json.encode(record.result)),
            payments=record.payments,
            players=tuple(p.user_id for p in slot.players),
            seed_commitment=slot.seed_commitment,
            server_seed=slot.server_seed,
            entropy=slot.entropy,
        )
        return settle, finished, shown

    async def _publish_outcome(self, slot: Slot, version: int, *, frame: bool = True) -> None:
        """Send a finished hand's settlement (or a cancelled one's void), then mark it.

        The settlement, ``HandFinished`` and the hand's record carry the hand id as their
        message id, so a repeat is dropped by JetStream; the ``HandResult`` frame
        (``frame``) is plain NATS, which is why callers avoid repeating it.
        """
        hand_id = slot.hand_id
        to_wallet, to_lobby, shown = self._outcome_messages(slot)
        if slot.status == "finished":
            record, finished_ms = hand_record(slot), self.now_ms()
            await self.slots.save_record(record, finished_ms)
            # For good: the history service stores it in SQL, then cuts this copy to an hour.
            await self._publish_record(record, finished_ms)
        if to_wallet is not None:
            await publish_once(self._js, subjects.hand_result(hand_id), to_wallet, msg_id=hand_id)
        if to_lobby is not None:
            await publish_once(self._js, subjects.HAND_FINISHED, to_lobby, msg_id=hand_id)
        if slot.status == "cancelled" and slot.state:
            # A hand voided after its deal goes to history too (a tombstone, cancelled
            # before any deal, has nothing to record). After the void, so the wallet
            # never waits on the records stream. Not kept in Redis: the engine's stored
            # records mean "finished, settle these payments" to ``outcome`` and ``cancel``.
            try:
                await self._publish_record(hand_record(slot), self.now_ms())
            except Exception as exc:
                raise RecordNotPublished(hand_id) from exc
        if shown is not None and frame:
            await self._nc.publish(subjects.table_events(slot.table_id), self._json.encode(shown))
        marked = replace(slot, outcome_published=True)
        with contextlib.suppress(StaleVersion):  # marked by another, or a new hand began
            await self.slots.save(marked, version, outcome="del", ttl_ms=DONE_SLOT_TTL_MS)

    async def _publish_record(self, record: HandRecord, finished_ms: int) -> None:
        """The hand's record on RECORDS, for the history service (once: the hand id)."""
        stored = StoredHand(record=record, finished_ms=finished_ms, practice=record.practice)
        hand_id = record.hand_id
        await publish_once(self._js, subjects.hand_record(hand_id), stored, msg_id=hand_id)

    async def _deliver_directly(self, slot: Slot) -> bool:
        """Hand a decided outcome to the wallet and the lobby by request/reply, while the
        streams have no leader (a NATS node just died: an election takes seconds, a
        request to a live replica milliseconds). Both apply it keyed by the hand, so the
        stream's copy, published once it answers again, changes nothing. Then show the
        result at the table. True when both confirmed."""
        to_wallet, to_lobby, shown = self._outcome_messages(slot)
        try:
            match to_wallet:
                case SettleHand():
                    await request(self._nc, endpoints.WALLET_SETTLE, to_wallet, timeout=2)
                case VoidHand():
                    await request(self._nc, endpoints.WALLET_VOID, to_wallet, timeout=2)
                case None:
                    pass
                case _:
                    assert_never(to_wallet)
            if to_lobby is not None:
                await request(self._nc, endpoints.LOBBY_HAND_FINISHED, to_lobby, timeout=2)
        except RemoteError as exc:
            log.info("hand %s: direct delivery not confirmed (%s)", slot.hand_id, exc)
            return False
        if shown is not None:
            await self._nc.publish(subjects.table_events(slot.table_id), self._json.encode(shown))
        return True
