"""One outcome per hand, whatever the interleaving of the last move and a host's cancel.

The race, forced: the lobby and the wallet are paused (SIGSTOP, as a GC pause or a
busy core would), the hand is played to its end (moves go through the engine alone),
the host cancels, and both resume at once. The engine finished the hand first, so it
must be settled, and its winners paid, even though the cancel reaches the lobby before
the lobby hears that the hand ended. A lobby that also voided at the wallet on cancel
lost this race 4 times out of 4: the winners were never paid and the audit stayed
clean, because no credit was created or destroyed.
"""

from __future__ import annotations

import asyncio
import json
import random
import signal
import time

from kalaro.launcher import SERVICES
from tests.e2e.stack import Stack
from tests.e2e.tables import admin, open_table, play_hand, signed_up, wait_balance

ROUNDS = 4
BET = 10
LOBBY = next(spec for spec in SERVICES if spec.name == "lobby")


async def test_a_cancel_racing_the_last_move_never_voids_a_finished_hand(
    stack: Stack, unique: str
) -> None:
    host = await admin(stack)
    players = [await signed_up(stack, f"Race{i}", unique) for i in range(3)]
    expected = [1000] * 3
    for round_no in range(ROUNDS):
        live = await open_table(stack, host, players, "tongits", BET)
        await live.deal()
        lobby, wallet = stack.processes["lobby"], stack.processes["wallet"]
        lobby.send_signal(signal.SIGSTOP)
        wallet.send_signal(signal.SIGSTOP)
        try:
            result = await play_hand(live, "tongits", rng=random.Random(round_no))
            cancel = asyncio.create_task(host.cancel_table(live.table_id))
            await asyncio.sleep(0.3)  # the cancel waits in the paused lobby's socket
            # The lobby wakes first: whatever it asks of the wallet now is read by the
            # wallet before the settlement it has yet to fetch from the stream.
            lobby.send_signal(signal.SIGCONT)
            await asyncio.sleep(0.5)
        finally:
            lobby.send_signal(signal.SIGCONT)
            wallet.send_signal(signal.SIGCONT)
        assert (await cancel).status == "cancelled"
        await live.close()
        ending = json.loads(bytes(result.result))["ending"]
        expected = [have + paid for have, paid in zip(expected, result.payments, strict=True)]
        for seat, player in enumerate(players):
            balance = await wait_balance(player, expected[seat])
            assert balance == expected[seat], (
                f"round {round_no} ({ending}): seat {seat} has {balance}, "
                f"the hand paid {result.payments}"
            )
            assert (await player.balance()).held == 0
    report = await host.audit()
    assert report.total == 0 and report.mismatched_accounts == ()
    ours = {(await p.me()).user_id for p in players}
    assert [h for h in report.open_holds if h.user_id in ours] == []


async def test_a_deal_the_engine_answers_slowly_still_deals(stack: Stack, unique: str) -> None:
    """The gateway waits as long as the lobby does: a deal whose engine is slow (paused
    here, as a NATS election pauses it) is not answered "no service answered" while the
    lobby is still dealing it."""
    host = await admin(stack)
    players = [await signed_up(stack, f"Slow{i}", unique) for i in range(3)]
    live = await open_table(stack, host, players, "tongits", BET)
    await live.ready_all()
    engine = stack.processes["engine-tongits"]
    engine.send_signal(signal.SIGSTOP)
    try:
        deal = asyncio.create_task(host.deal(live.table_id))
        await asyncio.sleep(7)  # longer than the gateway's usual 5 s for a request
    finally:
        engine.send_signal(signal.SIGCONT)
    assert (await deal).status == "playing"
    await live.wait_for_hand()
    await live.close()


async def test_a_lobby_killed_mid_deal_leaves_no_table_stuck_and_no_credits_held(
    stack: Stack, unique: str
) -> None:
    """kill -9 of the lobby while it deals a bet hand (the wallet paused, so the holds
    are in flight): nobody taps anything, and the table is back to waiting, every hold
    released, the books whole; then the table deals again. (A table stuck "dealing"
    until its host tapped Deal was found by the chaos run: nobody taps Deal there.)"""
    host = await admin(stack)
    players = [await signed_up(stack, f"Orphan{i}", unique) for i in range(3)]
    live = await open_table(stack, host, players, "tongits", BET)
    await live.ready_all()
    wallet = stack.processes["wallet"]
    wallet.send_signal(signal.SIGSTOP)
    try:
        deal = asyncio.create_task(host.deal(live.table_id))
        await asyncio.sleep(1.5)  # the lobby has claimed the table and waits on the wallet
        stack.stop("lobby", signal.SIGKILL)
    finally:
        wallet.send_signal(signal.SIGCONT)  # the holds it was asked for go through now
    try:
        await deal
    except Exception as exc:  # the lobby died holding the request: any error will do
        print(f"[orphan] the deal answered {exc!r}")
    stack.start(LOBBY)
    info = await host.get_table(live.table_id)
    assert info.status == "dealing", info.status  # what the dead replica left
    # Rescued by the lobby's sweep once the deal is older than both peers' timeouts.
    deadline = time.monotonic() + 90
    while info.status != "waiting":
        assert time.monotonic() < deadline, f"still {info.status} after 90 s"
        await asyncio.sleep(1)
        info = await host.get_table(live.table_id)
    assert info.hand_id is None and not any(s.ready for s in info.seats if s)
    for player in players:
        balance = await player.balance()
        assert (balance.balance, balance.held) == (1000, 0), balance
    report = await host.audit()
    assert report.total == 0 and report.mismatched_accounts == ()
    ours = {(await p.me()).user_id for p in players}
    assert [h for h in report.open_holds if h.user_id in ours] == []
    await live.deal()  # and the table plays on
    await live.close()
