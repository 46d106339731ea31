"""Timers, replicas and failures on the whole stack.

These tests stop, kill and restart service processes of the session's stack; each
puts the stack back as it found it.
"""

from __future__ import annotations

import asyncio
import json
import random
import signal
from typing import Any

from kalaro.client.wire import open_wire
from kalaro.launcher import ServiceSpec
from tests.e2e.stack import Stack
from tests.e2e.tables import admin, open_table, play_hand, signed_up, wait_balance

WALLET = ServiceSpec("wallet", "services.wallet")
TONGITS_ENGINE = ServiceSpec("engine-tongits", "services.engine", ("--game", "tongits"))
TONGITS_REPLICA = ServiceSpec("engine-tongits-replica", "services.engine", ("--game", "tongits"))


async def test_fight_or_fold_times_out_as_fold(stack: Stack, unique: str) -> None:
    host = await admin(stack)
    players = [await signed_up(stack, f"F{i}", unique) for i in range(3)]
    live = await open_table(stack, host, players, "tongits", 0, {"fight_seconds": 1})
    await live.deal()
    called: list[int] = []

    def choose(seat: int, view: dict[str, Any], legal: list[dict[str, Any]]) -> Any:
        draw_call = next((a for a in legal if a["type"] == "call_draw"), None)
        if draw_call is not None and not called:
            called.append(seat)
            return draw_call
        return None

    def waiting_for_answers(view: dict[str, Any]) -> bool:
        return view.get("draw_call") is not None and view["result"] is None

    # A Draw call needs an opened player at the start of a turn, and a time-out needs an
    # opponent who could answer (a burned one folds at once): play until both happen.
    timed_out_hand = None
    for attempt in range(8):
        called.clear()
        result = await play_hand(
            live, "tongits", policy="smart", rng=random.Random(attempt + 17),
            choose=choose, idle_when=waiting_for_answers,
        )  # fmt: skip
        outcome = json.loads(bytes(result.result))
        if called and any(outcome["draw_call"]["timed_out"]):
            timed_out_hand = outcome
            break
        await live.deal()
    assert timed_out_hand is not None, "no Draw call with an opponent able to answer"
    caller = called[0]
    assert timed_out_hand["ending"].startswith("draw")
    assert timed_out_hand["draw_call"]["caller"] == caller
    for seat in (s for s in range(3) if s != caller):
        # nobody answered: each opponent either timed out (folded) or was burned
        assert timed_out_hand["draw_call"]["timed_out"][seat] or timed_out_hand["burned"][seat]
    assert timed_out_hand["winners"] == [caller]  # nobody fought: the caller wins
    await live.close()


async def test_mahjong_call_window_times_out(stack: Stack, unique: str) -> None:
    host = await admin(stack)
    players = [await signed_up(stack, f"W{i}", unique) for i in range(4)]
    live = await open_table(stack, host, players, "mahjong", 0, {"call_seconds": 1})
    await live.deal()
    windows: list[int] = []

    def first_window(view: dict[str, Any]) -> bool:
        if view.get("call") is not None and not windows:
            windows.append(view["turn"])
        # idle through the first call window only; the timer must close it
        return view.get("call") is not None and len(windows) == 1 and not passed

    passed: list[bool] = []
    seen_open = False

    def watch(view: dict[str, Any]) -> bool:
        nonlocal seen_open
        idle = first_window(view)
        if idle:
            seen_open = True
        elif seen_open and not passed:
            passed.append(True)
        return idle

    await play_hand(live, "mahjong", policy="smart", rng=random.Random(4), idle_when=watch)
    assert windows, "no discard could be claimed in this hand"
    assert passed, "the first call window never closed by itself"
    await live.close()


async def test_two_engine_replicas_and_a_kill_mid_hand(stack: Stack, unique: str) -> None:
    stack.start(TONGITS_REPLICA)
    try:
        host = await admin(stack)
        players = [await signed_up(stack, f"K{i}", unique) for i in range(3)]
        live = await open_table(stack, host, players, "tongits", 5)
        await live.deal()
        acted: list[int] = []

        def count(seat: int, view: dict[str, Any], legal: list[dict[str, Any]]) -> Any:
            acted.append(seat)
            if len(acted) == 4:
                stack.stop(TONGITS_ENGINE.name, signal.SIGKILL)  # the original dies
            return None

        result = await play_hand(live, "tongits", rng=random.Random(8), choose=count)
        assert TONGITS_ENGINE.name not in stack.processes
        versions = [
            json.loads(r)["version"] for r in live.sockets[0].raw_frames if '"type":"view"' in r
        ]
        assert versions == sorted(set(versions))  # every change seen once, in order
        record = await players[0].hand_record(live.table_id, result.hand_id)
        assert len(record.actions) == len(acted)  # no action lost or applied twice
        for seat, player in enumerate(players):
            expected = 1000 + result.payments[seat]
            assert await wait_balance(player, expected) == expected
        await live.close()
    finally:
        if TONGITS_ENGINE.name not in stack.processes:
            stack.start(TONGITS_ENGINE)
        stack.stop(TONGITS_REPLICA.name)


async def test_settlement_waits_for_a_wallet_that_was_down(stack: Stack, unique: str) -> None:
    host = await admin(stack)
    players = [await signed_up(stack, f"D{i}", unique) for i in range(3)]
    live = await open_table(stack, host, players, "tongits", 10)
    balances = [1000] * 3
    # A hand that pays nobody (a three-way tie at stock-out, about one in 5,000) would
    # prove nothing: then the next hand is played the same way.
    for attempt in range(3):
        await live.deal()
        stack.stop(WALLET.name)
        rng = random.Random(6 + attempt)
        try:
            result = await play_hand(live, "tongits", policy="smart", rng=rng)
        finally:
            stack.start(WALLET)
        balances = [b + paid for b, paid in zip(balances, result.payments, strict=True)]
        for player, expected in zip(players, balances, strict=True):
            assert await wait_balance(player, expected, timeout=30) == expected
            assert (await player.balance()).held == 0
        if any(result.payments):
            break
    else:
        raise AssertionError("three hands in a row paid nobody")
    assert (await host.audit()).total == 0
    await live.close()


async def test_a_dropped_socket_reconnects_to_its_seat_and_plays_on(
    stack: Stack, unique: str
) -> None:
    host = await admin(stack)
    players = [await signed_up(stack, f"R{i}", unique) for i in range(3)]
    live = await open_table(stack, host, players, "tongits", 0)
    await live.deal()
    newest = live.newest()
    assert newest is not None
    version, view, _ = newest
    away = live.sockets[1]
    await away.drop()
    # The others move on while seat 1 is away (if the first move is theirs).
    mover = view["to_act"][0]
    if mover != 1:
        own = live.sockets[mover].view(live.table_id)
        assert own is not None and own.view["legal"]
        ack = await live.sockets[mover].act(live.table_id, own.view["legal"][0], version)
        assert ack.version is not None
        version = ack.version
    # The SDK reconnects by itself and re-subscribes: the seat's current view arrives.
    await away.wait_for(
        lambda: (
            away.connects == 2
            and (v := away.view(live.table_id)) is not None
            and v.version >= version
        ),
        15,
    )
    mine = away.view(live.table_id)
    assert mine is not None and mine.seat == 1 and len(mine.view["hand"]) > 0
    result = await play_hand(live, "tongits")  # seat 1 plays its turns on the new socket
    assert json.loads(bytes(result.result))["ending"]
    assert away.state(live.table_id).results[-1].hand_id == result.hand_id
    await live.close()


async def test_a_quiet_socket_is_closed_unless_it_keeps_a_heartbeat(
    stack: Stack, unique: str
) -> None:
    """The gateway closes a socket silent for three heartbeats (9 s in this stack); the
    SDK pings by itself, so a seat waiting for its turn is never dropped for that."""
    client = await signed_up(stack, "Quiet", unique)
    sdk = client.table_socket(reconnect=False)
    await sdk.connect()
    lost = asyncio.Event()
    url = f"{stack.base_url.replace('http://', 'ws://')}/ws"
    bare = await open_wire(
        url, lambda text: None, lambda exc: lost.set(), token=client.access_token
    )
    assert bare.is_open
    await asyncio.wait_for(lost.wait(), 20)  # the bare socket sent nothing: closed
    await sdk.ping()  # the SDK's socket, just as quiet, is still open
    assert sdk.connects == 1
    await sdk.close()
