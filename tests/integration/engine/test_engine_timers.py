"""Timers: Tongits' Fight/Fold window and Mahjong's call window close on time.

Two tests run the real clock with one-second windows and the workers' own timer
loops; the others drive a fake clock to pin down the rules: an answer does not restart
the window, every seat still waited on times out in one write, and a deadline leased
by a worker that dies is applied by another once the lease runs out.
"""

from __future__ import annotations

import asyncio
import time

import msgspec
from nats.aio.client import Client as NATS

from kalaro.proto import subjects
from kalaro.proto.wallet import SettleHand
from services.engine.slots import deadline_member
from services.engine.timers import LEASE_MS
from tests.cancels import swallowing_one_cancel
from tests.integration.engine.engine_helpers import (
    FakeClock,
    Feed,
    Replicas,
    decode_state,
    load_slot,
    mahjong_call_window,
    replay,
    send_act,
    start_hand,
    start_message,
    stream_messages,
    tongits_draw_call,
    wall_clock,
)

TIME_OUT = b'{"type":"time_out"}'


async def test_unanswered_draw_call_folds_both_opponents_after_a_short_window(
    js_nc: NATS, workers: Replicas, unique: str
) -> None:
    nc = js_nc
    options = {"fight_seconds": 1}
    scenario = tongits_draw_call(options, asked=2)
    # Two replicas, both running their timer loops on the real clock.
    for _ in range(2):
        await workers.start("tongits", background=True, now_ms=wall_clock)
    start = start_message(
        "tongits",
        unique,
        options=options,
        server_seed=scenario.server_seed,
        entropy=scenario.entropy,
        dealer=scenario.dealer,
    )
    feed = await Feed.open(nc, start.table_id, 3)
    started = await start_hand(nc, "tongits", start)
    before = wall_clock()
    called = await replay(nc, "tongits", start, started.version, scenario.actions)
    after = wall_clock()
    await feed.wait_version(called)
    deadline = feed.public_views[called]["deadline_ms"]
    assert before + 1000 <= deadline <= after + 1000
    caller = scenario.actions[-1][0]
    asked = [s for s in range(3) if s != caller]
    for seat in asked:
        assert feed.view(seat, called)["draw_call"]["waiting"] == asked

    await feed.wait_version(called + 1, timeout=4.0)
    assert wall_clock() >= deadline
    ended = feed.public_views[called + 1]
    assert ended["view"]["phase"] == "over"
    folded = [e for e in ended["events"] if e["type"] == "folded"]
    assert sorted(e["seat"] for e in folded) == asked
    assert all(e["timed_out"] for e in folded)
    assert ended["deadline_ms"] is None

    _, slot = await load_slot(workers.store("tongits"), start.table_id)
    assert [a for _, a in slot.actions[-2:]] == [TIME_OUT, TIME_OUT]
    assert len(slot.actions) == len(scenario.actions) + 2, "applied once by two timer loops"
    settled = await stream_messages(
        nc, subjects.RESULTS_STREAM, subjects.hand_result(start.hand_id)
    )
    assert len(settled) == 1
    assert await workers.redis.zcard(workers.store("tongits").deadlines_key) == 0
    await feed.close()


async def test_an_answer_does_not_restart_the_window_and_a_late_seat_times_out(
    js_nc: NATS, workers: Replicas, unique: str, clock: FakeClock
) -> None:
    nc = js_nc
    scenario = tongits_draw_call({}, asked=2)  # the default 20-second window
    replica = await workers.start("tongits")
    store = workers.store("tongits")
    start = start_message(
        "tongits", unique, server_seed=scenario.server_seed, entropy=scenario.entropy
    )
    feed = await Feed.open(nc, start.table_id, 3)
    started = await start_hand(nc, "tongits", start)
    called = await replay(nc, "tongits", start, started.version, scenario.actions)
    opened = clock.now
    await feed.wait_version(called)
    assert feed.public_views[called]["deadline_ms"] == opened + 20_000
    fighter, late = feed.view(0, called)["draw_call"]["waiting"]

    clock.advance(5_000)
    answered = await send_act(
        nc, "tongits", start.table_id, start.players[fighter].user_id, called, {"type": "fight"}
    )
    await feed.wait_version(answered.version)
    assert feed.public_views[answered.version]["deadline_ms"] == opened + 20_000
    # The old version's deadline went with the write that made it stale.
    members = await workers.redis.execute("ZRANGE", store.deadlines_key, 0, -1, "WITHSCORES")
    assert members == [
        deadline_member(start.table_id, start.hand_id, answered.version).encode(),
        str(opened + 20_000).encode(),
    ]

    clock.now = opened + 19_999
    assert await replica.worker.fire_due_timers() == 0
    assert (await store.load(start.table_id))[0] == answered.version
    clock.now = opened + 20_000
    assert await replica.worker.fire_due_timers() == 1

    version, slot = await load_slot(store, start.table_id)
    assert version == answered.version + 2  # the time-out, then the outcome marked
    call = decode_state("tongits", slot).result.draw_call
    assert call.answers[fighter] == "fight" and not call.timed_out[fighter]
    assert call.answers[late] == "fold" and call.timed_out[late]
    assert await workers.redis.zcard(store.deadlines_key) == 0
    settled = await stream_messages(
        nc, subjects.RESULTS_STREAM, subjects.hand_result(start.hand_id)
    )
    assert msgspec.json.decode(settled[0].data, type=SettleHand).hand_id == start.hand_id
    await feed.close()


async def test_a_deadline_leased_by_a_dead_worker_is_applied_by_another_after_the_lease(
    js_nc: NATS, workers: Replicas, unique: str, clock: FakeClock
) -> None:
    nc = js_nc
    scenario = tongits_draw_call({}, asked=2)
    doomed = await workers.start("tongits")
    survivor = await workers.start("tongits")
    store = workers.store("tongits")
    start = start_message(
        "tongits", unique, server_seed=scenario.server_seed, entropy=scenario.entropy
    )
    started = await start_hand(nc, "tongits", start)
    called = await replay(nc, "tongits", start, started.version, scenario.actions)

    clock.advance(20_000)
    claimed = await doomed.worker.claim_due_timers()
    assert claimed == [deadline_member(start.table_id, start.hand_id, called)]
    await workers.kill(doomed)  # dies holding the lease, before applying anything

    assert await survivor.worker.fire_due_timers() == 0, "leased: not due again yet"
    clock.advance(LEASE_MS - 1)
    assert await survivor.worker.fire_due_timers() == 0
    assert (await store.load(start.table_id))[0] == called
    clock.advance(1)
    assert await survivor.worker.fire_due_timers() == 1

    version, slot = await load_slot(store, start.table_id)
    assert slot.status == "finished"
    # Both opponents timed out in ONE write: one version for both, then the marking.
    assert version == called + 2
    assert [a for _, a in slot.actions[-2:]] == [TIME_OUT, TIME_OUT]
    assert await workers.redis.zcard(store.deadlines_key) == 0
    settled = await stream_messages(
        nc, subjects.RESULTS_STREAM, subjects.hand_result(start.hand_id)
    )
    assert len(settled) == 1


async def test_mahjong_call_window_passes_for_everyone_silent_after_a_short_window(
    js_nc: NATS, workers: Replicas, unique: str
) -> None:
    nc = js_nc
    options = {"call_seconds": 1, "turn_seconds": None}  # only the call window's clock
    scenario = mahjong_call_window(options, waiting=2)
    await workers.start("mahjong", background=True, now_ms=wall_clock)
    start = start_message(
        "mahjong",
        unique,
        options=options,
        server_seed=scenario.server_seed,
        entropy=scenario.entropy,
        dealer=scenario.dealer,
    )
    feed = await Feed.open(nc, start.table_id, 4)
    started = await start_hand(nc, "mahjong", start)
    opened_at = time.monotonic()
    window = await replay(nc, "mahjong", start, started.version, scenario.actions)
    await feed.wait_version(window)
    assert feed.public_views[window]["view"]["phase"] == "calls"
    assert feed.public_views[window]["deadline_ms"] is not None
    waiting = [s for s in range(4) if feed.view(s, window)["legal"]]
    assert len(waiting) >= 2

    await feed.wait_version(window + 1, timeout=4.0)
    assert time.monotonic() - opened_at >= 0.9
    closed = feed.public_views[window + 1]
    assert closed["view"]["phase"] == "draw"
    assert closed["deadline_ms"] is None
    # A call window's time-outs are each told to their own seat only (they would tell
    # the others who could claim).
    assert [e["type"] for e in closed["events"]] == ["calls_passed"]
    for seat in range(4):
        own = feed.seat_views[seat][window + 1]["events"]
        outs = [e for e in own if e["type"] == "timed_out"]
        assert outs == ([{"type": "timed_out", "seat": seat, "away": False, "call": True}]
                        if seat in waiting else []), (seat, own)  # fmt: skip
    _, slot = await load_slot(workers.store("mahjong"), start.table_id)
    timed_out = slot.actions[len(scenario.actions) :]
    assert sorted(seat for seat, _ in timed_out) == waiting
    assert all(action == TIME_OUT for _, action in timed_out)
    await feed.close()


async def test_stop_ends_the_timer_loop_even_if_a_cancellation_is_swallowed(
    workers: Replicas,
) -> None:
    """Python 3.11's ``wait_for`` (used by nats-py) can swallow a cancel
    that lands just as its future completes; the worker must stop anyway (SIGTERM once
    left an engine running until the launcher killed it)."""
    replica = await workers.start("tongits", background=True, tick_seconds=0.01)
    worker = replica.worker
    swallowed: list[bool] = []
    worker.fire_due_timers = swallowing_one_cancel(  # type: ignore[method-assign]
        worker.fire_due_timers, 0, swallowed
    )
    await asyncio.sleep(0.05)
    started = time.monotonic()
    await asyncio.wait_for(worker.stop(), 5)
    # (not wait_for's TimeoutError: stop() itself suppresses the CancelledError)
    assert time.monotonic() - started < 2, "stop() hung until it was cancelled"
    assert swallowed == [True]


async def test_an_away_seat_is_played_at_once_and_back_gets_the_whole_clock(
    js_nc: NATS, workers: Replicas, unique: str, clock: FakeClock
) -> None:
    """A seat away is due at once; one that taps Back on its own turn gets a fresh
    full clock (the window is keyed by its length too, not only by the turn)."""
    nc = js_nc
    replica = await workers.start("tongits")
    worker = replica.worker
    start = start_message("tongits", unique, options={"turn_seconds": 30})
    await start_hand(nc, "tongits", start)
    store = workers.store("tongits")
    # Nobody moves: every seat times out twice in a row and is away.
    for _ in range(6):
        clock.advance(30_000)
        assert await worker.fire_due_timers() == 1
    version, slot = await load_slot(store, start.table_id)
    state = decode_state("tongits", slot)
    assert all(state.away)
    assert slot.deadline_ms == clock.now  # away: its turn is due at once
    seat = state.turn

    acted = await send_act(
        nc, "tongits", start.table_id, start.players[seat].user_id, version, {"type": "back"}
    )
    _, slot = await load_slot(store, start.table_id)
    assert slot.deadline_ms == clock.now + 30_000  # back: the whole clock again
    assert await worker.fire_due_timers() == 0  # nothing is due now
    clock.advance(30_000)
    assert await worker.fire_due_timers() == 1
    _, slot = await load_slot(store, start.table_id)
    assert decode_state("tongits", slot).turn != seat and acted.version > version
