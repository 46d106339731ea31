"""The only engine worker of a game restarts mid-hand: callers ride it out.

A practice Tongits table (zero bet, the bots service's bots in seats 1 and 2, the test's
SDK client in seat 0). Mid-hand the game's only engine process is SIGKILLed and started
again (same spec) ~9 s later. Meanwhile the gateway answers every move and read for the
game ``unavailable`` (nobody is subscribed); the SDK tries those again with backoff, and
the bots keep their seats' moves going, so the hand reaches its result and the table
goes back to waiting. Tongits turns have no time limit, so nothing else would move the
hand on: a caller that gave up would leave it stuck for good.

Every move, the person's and the bots', goes through the gateway to the engine: the
gateway applies none itself (issue 32), so nothing moves the hand while it is down.

The stack is the session's: each test restarts the engine even when it fails.
"""

from __future__ import annotations

import asyncio
import random
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import msgspec
import pytest

from kalaro.bots import legal_actions, policy_for
from kalaro.client import KalaroClient, TableSocket
from kalaro.client.socket import FrameError
from kalaro.games import tongits
from kalaro.launcher import SERVICES
from kalaro.proto import ws as w
from tests.e2e.stack import Stack

PASSWORD = "correct horse battery staple"
ENGINE = next(spec for spec in SERVICES if spec.name == "engine-tongits")
#: How long the engine stays down: several of the old five quick retries, well inside
#: the SDK's 60 s deadline.
DOWN_SECONDS = 9.0
#: A hand, including the outage, must end within this.
HAND_SECONDS = 60.0


@pytest.fixture
async def person(stack: Stack, unique: str) -> AsyncIterator[KalaroClient]:
    async with KalaroClient(stack.base_url) as client:
        await client.sign_up(f"restart-{unique}@example.com", PASSWORD, "Ligaya")
        yield client


class Outage:
    """Kills the game's engine and starts it again ``DOWN_SECONDS`` later; on exit the
    engine runs again whatever happened (the stack is shared)."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.killed_at: float | None = None
        self.back_at: float | None = None
        self._restart: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Outage:
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._restart is not None and not self._restart.done():
            self._restart.cancel()
        if ENGINE.name not in self.stack.processes:
            self.stack.start(ENGINE)

    def begin(self) -> None:
        assert self.killed_at is None, "one outage per test"
        self.stack.stop(ENGINE.name, signal.SIGKILL)
        self.killed_at = time.monotonic()
        self._restart = asyncio.get_running_loop().create_task(self._start_later())

    async def _start_later(self) -> None:
        await asyncio.sleep(DOWN_SECONDS)
        self.stack.start(ENGINE)
        self.back_at = time.monotonic()


Hook = Callable[[int, dict[str, Any]], Awaitable[None]]


async def play_hand(
    client: KalaroClient,
    socket: TableSocket,
    table_id: str,
    *,
    before_move: Hook | None = None,
    after_move: Hook | None = None,
    acks: dict[int, tuple[float, int, w.Ack]] | None = None,
) -> w.HandResult:
    """Play seat 0 (smart policy) until the next hand ends: tap Ready while the table
    waits, move whenever our newest view offers moves. The hooks get our move count
    (from 1) and the move; ``acks`` gets, per move taken, when its answer came, the
    version it was sent at and the answer."""
    rng = random.Random(11)
    policy = policy_for("tongits", "smart")
    state = socket.state(table_id)
    done = len(state.results)
    tried: tuple[str, int] | None = None
    moves = 0
    readied = -1
    async with asyncio.timeout(HAND_SECONDS):
        while len(state.results) == done:
            table, view = state.table, state.view
            mine = table.seats[0] if table is not None else None
            if (
                table is not None and table.status == "waiting" and mine is not None
                and not mine.ready and readied != table.hand_no
            ):  # fmt: skip
                readied = table.hand_no
                await client.ready(table_id, True, entropy=f"restart-{rng.random()}")
                continue  # frames came meanwhile: look at them before waiting for more
            if view is not None and (view.hand_id, view.version) != tried:
                tried = (view.hand_id, view.version)
                typed = msgspec.convert(view.view, tongits.View)
                if legal_actions("tongits", typed):
                    move: dict[str, Any] = msgspec.to_builtins(policy.choose(typed, rng))
                    moves += 1
                    if before_move is not None:
                        await before_move(moves, move)
                    try:
                        ack = await socket.act(table_id, move, view.version)
                    except FrameError as exc:
                        if exc.code != "stale_version":
                            raise
                    else:
                        if acks is not None:
                            acks[moves] = (time.monotonic(), view.version, ack)
                    if after_move is not None:
                        await after_move(moves, move)
                    continue
            snapshot = (state.table, state.view, len(state.results))

            def changed(s: tuple[object, ...] = snapshot) -> bool:
                return (state.table, state.view, len(state.results)) != s

            await socket.wait_for(changed, 30)
    return state.results[done]


async def back_to_waiting(socket: TableSocket, table_id: str) -> None:
    await socket.wait_for(
        lambda: (t := socket.state(table_id).table) is not None and t.status == "waiting", 30
    )


async def kill_before_third_move(
    person: KalaroClient, socket: TableSocket, table_id: str, outage: Outage
) -> tuple[w.HandResult, tuple[float, int, w.Ack]]:
    """Play until, mid-hand and on our turn, the engine dies just before our third move
    of a hand is sent: the hand it was in, and when that move's answer came, the version
    it was sent at and the answer."""

    async def before_move(n: int, move: dict[str, Any]) -> None:
        if n == 3 and outage.killed_at is None:
            outage.begin()

    for _ in range(3):  # a hand too short for three moves of ours: play another
        acks: dict[int, tuple[float, int, w.Ack]] = {}
        result = await play_hand(person, socket, table_id, before_move=before_move, acks=acks)
        if outage.killed_at is not None:
            break
    assert outage.killed_at is not None, "three hands without a third move of ours"
    assert 3 in acks, "the move sent while the engine was down was not taken"
    return result, acks[3]


async def test_a_move_sent_while_the_engine_is_down_lands_once_it_is_back(
    stack: Stack, person: KalaroClient
) -> None:
    table_id = (await person.create_practice("tongits")).table.table_id
    async with Outage(stack) as outage, person.table_socket() as socket:
        await socket.subscribe(table_id)
        # The SDK keeps sending the move (same version) until the restarted engine takes it.
        result, (at, version, ack) = await kill_before_third_move(person, socket, table_id, outage)
        assert outage.back_at is not None and at >= outage.back_at  # it waited, not failed
        assert at - outage.killed_at >= DOWN_SECONDS
        assert ack.version == version + 1  # applied once, on the version it was sent at
        assert result.players[0] == person.user.user_id and result.payments == (0, 0, 0)
        await back_to_waiting(socket, table_id)
    await person.cancel_table(table_id)


async def test_bots_play_on_after_the_engine_restarts_during_their_turn(
    stack: Stack, person: KalaroClient
) -> None:
    table_id = (await person.create_practice("tongits")).table.table_id
    async with Outage(stack) as outage, person.table_socket() as socket:
        await socket.subscribe(table_id)
        first = await play_hand(person, socket, table_id)  # a finished hand to read later
        read: list[tuple[float, str]] = []

        async def read_record() -> None:
            # REST: from history, or from the engine's copy while history has not stored it
            record = await person.hand_record(table_id, first.hand_id)
            read.append((time.monotonic(), record.hand_id))

        reading: list[asyncio.Task[None]] = []

        async def kill_after_discard(n: int, move: dict[str, Any]) -> None:
            # Our discard hands the turn to the bots: kill the engine before they can
            # answer it (they think for 40 ms), and read through the gateway meanwhile.
            if move["type"] != "discard" or n < 3 or outage.killed_at is not None:
                return
            view = socket.view(table_id)
            if view is None or view.view.get("result") is not None:
                return
            outage.begin()
            reading.append(asyncio.get_running_loop().create_task(read_record()))

        second = None
        for _ in range(3):
            second = await play_hand(person, socket, table_id, after_move=kill_after_discard)
            if outage.killed_at is not None:
                break
        assert outage.killed_at is not None, "three hands without a discard of ours mid-hand"
        assert second is not None and second.hand_id != first.hand_id
        await back_to_waiting(socket, table_id)
        assert outage.back_at is not None
        await asyncio.wait_for(reading[0], 30)
        assert read and read[0][1] == first.hand_id
        # The read did not fail: history answered it while the engine was down (it used to
        # wait for the engine), or, had history not stored the hand yet, the engine once back.
        record = await person.hand_record(table_id, second.hand_id)
        assert {seat for seat, _ in record.actions} >= {0, 1, 2}
        # The bots met the outage (their SDK said so) and still finished the hand.
        met = [
            line
            for line in stack.log("bots").splitlines()
            if f"move at {table_id} v" in line and "unavailable" in line
        ]
        assert met, "no bot's move met the outage: it was not their turn after all"
    await person.cancel_table(table_id)
