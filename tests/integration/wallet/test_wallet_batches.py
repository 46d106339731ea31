"""Hand outcomes applied a batch per transaction, still exactly once.

The results consumer hands every fetch to :func:`ledger.apply_outcomes` (one SQL
transaction) and acks after the commit. On SQLite and on PostgreSQL (when reachable).
Hand ids here are ``<unique>.<n>`` so that one consumer can filter ``results.hand.<unique>.*``
on the session's shared stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from nats.aio.client import Client as NATS
from nats.js.errors import NotFoundError
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import ServiceError
from kalaro.bus.codec import encode
from kalaro.bus.jetstream import ACK_WAIT_SECONDS
from kalaro.devstack import NatsServer
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.wallet import HoldRequest, Payment, SettleHand, Settlement, VoidHand
from kalaro.settings import Settings
from services.wallet import ledger
from services.wallet.schema import transactions
from services.wallet.service import ensure_streams, start_consumers, stop_consumers
from tests.integration.wallet.wallet_helpers import Wallet

REPO = Path(__file__).resolve().parents[3]


async def _eventually(check: Callable[[], Awaitable[bool]], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout}s")
        await asyncio.sleep(0.05)


async def _hands(wallet: Wallet, unique: str, count: int) -> tuple[list[str], list[str]]:
    """``count`` hands of the same three players (1,000 each), 100 held on each per hand."""
    players = [f"{unique}-p{i}" for i in range(3)]
    for player in players:
        await wallet.fund(player, 1000)
    hands = [f"{unique}.{n}" for n in range(count)]
    for hand in hands:
        await ledger.place_holds(
            wallet.engine,
            f"{unique}-t",
            hand,
            tuple(HoldRequest(user_id=p, amount=100) for p in players),
        )
    return hands, players


def _win(players: list[str], winner: int, stake: int = 10) -> tuple[Payment, ...]:
    """Everyone else pays ``stake`` to ``players[winner]``."""
    return tuple(
        Payment(user_id=p, amount=stake * (len(players) - 1) if i == winner else -stake)
        for i, p in enumerate(players)
    )


async def _settlements_of(engine: AsyncEngine, hand: str) -> int:
    async with engine.connect() as conn:
        count = await conn.scalar(
            select(func.count()).where(transactions.c.idempotency_key == f"outcome:{hand}")
        )
    return int(count or 0)


async def _balances(engine: AsyncEngine, players: list[str]) -> list[tuple[int, int]]:
    found = [await ledger.get_balance(engine, p) for p in players]
    return [(b.balance, b.held) for b in found]


async def test_a_batch_with_duplicate_outcomes_applies_each_hand_once(
    wallet: Wallet, unique: str
) -> None:
    (h0, h1, h2), players = await _hands(wallet, unique, 3)
    answers = await ledger.apply_outcomes(
        wallet.engine,
        [
            SettleHand(hand_id=h0, payments=_win(players, 0)),
            SettleHand(hand_id=h1, payments=_win(players, 1)),
            SettleHand(
                hand_id=h0, payments=_win(players, 0)
            ),  # the same outcome again (a redelivery)
            SettleHand(hand_id=h0, payments=_win(players, 2)),  # the same hand, other payments
            SettleHand(hand_id=h2, payments=_win(players, 2)),
        ],
    )
    first, second, repeat, other, third = answers
    assert isinstance(first, Settlement) and first.status == "settled"
    assert repeat == first  # the repeat gets the first one's answer
    assert isinstance(other, ServiceError) and other.code == codes.CONFLICT
    assert isinstance(second, Settlement) and isinstance(third, Settlement)
    assert len({first.tx_id, second.tx_id, third.tx_id}) == 3
    # Each player won one hand (+20) and lost two (-10 each); every hold released.
    assert await _balances(wallet.engine, players) == [(1000, 0)] * 3
    for hand in (h0, h1, h2):
        assert await _settlements_of(wallet.engine, hand) == 1
    # The whole batch once more, as after a crash before the ack: nothing changes.
    again = await ledger.apply_outcomes(
        wallet.engine,
        [
            SettleHand(hand_id=h0, payments=_win(players, 0)),
            SettleHand(hand_id=h1, payments=_win(players, 1)),
        ],
    )
    assert again == [first, second]
    assert await _balances(wallet.engine, players) == [(1000, 0)] * 3
    await wallet.assert_books_balance()


async def test_a_batch_with_invalid_outcomes_settles_the_others(
    wallet: Wallet, unique: str
) -> None:
    (h0, h1, h2, h3), players = await _hands(wallet, unique, 4)
    a, b, _c = players
    answers = await ledger.apply_outcomes(
        wallet.engine,
        [
            SettleHand(hand_id=h0, payments=_win(players, 0)),
            SettleHand(
                hand_id=h1, payments=(Payment(user_id=a, amount=-10), Payment(user_id=b, amount=5))
            ),  # does not sum to zero
            SettleHand(hand_id=f"{unique}.nohand", payments=_win(players, 0)),  # no holds
            SettleHand(
                hand_id=h1,
                payments=(
                    Payment(user_id=a, amount=-10),
                    Payment(user_id=f"{unique}-stranger", amount=10),
                ),
            ),  # not seated
            VoidHand(hand_id=h2),
            SettleHand(hand_id=h2, payments=_win(players, 1)),  # voided just before, in this batch
            SettleHand(hand_id=h3, payments=_win(players, 2)),
        ],
    )
    kinds = [a.code if isinstance(a, ServiceError) else a.status for a in answers]
    assert kinds == [
        "settled",
        codes.BAD_REQUEST,
        codes.BAD_REQUEST,
        codes.BAD_REQUEST,
        "voided",
        codes.CONFLICT,
        "settled",
    ]
    # h1 still holds 100 on everyone; h0 (a won) and h3 (c won) moved; h2 released.
    assert await _balances(wallet.engine, players) == [(1010, 100), (980, 100), (1010, 100)]
    assert await _settlements_of(wallet.engine, h1) == 0
    # The refused hand settles later, on its own, as it would have before.
    await ledger.settle(wallet.engine, h1, _win(players, 1))
    assert await _balances(wallet.engine, players) == [(1000, 0), (1000, 0), (1000, 0)]
    await wallet.assert_books_balance()


@pytest.fixture
async def consumer_names(nc: NATS, unique: str) -> AsyncIterator[dict[str, str]]:
    names = {
        "results_durable": f"wallet-results-{unique}",
        "results_subject": subjects.hand_result(f"{unique}.*"),
        "users_durable": f"wallet-users-{unique}",
    }
    yield names
    js = nc.jetstream()
    for stream, durable in (
        (subjects.RESULTS_STREAM, names["results_durable"]),
        (subjects.EVENTS_STREAM, names["users_durable"]),
    ):
        with contextlib.suppress(NotFoundError):
            await js.delete_consumer(stream, durable)


async def _all_acked(nc: NATS, durable: str) -> bool:
    info = await nc.jetstream().consumer_info(subjects.RESULTS_STREAM, durable)
    return info.num_pending == 0 and info.num_ack_pending == 0 and info.delivered.stream_seq > 0


async def test_the_consumer_applies_a_fetched_batch_once_and_acks_it(
    nc: NATS,
    wallet: Wallet,
    settings: Settings,
    unique: str,
    consumer_names: dict[str, str],
) -> None:
    hands, players = await _hands(wallet, unique, 4)
    js = nc.jetstream()
    await ensure_streams(js, settings)
    # Published before the consumer starts, so its first fetch takes them all at once.
    outcomes = [SettleHand(hand_id=h, payments=_win(players, i % 3)) for i, h in enumerate(hands)]
    outcomes.insert(2, outcomes[0])  # a duplicate past JetStream's dedupe (other id)
    outcomes.insert(
        3, SettleHand(hand_id=hands[1], payments=(Payment(user_id=players[0], amount=-10),))
    )  # bad_request
    for n, outcome in enumerate(outcomes):
        await js.publish(
            subjects.hand_result(outcome.hand_id),
            encode(outcome),
            headers={"Nats-Msg-Id": f"{unique}-{n}"},
        )
    consumers = await start_consumers(nc, wallet.engine, settings, **consumer_names)
    try:
        await _eventually(lambda: _all_acked(nc, consumer_names["results_durable"]))
    finally:
        await stop_consumers(consumers)
    # Four hands won by p0, p1, p2, p0 (the winner +20, the others -10), each once.
    assert await _balances(wallet.engine, players) == [(1020, 0), (990, 0), (990, 0)]
    for hand in hands:
        assert await _settlements_of(wallet.engine, hand) == 1
    await wallet.assert_books_balance()


# The wallet's consumer in a process of its own, killed with SIGKILL right after its
# batch committed and before it acked anything.
_DIES_AFTER_COMMIT = textwrap.dedent(
    """
    import asyncio, os, signal, sys

    from kalaro.bus.runner import connect
    from kalaro.settings import load_settings
    from kalaro.sql import create_engine
    from services.wallet import ledger, service

    nats_url, database_url, durable, subject, users = sys.argv[1:6]
    commit = ledger.apply_outcomes

    async def commit_then_die(engine, outcomes):
        answers = await commit(engine, outcomes)  # the transaction has committed
        print(f"committed {len(outcomes)}", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        return answers

    ledger.apply_outcomes = commit_then_die

    async def main():
        nc = await connect(nats_url, "wallet-doomed")
        engine = create_engine(database_url)
        settings = load_settings({}, database_url=database_url)
        await service.start_consumers(
            nc, engine, settings,
            results_durable=durable, results_subject=subject, users_durable=users,
        )
        await asyncio.sleep(60)

    asyncio.run(main())
    """
)


async def test_a_kill_between_commit_and_ack_does_not_pay_twice(
    nc: NATS,
    nats_server: NatsServer,
    wallet: Wallet,
    database_url: str,
    settings: Settings,
    unique: str,
    consumer_names: dict[str, str],
) -> None:
    hands, players = await _hands(wallet, unique, 3)
    js = nc.jetstream()
    await ensure_streams(js, settings)
    for i, hand in enumerate(hands):
        outcome = SettleHand(hand_id=hand, payments=_win(players, i))
        await js.publish(subjects.hand_result(hand), encode(outcome), headers={"Nats-Msg-Id": hand})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "libs"), str(REPO)])}
    args = [
        nats_server.url,
        database_url,
        consumer_names["results_durable"],
        consumer_names["results_subject"],
        consumer_names["users_durable"],
    ]
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _DIES_AFTER_COMMIT,
        *args,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(child.communicate(), 60)
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
    assert child.returncode == -signal.SIGKILL, err.decode()[-2000:]
    committed = sum(int(line.split()[1]) for line in out.decode().splitlines())
    assert committed >= 1
    # The batch is in the books, and JetStream has no ack for it.
    paid = await _balances(wallet.engine, players)
    info = await js.consumer_info(subjects.RESULTS_STREAM, consumer_names["results_durable"])
    assert info.num_ack_pending + info.num_pending == len(hands)

    # A healthy wallet on the same durable consumer gets the batch again after ack_wait.
    consumers = await start_consumers(nc, wallet.engine, settings, **consumer_names)
    try:
        await _eventually(
            lambda: _all_acked(nc, consumer_names["results_durable"]),
            timeout=ACK_WAIT_SECONDS + 20,
        )
    finally:
        await stop_consumers(consumers)
    final = await _balances(wallet.engine, players)
    assert final == [(1000, 0)] * 3  # each won once and lost twice, once each
    if committed == len(hands):
        assert paid == final  # the redelivery changed nothing
    for hand in hands:
        assert await _settlements_of(wallet.engine, hand) == 1
    await wallet.assert_books_balance()
