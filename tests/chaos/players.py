"""Players that keep bet hands going at one table through every fault.

Each :class:`TableRunner` is one table's host and seated players (SDK clients through
the balancer). It deals, plays hands to their end with random or smart legal moves, and
now and then has the host cancel the table mid-hand and open a new one. Everything it
learns about a hand goes into a :class:`HandLog` the checks read afterwards.

Faults make any request fail for a while (a gateway, lobby or NATS node just died), so
every call is retried until a deadline; a view lost on the way (core NATS drops messages
while a node dies) is healed by subscribing again when the hand has not moved for a bit.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

import httpx
import msgspec

from kalaro.bots import policy_for
from kalaro.client import ApiError, KalaroClient
from kalaro.client.socket import FrameError, TableSocket
from kalaro.client.wire import WireClosed
from tests.e2e.tables import legal_of

T = TypeVar("T")

#: A hand that has not moved for this long is re-fetched (subscribe again).
QUIET_SECONDS = 3.0
#: A hand that has not moved for this long is stuck: reported, and its table cancelled.
STUCK_SECONDS = 90.0
#: How long any one call may keep failing before the runner gives up on it.
CALL_SECONDS = 90.0


class GaveUp(Exception):
    pass


@dataclass
class HandLog:
    hand_id: str
    table_id: str
    game: str
    dealt_at: float
    last_move_at: float | None = None  # wall clock (time.time()) of the last act we sent
    result_at: float | None = None
    finished: bool = False  # a result was seen (frame, view or hand record)
    payments: dict[str, int] = field(default_factory=dict)  # user id -> credits
    cancelled: bool = False  # the host cancelled the table during this hand
    moves: int = 0
    acked: Counter[int] = field(default_factory=Counter)  # seat -> moves the engine acked

    @property
    def ended_at(self) -> float:
        return self.last_move_at or self.result_at or self.dealt_at


@dataclass
class Journal:
    """What every runner saw, shared: hands, tables, problems, notes."""

    hands: dict[str, HandLog] = field(default_factory=dict)
    tables: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)  # each one fails the test
    notes: list[str] = field(default_factory=list)  # worth reading, not failures
    retries: int = 0  # calls retried after a transient failure
    act_errors: Counter[str] = field(default_factory=Counter)  # act failures by code
    reconnects: int = 0  # sockets that reconnected by themselves (SDK)
    resubscribes: int = 0  # quiet hands re-fetched by subscribing again

    def problem(self, text: str) -> None:
        print(f"[chaos] PROBLEM {time.strftime('%H:%M:%S')} {text}", flush=True)
        self.problems.append(text)

    def note(self, text: str) -> None:
        self.notes.append(f"{time.strftime('%H:%M:%S')} {text}")


_RETRYABLE = (httpx.TransportError, WireClosed, TimeoutError, ConnectionError, OSError)


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, _RETRYABLE):
        return True
    if isinstance(exc, ApiError):
        return exc.status >= 500 or exc.code in ("unavailable", "timeout", "http_error")
    if isinstance(exc, FrameError):
        return exc.code in ("unavailable", "timeout", "not_subscribed", "internal")
    return False


async def call(
    journal: Journal, what: str, fn: Callable[[], Awaitable[T]], seconds: float = CALL_SECONDS
) -> T:
    """``fn()`` retried while it fails the way a fault makes things fail."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return await fn()
        except Exception as exc:
            if not _transient(exc) or time.monotonic() > deadline:
                raise
            journal.retries += 1
            await asyncio.sleep(0.3)


class TableRunner:
    def __init__(
        self,
        journal: Journal,
        host: KalaroClient,
        players: list[KalaroClient],
        game: str,
        bet: int,
        *,
        rng: random.Random,
        cancel_chance: float,
        policy: str = "smart",
        cancel_hand: int | None = None,
    ) -> None:
        self.journal = journal
        self.host = host
        self.players = players
        self.game = game
        self.bet = bet
        self.rng = rng
        self.cancel_chance = cancel_chance
        self.cancel_hand = cancel_hand  # this runner's n-th hand (1-based) is cancelled
        self.brain = policy_for(game, policy)
        self.view_type = __import__(f"kalaro.games.{game}", fromlist=["View"]).View
        self.table_id = ""
        self.sockets: list[TableSocket] = []
        self.hands_played = 0
        self.cancels = 0

    def log(self, text: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        print(f"[chaos] {stamp} {self.game} {self.table_id}: {text}", flush=True)

    # --- tables --------------------------------------------------------------------------
    async def open_table(self) -> None:
        j = self.journal
        created = await call(j, "create table", lambda: self.host.create_table(self.game, self.bet))
        self.table_id = created.table.table_id
        j.tables.add(self.table_id)
        for seat, player in enumerate(self.players):

            async def sit(player: KalaroClient = player, seat: int = seat) -> None:
                try:
                    await player.sit(self.table_id, seat)
                except ApiError as exc:  # a retried sit that had gone through
                    info = await player.get_table(self.table_id)
                    mine = info.seats[seat]
                    me = player.user.user_id
                    if exc.code != "conflict" or mine is None or mine.user_id != me:
                        raise

            await call(j, "sit", sit)
        self.sockets = []
        for player in self.players:
            socket = player.table_socket(keep_frames=False)
            await call(j, "connect", socket.connect)
            await call(j, "subscribe", lambda s=socket: s.subscribe(self.table_id))
            self.sockets.append(socket)

    async def close_sockets(self) -> None:
        for socket in self.sockets:
            self.journal.reconnects += max(0, socket.connects - 1)
            with contextlib.suppress(Exception):
                await socket.close()
        self.sockets = []

    async def cancel_table(self, why: str) -> None:
        self.log(f"cancel ({why})")
        self.cancels += 1
        # The lobby refuses with "cancel again in a moment" if it could not void yet.
        deadline = time.monotonic() + CALL_SECONDS
        while True:
            try:
                await self.host.cancel_table(self.table_id)
                return
            except Exception as exc:
                if time.monotonic() > deadline:
                    self.journal.problem(
                        f"table {self.table_id}: cancel kept failing for {CALL_SECONDS:.0f}s: {exc}"
                    )
                    return
                if isinstance(exc, ApiError) and not _transient(exc):
                    self.journal.note(f"table {self.table_id}: cancel answered {exc}; again")
                await asyncio.sleep(0.5)

    # --- hands ---------------------------------------------------------------------------
    async def deal(self) -> str:
        """Everyone taps Ready and the host deals; the new hand's id."""
        j = self.journal
        deadline = time.monotonic() + CALL_SECONDS
        while True:
            info = await call(j, "get table", lambda: self.host.get_table(self.table_id))
            if info.status == "playing" and info.hand_id and info.hand_id not in j.hands:
                return info.hand_id  # a deal whose answer we lost went through
            if info.status == "waiting":
                try:
                    for seat, player in enumerate(self.players):
                        entropy = f"chaos-{seat}-{self.rng.random()}"
                        await call(
                            j, "ready", lambda p=player, e=entropy: p.ready(self.table_id, True, e)
                        )
                    dealt = await self.host.deal(self.table_id)
                    if dealt.hand_id:
                        return dealt.hand_id
                except Exception as exc:
                    if not (_transient(exc) or isinstance(exc, ApiError)):
                        raise
                    self.journal.note(f"table {self.table_id}: deal failed: {exc}")
            if info.status in ("ended", "cancelled"):
                raise GaveUp(f"table {self.table_id} is {info.status} while dealing")
            if time.monotonic() > deadline:
                last = j.hands.get(info.hand_id or "")
                j.problem(
                    f"table {self.table_id} ({self.game}): no deal possible for "
                    f"{CALL_SECONDS:.0f}s; status {info.status!r}, hand {info.hand_id} "
                    f"(we saw it finish: {last.finished if last else 'not ours'})"
                )
                raise GaveUp(f"table {self.table_id} stuck in {info.status}")
            await asyncio.sleep(0.3)

    def _result_of(self, hand_id: str) -> tuple[int, ...] | None:
        for socket in self.sockets:
            for result in socket.state(self.table_id).results:
                if result.hand_id == hand_id:
                    return result.payments
        return None

    def _seen_end(self, hand_id: str) -> bool:
        for socket in self.sockets:
            if any(r.hand_id == hand_id for r in socket.state(self.table_id).results):
                return True
            view = socket.view(self.table_id)
            if view is not None and view.hand_id == hand_id and view.view.get("result"):
                return True
        return False

    def _newest(self, hand_id: str) -> int:
        versions = [
            v.version
            for s in self.sockets
            if (v := s.view(self.table_id)) is not None and v.hand_id == hand_id
        ]
        return max(versions, default=-1)

    async def _resubscribe(self) -> None:
        self.journal.resubscribes += 1
        for socket in self.sockets:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(socket.subscribe(self.table_id), 5)

    async def _finish(self, hand: HandLog) -> None:
        hand.finished = True
        hand.result_at = hand.result_at or time.time()
        payments = self._result_of(hand.hand_id)
        if payments is None or len(payments) != len(self.players):
            # The view shows the end before the result frame comes (late when the outcome
            # waits for the sweeper; core NATS may drop it while a node dies): read the record.
            try:
                record = await call(
                    self.journal,
                    "hand record",
                    lambda: self.host.hand_record(self.table_id, hand.hand_id),
                    30,
                )
                payments = record.payments
                self.journal.note(
                    f"hand {hand.hand_id}: ended, result frame not seen yet; record read"
                )
            except Exception as exc:
                self.journal.note(f"hand {hand.hand_id}: finished, but no record: {exc}")
                return
        hand.payments = {
            p.user.user_id: paid for p, paid in zip(self.players, payments, strict=True)
        }

    async def play(self, hand: HandLog, cancel_after: int | None) -> str:
        """Play ``hand`` to its end: ``finished``, ``cancelled`` or ``stuck``."""
        tid = self.table_id
        last_version, last_change = -1, time.monotonic()
        quiet_since = time.monotonic()
        while True:
            if self._seen_end(hand.hand_id):
                await self._finish(hand)
                return "finished"
            if cancel_after is not None and hand.moves >= cancel_after:
                await self.cancel_table(f"mid-hand, after {hand.moves} moves")
                if self._seen_end(hand.hand_id):
                    await self._finish(hand)  # the last move won the race: settled
                    self.journal.note(f"hand {hand.hand_id}: finished as it was cancelled")
                else:
                    hand.cancelled = True
                return "cancelled"
            version = self._newest(hand.hand_id)
            now = time.monotonic()
            if version != last_version:
                last_version, last_change, quiet_since = version, now, now
            elif now - last_change > STUCK_SECONDS:
                info = await call(self.journal, "get table", lambda: self.host.get_table(tid))
                if info.hand_id != hand.hand_id or info.status != "playing":
                    # The hand ended and every result frame and view of its end was lost.
                    await self._finish(hand)
                    return "finished"
                self.journal.problem(
                    f"hand {hand.hand_id} ({self.game}, table {tid}) stuck at version "
                    f"{version} for {STUCK_SECONDS:.0f}s; table status {info.status}"
                )
                await self.cancel_table("stuck hand")
                hand.cancelled = True
                return "stuck"
            elif now - quiet_since > QUIET_SECONDS:
                quiet_since = now
                await self._resubscribe()  # heals a lost view: subscribing sends the newest
            mover = None
            for seat, socket in enumerate(self.sockets):
                own = socket.view(tid)
                if (
                    own is not None
                    and own.hand_id == hand.hand_id
                    and own.version == version
                    and legal_of(own.view)
                ):
                    mover = (seat, socket, own)
                    break
            if mover is None:
                await self._wait_change(version, hand.hand_id)
                continue
            seat, socket, own = mover
            decoded = msgspec.convert(own.view, self.view_type)
            chosen = self.brain.choose(decoded, self.rng)
            action = msgspec.to_builtins(chosen) if chosen is not None else None
            if action is None:
                action = self.rng.choice(legal_of(own.view))
            hand.last_move_at = time.time()
            try:
                ack = await socket.act(tid, action, version=own.version)
            except FrameError as exc:
                self.journal.act_errors[exc.code] += 1
                if exc.code == "hand_cancelled":
                    self.journal.problem(
                        f"hand {hand.hand_id}: the engine says cancelled, but we never cancelled"
                    )
                    hand.cancelled = True
                    return "cancelled"
                await asyncio.sleep(0.05 if exc.code == "stale_version" else 0.3)
                continue
            except (WireClosed, TimeoutError, ConnectionError) as exc:
                self.journal.act_errors[type(exc).__name__] += 1
                await asyncio.sleep(0.3)
                continue
            hand.moves += 1
            hand.acked[seat] += 1
            if ack.version is not None:
                await self._wait_version(socket, ack.version, hand.hand_id)

    async def _wait_change(self, version: int, hand_id: str) -> None:
        def moved() -> bool:
            return self._newest(hand_id) > version or self._seen_end(hand_id)

        for socket in self.sockets:
            with contextlib.suppress(TimeoutError):
                await socket.wait_for(moved, 0.5)
            if moved():
                return

    async def _wait_version(self, socket: TableSocket, version: int, hand_id: str) -> None:
        def arrived() -> bool:
            v = socket.view(self.table_id)
            return (v is not None and v.hand_id == hand_id and v.version >= version) or (
                self._seen_end(hand_id)
            )

        with contextlib.suppress(TimeoutError):
            await socket.wait_for(arrived, 2)

    # --- the loop ------------------------------------------------------------------------
    async def run(self, stop: asyncio.Event) -> None:
        """Tables and hands until ``stop``; the hand in play when it is set is finished."""
        while not stop.is_set():
            try:
                await self.open_table()
                while not stop.is_set():
                    hand_id = await self.deal()
                    hand = HandLog(hand_id, self.table_id, self.game, time.time())
                    self.journal.hands[hand_id] = hand
                    cancel_after = None
                    forced = self.hands_played + 1 == self.cancel_hand
                    if forced or self.rng.random() < self.cancel_chance:
                        cancel_after = self.rng.randint(1, 12)
                    outcome = await self.play(hand, cancel_after)
                    self.hands_played += 1
                    if outcome != "finished":
                        break
            except GaveUp as exc:
                self.journal.note(f"{self.game}: {exc}; opening a new table")
                with contextlib.suppress(Exception):
                    await self.host.cancel_table(self.table_id)
            except Exception as exc:
                self.journal.problem(
                    f"{self.game} runner at table {self.table_id}: {type(exc).__name__}: {exc}"
                )
                with contextlib.suppress(Exception):
                    await self.host.cancel_table(self.table_id)
                await asyncio.sleep(1)
            finally:
                await self.close_sockets()
