"""No table waits forever: a player who never moves, in every game.

The idle player's socket stays open (they closed the laptop lid, not the tab) and
never acts. The turn clock auto-plays their turns; after two time-outs in a row they
are marked away and played at once from then on, so the hand ends, settles, and the
away player sits out the next deal while the table carries on.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import msgspec
import pytest

from kalaro.bots import policy_for
from kalaro.client.socket import FrameError, SeatView
from tests.e2e.stack import Stack
from tests.e2e.tables import LiveTable, admin, legal_of, open_table, signed_up, wait_balance

CLOCK = 2  # seconds per turn: short, so whole hands fit in a test
IDLE = 1  # the seat that never moves

# (game, house rules, seats, bet): Ka Wu Xing's hold is 272x the bet, so a small bet.
GAMES = [
    ("tongits", {"turn_seconds": CLOCK, "fight_seconds": 3}, 3, 10),
    ("mahjong", {"turn_seconds": CLOCK, "call_seconds": 3}, 4, 10),
    ("kawuxing", {"turn_seconds": CLOCK, "call_seconds": 3}, 3, 2),
]


async def _play_around_the_idle_seat(
    live: LiveTable, game: str, timeout: float, results_before: int
) -> None:
    """Everyone but IDLE plays (smart policy) until this hand's result arrives (the
    socket's results list holds the earlier hands' too: ``results_before`` of them)."""
    brain = policy_for(game, "smart")
    rng = random.Random(7)
    view_type = __import__(f"kalaro.games.{game}", fromlist=["View"]).View
    deadline = time.monotonic() + timeout
    done: set[tuple[int, int]] = set()  # (seat, version) already acted on
    results = live.sockets[0].state(live.table_id).results
    while len(results) <= results_before:
        assert time.monotonic() < deadline, "the hand did not end: the table waited"
        for seat, socket in enumerate(live.sockets):
            own = socket.view(live.table_id)
            if seat == IDLE or own is None or (seat, own.version) in done:
                continue
            legal = [a for a in legal_of(own.view) if a["type"] != "back"]
            if not legal or own.view.get("result") is not None:
                continue
            done.add((seat, own.version))
            chosen = brain.choose(msgspec.convert(own.view, view_type), rng)
            action = msgspec.to_builtins(chosen) if chosen is not None else None
            if action is None or action.get("type") in ("back", "time_out"):
                action = rng.choice(legal)
            try:
                await socket.act(live.table_id, action, version=own.version)
            except FrameError as exc:
                if exc.code not in ("stale_version", "hand_cancelled"):
                    raise
        await asyncio.sleep(0.01)  # only the idle seat or a timer can move it on now


@pytest.mark.parametrize(("game", "options", "seats", "bet"), GAMES, ids=[g[0] for g in GAMES])
async def test_a_player_who_never_moves_cannot_stall_the_table(
    stack: Stack, unique: str, game: str, options: dict[str, Any], seats: int, bet: int
) -> None:
    host = await admin(stack)
    players = [
        await signed_up(stack, f"Clock{game[:2]}{i}", f"{unique}{game}") for i in range(seats)
    ]
    live = await open_table(stack, host, players, game, bet, options)
    timed_out: list[dict[str, Any]] = []

    away_turn_waits: list[float] = []  # seconds the clock gave the idle seat once away

    # Every seat sees the idle seat's time-outs. A socket that falls behind is sent the
    # newest (complete) view and skips the events between, so listen on all of them.
    seen: set[tuple[int, int]] = set()  # (version, seat) of time-outs already noted

    def note_any(view: SeatView) -> None:
        for e in view.events:
            if e.get("type") == "timed_out" and (view.version, e["seat"]) not in seen:
                seen.add((view.version, e["seat"]))
                timed_out.append({**e, "version": view.version})

    def note_clock(view: SeatView) -> None:
        clock, away = view.view.get("clock"), view.view.get("away") or ()
        if clock and clock["kind"] == "turn" and clock["seats"] == [IDLE] and away[IDLE]:
            assert view.deadline_ms is not None
            away_turn_waits.append(view.deadline_ms / 1000 - time.time())

    for socket in live.sockets:
        socket.view_listeners.append(note_any)
    live.sockets[IDLE].view_listeners.append(note_clock)
    balances = [1000] * seats
    # A hand can end (a quick Tongits) before the idle seat's second time-out: deal again
    # until it has been marked away once, as it must be within a few hands.
    for _ in range(4):
        timed_out.clear()
        seen.clear()
        results_before = len(live.sockets[0].state(live.table_id).results)
        await live.deal()
        started = time.monotonic()
        await _play_around_the_idle_seat(live, game, timeout=90, results_before=results_before)
        took = time.monotonic() - started
        result = live.sockets[0].state(live.table_id).results[-1]
        assert sum(result.payments) == 0
        balances = [b + p for b, p in zip(balances, result.payments, strict=True)]
        timed_out.sort(key=lambda e: e["version"])
        # (A call window's time-out is the idle seat's own business: it counts for nothing.)
        idle_outs = [e for e in timed_out if e["seat"] == IDLE and not e.get("call")]
        others = [e for e in timed_out if e["seat"] != IDLE]
        assert not others, f"a playing seat timed out: {others}"
        await _wait_waiting(host, live.table_id)
        # The lobby's seat list is the ground truth: an away seat is stood up after the hand.
        if (await host.get_table(live.table_id)).seats[IDLE] is None:
            assert any(e["away"] for e in idle_outs), f"stood up, never seen away: {timed_out}"
            break
    else:
        raise AssertionError(f"in four hands the idle seat was never marked away: {timed_out}")
    away_at = next(i for i, e in enumerate(idle_outs) if e["away"])
    assert away_at == 1  # the second time-out in a row (the default setting)
    # Away, its turns are played at once: each one's deadline is already (about) due.
    if len(idle_outs) > 2:
        assert away_turn_waits and max(away_turn_waits) < 0.5, away_turn_waits
    # Only the first two time-outs waited a clock; once away it is played at once.
    assert took < CLOCK * 2 + 60, f"{len(idle_outs)} time-outs took {took:.0f} s"

    # Settled: every balance moved by exactly the hands' payments, nothing held.
    for seat, player in enumerate(players):
        assert await wait_balance(player, balances[seat]) == balances[seat]
        assert (await player.balance()).held == 0

    # The away player sits out the next deal; the table carries on without them.
    table = await host.get_table(live.table_id)
    assert table.seats[IDLE] is None, table.seats
    assert all(table.seats[s] is not None for s in range(seats) if s != IDLE), table.seats
    await live.close()


async def _wait_waiting(host: Any, table_id: str) -> None:
    deadline = time.monotonic() + 15
    while (await host.get_table(table_id)).status != "waiting":
        assert time.monotonic() < deadline, "the table never went back to waiting"
        await asyncio.sleep(0.1)
