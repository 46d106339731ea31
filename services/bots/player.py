"""One bot in one seat: watch the table through the SDK socket, ready up, move in time.

The loop reacts to what arrives on the bot's socket, the same frames a person's client
gets: its seat's views (with the legal moves and any running deadline) and the table's
changes. When its view offers moves — its turn, a Fight/Fold answer, a Mahjong call
window that waits on it — it waits its thinking delay, checks the view is still the
newest, asks the policy and sends the move against that view's version. A concurrent
answer that got in first makes the move ``stale_version``: the bot decides again on
the newer view at once (its thinking is done). While the game's engine restarts the
gateway answers ``unavailable``: the SDK sends the move again with backoff for a minute,
and should that not do, the bot resyncs and tries again; it never gives a view up for
want of an answer (only after moves the engine refused, ``GIVE_UP_AFTER``). Between
hands it taps Ready (a short pause after each hand so people can read the result). It
leaves when the table ends or is cancelled, or when it no longer holds its seat (the
host removed it).

The thinking delay is cut to a quarter of what is left of any running time limit (the
view's ``deadline_ms``), and a forced move (one legal action) takes a quarter of it,
so a bot never runs out of time and people can still follow it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import random
import secrets
import time
from collections.abc import Awaitable, Callable
from functools import cache
from typing import Any

import msgspec

from kalaro.bots import Policy, legal_actions, policy_for
from kalaro.client import ApiError
from kalaro.client.retry import retryable
from kalaro.client.socket import FrameError, SeatView, TableSocket
from kalaro.proto import errors as codes
from kalaro.proto.lobby import TableInfo
from services.bots.accounts import BotAccount

log = logging.getLogger("kalaro.bots")

CLOSED = ("ended", "cancelled")

#: How long to wait for news before checking in (a resync heals a lost frame).
IDLE_SECONDS = 20.0
#: After a refused move, how soon to look again if no newer view arrives.
RETRY_SECONDS = 1.0
#: Refused moves on one view before the bot falls back to a random legal one, and
#: before it gives that view up (a newer one will come).
FALLBACK_AFTER = 2
GIVE_UP_AFTER = 5
#: Backoff cap when a deal keeps failing and un-readying everyone.
MAX_READY_BACKOFF = 30.0


@cache
def _view_type(game: str) -> type[Any]:
    # Every game package exports its View (the struct the worker encodes for a seat).
    view: type[Any] = importlib.import_module(f"kalaro.games.{game}").View
    return view


def decode_view(game: str, data: dict[str, Any]) -> Any:
    """The game's ``View`` struct from a view frame's JSON (what policies read)."""
    return msgspec.convert(data, _view_type(game))


def think_seconds(think_ms: int, legal_count: int, deadline_ms: int | None, now_ms: int) -> float:
    """How long to 'think' before a move: a forced move quickly, always inside the limit."""
    delay = think_ms / 1000
    if legal_count == 1:
        delay /= 4
    if deadline_ms is not None:
        delay = min(delay, max(0.0, (deadline_ms - now_ms) / 4000))
    return delay


def decide(game: str, policy: Policy, view: Any, rng: random.Random) -> dict[str, Any] | None:
    """The policy's move for ``view`` as the JSON object the socket sends, or None."""
    action = policy.choose(view, rng)
    if action is None:
        return None
    move: dict[str, Any] = msgspec.to_builtins(action)
    return move


class Left(Exception):
    """The bot is done at this table (closed, or it lost its seat)."""


class BotSeat:
    """Plays ``account`` in ``seat`` at ``table_id`` until it leaves (see module doc)."""

    def __init__(
        self,
        account: BotAccount,
        table_id: str,
        seat: int,
        game: str,
        *,
        policy: str = "smart",
        think_ms: int = 800,
        on_leave: Callable[[BotSeat], Awaitable[None]] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.account = account
        self.table_id = table_id
        self.seat = seat
        self.game = game
        self.think_ms = think_ms
        self._policy = policy_for(game, policy)
        self._fallback = policy_for(game, "random")
        self._on_leave = on_leave
        self._rng = rng or random.Random(secrets.randbits(64))
        #: set once the bot watches the table and has tapped Ready (if it could)
        self.settled = asyncio.Event()
        self.moves = 0
        self._tried: tuple[str, int] | None = None  # the view last acted on
        self._failures = 0
        self._retry_now = False
        self._ready_version = -1  # the table's version once our last Ready was answered
        self._readied_hand: int | None = None  # hand_no we last readied for
        self._ready_backoff = 0.0

    # --- the loop ---------------------------------------------------------------------

    async def run(self) -> None:
        try:
            while True:
                try:
                    await self._step()
                except (Left, asyncio.CancelledError):
                    raise
                except Exception:
                    # Whatever went wrong (a frame we could not read, a peer away), the
                    # table still needs this seat: look again in a moment.
                    log.exception("bot %s at %s: step failed", self.account.name, self.table_id)
                    await asyncio.sleep(RETRY_SECONDS)
        except Left as why:
            log.info("bot %s leaves table %s: %s", self.account.name, self.table_id, why)
            self.settled.set()
            with contextlib.suppress(Exception):
                socket = await self.account.socket()
                await socket.unsubscribe(self.table_id)
            if self._on_leave is not None:
                await self._on_leave(self)

    async def _step(self) -> None:
        socket = await self._watch()
        state = socket.state(self.table_id)
        table = state.table
        if table is None:
            await self._wait(socket, IDLE_SECONDS)
            return
        self._check_seat(table)
        # Results pile up on a long-lived table; the bot needs none of them.
        state.results.clear()
        state.chat.clear()
        seat = table.seats[self.seat]
        waiting = table.status == "waiting" and seat is not None and not seat.ready
        if waiting and await self._ready(socket, table):
            return
        self.settled.set()
        view = state.view
        fresh = view is not None and (view.hand_id, view.version) != self._tried
        if fresh and view is not None and await self._play(socket, view):
            return
        await self._wait(socket, IDLE_SECONDS)

    async def _watch(self) -> TableSocket:
        """The account's socket, subscribed to this table (again, after a new socket)."""
        delay = 0.5
        while True:
            try:
                socket = await self.account.socket()
                if self.table_id not in socket.tables or socket.state(self.table_id).table is None:
                    await socket.subscribe(self.table_id)
                return socket
            except FrameError as exc:
                if exc.code == codes.NOT_FOUND:
                    raise Left("the table is gone") from None
                log.warning("bot %s: subscribe %s: %s", self.account.name, self.table_id, exc)
            except Exception as exc:  # the gateway is away: keep trying, gently
                log.warning(
                    "bot %s: cannot reach table %s: %r", self.account.name, self.table_id, exc
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, 10.0)

    def _check_seat(self, table: TableInfo) -> None:
        if table.status in CLOSED:
            raise Left(f"the table was {table.status}")
        seat = table.seats[self.seat] if self.seat < len(table.seats) else None
        if seat is None or seat.user_id != self.account.user_id:
            raise Left(f"no longer in seat {self.seat}")

    async def _wait(self, socket: TableSocket, timeout: float) -> None:
        """Until something about this table changes (or ``timeout``: then resync)."""
        key = self._key(socket)
        try:
            await socket.wait_for(lambda: self._key(socket) != key, timeout=timeout)
        except TimeoutError:
            # Nothing for a while: ask for a full view, in case a frame went missing.
            with contextlib.suppress(Exception):
                await socket.resync(self.table_id)

    def _key(self, socket: TableSocket) -> tuple[object, ...]:
        state = socket.tables.get(self.table_id)
        if state is None:
            return (None,)
        table, view = state.table, state.view
        return (
            table.version if table else None,
            view.hand_id if view else None,
            view.version if view else None,
        )

    # --- between hands --------------------------------------------------------------

    async def _ready(self, socket: TableSocket, table: TableInfo) -> bool:
        """Tap Ready if the table needs it of us; True if the caller should look again."""
        if table.version <= self._ready_version:
            return False  # frames from before our Ready was answered are still arriving
        first = self._readied_hand is None
        if self._readied_hand == table.hand_no:
            # Readied, yet un-readied with no hand played: a deal failed. Back off.
            self._ready_backoff = min(max(1.0, self._ready_backoff * 2), MAX_READY_BACKOFF)
            await asyncio.sleep(self._ready_backoff)
        else:
            self._ready_backoff = 0.0
            if not first:  # let people read the last hand's result first
                await asyncio.sleep(self.think_ms / 1000)
        current = socket.state(self.table_id).table
        if current is not None and current.version != table.version:
            return True  # the table moved on while we waited: look again
        self._readied_hand = table.hand_no
        try:
            answer = await self.account.rest(
                lambda c: c.ready(self.table_id, True, entropy=secrets.token_hex(16))
            )
            self._ready_version = answer.version
        except ApiError as exc:
            self._ready_version = table.version
            log.info("bot %s: ready at %s refused: %s", self.account.name, self.table_id, exc)
        self.settled.set()
        return True

    # --- moves ----------------------------------------------------------------------

    async def _play(self, socket: TableSocket, view: SeatView) -> bool:
        """Move if this view offers moves; True if the caller should look again."""
        typed = decode_view(self.game, view.view)
        legal = legal_actions(self.game, typed)
        if not legal:
            self._tried = (view.hand_id, view.version)
            return False
        if self._retry_now:
            self._retry_now = False
        else:
            now_ms = time.time_ns() // 1_000_000
            await asyncio.sleep(think_seconds(self.think_ms, len(legal), view.deadline_ms, now_ms))
        newest = socket.view(self.table_id)
        if newest is None or (newest.hand_id, newest.version) != (view.hand_id, view.version):
            return True  # something happened while we thought: decide on the newest view
        policy = self._policy if self._failures < FALLBACK_AFTER else self._fallback
        move = decide(self.game, policy, typed, self._rng)
        if move is None:
            self._tried = (view.hand_id, view.version)
            return False
        try:
            await socket.act(self.table_id, move, view.version)
        except FrameError as exc:
            if exc.code == codes.STALE_VERSION:
                # Someone answered first (a Mahjong call window takes answers at once):
                # the newer view is on its way; decide on it without thinking again.
                self._tried = (view.hand_id, view.version)
                self._retry_now = True
                newest = socket.view(self.table_id)
                if newest is not None and (newest.hand_id, newest.version) != self._tried:
                    return True  # it came while our move was in flight
                await self._wait(socket, RETRY_SECONDS)
                return True
            if retryable(exc):
                # Nobody answered even after the SDK's backoff (the game's engine is
                # away for longer than its deadline). That says nothing about the move:
                # keep this view, ask for the newest one, and try again in a moment.
                log.warning(
                    "bot %s: no answer for a move at %s v%d: %s",
                    self.account.name, self.table_id, view.version, exc,
                )  # fmt: skip
                with contextlib.suppress(Exception):
                    await socket.resync(self.table_id)
                self._retry_now = True
                await self._wait(socket, RETRY_SECONDS)
                return True
            self._failures += 1
            log.warning(
                "bot %s: %s refused at %s v%d: %s",
                self.account.name, move, self.table_id, view.version, exc,
            )  # fmt: skip
            if self._failures >= GIVE_UP_AFTER:
                self._tried = (view.hand_id, view.version)
                self._failures = 0
                with contextlib.suppress(Exception):
                    await socket.resync(self.table_id)
            return True
        except Exception as exc:  # the socket broke: the heartbeat replaces it
            log.warning("bot %s: move at %s failed: %r", self.account.name, self.table_id, exc)
            await asyncio.sleep(RETRY_SECONDS)
            return True
        self.moves += 1
        self._failures = 0
        self._tried = (view.hand_id, view.version)
        return True
