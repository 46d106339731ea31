"""Hand outcomes and new users arrive over JetStream; none is lost while the wallet is down.

Each test gives its consumers durable names of its own (and filters RESULTS to its own
hand), because the streams live on the session's shared nats-server.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from nats.aio.client import Client as NATS
from nats.js.errors import NotFoundError
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import RemoteError, Service
from kalaro.bus.codec import encode
from kalaro.bus.jetstream import DurableConsumer, publish_once
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.auth import UserRegistered
from kalaro.proto.wallet import (
    HoldRequest,
    HoldsPlaced,
    Payment,
    PlaceHolds,
    SettleHand,
    WelcomeGrant,
    WelcomeGranted,
)
from kalaro.settings import Settings
from kalaro.sql import create_engine
from services.wallet import ledger
from services.wallet.bootstrap import build_service
from services.wallet.handlers import wallet_deps
from services.wallet.service import start_consumers, stop_consumers
from tests.integration.wallet.wallet_helpers import WELCOME, Wallet


async def _eventually(check: Callable[[], Awaitable[bool]], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout}s")
        await asyncio.sleep(0.05)


class _Running:
    """One wallet 'process': its own engine, its endpoints and its consumers."""

    def __init__(self, nc: NATS, url: str, settings: Settings, unique: str, hand: str) -> None:
        self.nc, self.url, self.settings, self.unique, self.hand = nc, url, settings, unique, hand
        self.engine: AsyncEngine | None = None
        self.service: Service | None = None
        self.consumers: list[DurableConsumer] = []

    async def start(self) -> None:
        self.engine = create_engine(self.url)
        self.service = build_service(wallet_deps(self.engine, self.settings))
        await self.service.start(self.nc)
        self.consumers = await start_consumers(
            self.nc,
            self.engine,
            self.settings,
            results_durable=f"wallet-results-{self.unique}",
            results_subject=subjects.hand_result(self.hand),
            users_durable=f"wallet-users-{self.unique}",
        )

    async def stop(self) -> None:
        if self.service is None or self.engine is None:
            return
        await self.service.stop()
        await stop_consumers(self.consumers)
        await self.engine.dispose()
        self.service = self.engine = None


@pytest.fixture
async def start_wallet(
    nc: NATS, database_url: str, settings: Settings, unique: str
) -> AsyncIterator[Callable[[str], Awaitable[_Running]]]:
    """Start a wallet whose results consumer reads one hand; always stopped afterwards.

    Teardown matters here: consumers left running by a failed test would keep fetching
    on a connection being drained.
    """
    started: list[_Running] = []

    async def start(hand: str) -> _Running:
        running = _Running(nc, database_url, settings, unique, hand)
        started.append(running)
        await running.start()
        return running

    yield start
    for running in started:
        await running.stop()
    js = nc.jetstream()
    for stream, durable in (
        (subjects.RESULTS_STREAM, f"wallet-results-{unique}"),
        (subjects.EVENTS_STREAM, f"wallet-users-{unique}"),
    ):
        with contextlib.suppress(NotFoundError):
            await js.delete_consumer(stream, durable)


async def test_settlement_published_while_wallet_is_down_is_applied_once_on_restart(
    nc: NATS,
    engine: AsyncEngine,
    start_wallet: Callable[[str], Awaitable[_Running]],
    unique: str,
) -> None:
    a, b, c, d = players = [f"{unique}-p{i}" for i in range(4)]
    hand = f"{unique}-h1"
    js = nc.jetstream()
    wallet = await start_wallet(hand)
    client = Wallet(nc, engine)
    for p in players:
        await client.fund(p, 1000)
    await client.call(
        subjects.WALLET_PLACE_HOLDS,
        PlaceHolds(
            table_id=f"{unique}-t1",
            hand_id=hand,
            holds=tuple(HoldRequest(user_id=p, amount=200) for p in players),
        ),
        HoldsPlaced,
    )
    await wallet.stop()
    # An in-flight pull request of the stopped consumer expires after its 1 s fetch
    # timeout; a message published before then would wait out the 30 s ack_wait.
    await asyncio.sleep(1.2)
    with pytest.raises(RemoteError) as down:
        await client.balance(a)
    assert down.value.code == codes.UNAVAILABLE

    settle = SettleHand(
        hand_id=hand,
        payments=(
            Payment(user_id=a, amount=-50),
            Payment(user_id=b, amount=-50),
            Payment(user_id=c, amount=-50),
            Payment(user_id=d, amount=150),
        ),
    )
    await publish_once(js, subjects.hand_result(hand), settle, msg_id=hand)
    await publish_once(js, subjects.hand_result(hand), settle, msg_id=hand)  # engine retried
    info = await js.consumer_info(subjects.RESULTS_STREAM, f"wallet-results-{unique}")
    assert info.num_pending == 1  # JetStream dropped the duplicate inside its window
    assert (await ledger.get_balance(engine, d)).held == 200  # nothing applied while down

    await wallet.start()  # the same process restarted: same durable consumer

    async def settled() -> bool:
        return (await ledger.get_balance(engine, d)).balance == 1150

    await _eventually(settled)
    # A copy from past the dedupe window (another message id) changes nothing either.
    await js.publish(
        subjects.hand_result(hand), encode(settle), headers={"Nats-Msg-Id": f"{hand}-late"}
    )

    async def all_acked() -> bool:
        info = await js.consumer_info(subjects.RESULTS_STREAM, f"wallet-results-{unique}")
        return info.num_pending == 0 and info.num_ack_pending == 0 and info.delivered.stream_seq > 0

    await _eventually(all_acked)
    balances = [await ledger.get_balance(engine, p) for p in players]
    assert [(x.balance, x.held) for x in balances] == [(950, 0), (950, 0), (950, 0), (1150, 0)]
    history = await ledger.history(engine, d)
    assert [e.kind for e in history.entries] == ["settlement", "grant"]
    await client.assert_books_balance()


async def test_user_registered_event_grants_welcome_once(
    nc: NATS,
    engine: AsyncEngine,
    start_wallet: Callable[[str], Awaitable[_Running]],
    unique: str,
) -> None:
    user = f"{unique}-newcomer"
    js = nc.jetstream()
    await start_wallet(f"{unique}-unused")
    client = Wallet(nc, engine)
    registered = UserRegistered(user_id=user, email=f"{unique}@example.com", display_name="New")

    # The event (delivered twice, past the dedupe window) races a direct request.
    await js.publish(subjects.USER_REGISTERED, encode(registered), headers={"Nats-Msg-Id": user})
    direct = await client.call(
        subjects.WALLET_WELCOME_GRANT, WelcomeGrant(user_id=user), WelcomeGranted
    )
    await js.publish(
        subjects.USER_REGISTERED, encode(registered), headers={"Nats-Msg-Id": f"{user}-again"}
    )

    async def processed() -> bool:
        info = await js.consumer_info(subjects.EVENTS_STREAM, f"wallet-users-{unique}")
        return info.num_pending == 0 and info.num_ack_pending == 0

    await _eventually(processed)
    assert direct.amount == WELCOME
    assert (await ledger.get_balance(engine, user)).balance == WELCOME
    history = await ledger.history(engine, user)
    assert [e.kind for e in history.entries] == ["welcome"]
    await client.assert_books_balance()


async def test_unreadable_or_refused_outcomes_are_acked_and_do_not_block_the_stream(
    nc: NATS,
    engine: AsyncEngine,
    start_wallet: Callable[[str], Awaitable[_Running]],
    unique: str,
) -> None:
    a, b = f"{unique}-a", f"{unique}-b"
    hand = f"{unique}-h1"
    js = nc.jetstream()
    await start_wallet(hand)
    client = Wallet(nc, engine)
    for p in (a, b):
        await client.fund(p, 100)
    await client.call(
        subjects.WALLET_PLACE_HOLDS,
        PlaceHolds(
            table_id=f"{unique}-t1",
            hand_id=hand,
            holds=(HoldRequest(user_id=a, amount=40), HoldRequest(user_id=b, amount=40)),
        ),
        HoldsPlaced,
    )
    subject = subjects.hand_result(hand)

    await js.publish(subject, b"{not json")  # nobody can ever read this
    await js.publish(subject, b'{"type": "settle", "hand_id": "x", "payments": [{"x": 1}]}')
    unbalanced = SettleHand(
        hand_id=hand, payments=(Payment(user_id=a, amount=-40), Payment(user_id=b, amount=30))
    )  # refused: bad_request
    await js.publish(subject, encode(unbalanced))
    await js.publish(
        subject,
        encode(
            SettleHand(
                hand_id=hand,
                payments=(Payment(user_id=a, amount=-40), Payment(user_id=b, amount=40)),
            )
        ),
    )

    async def settled() -> bool:
        return (await ledger.get_balance(engine, b)).balance == 140

    await _eventually(settled)

    async def all_acked() -> bool:
        info = await js.consumer_info(subjects.RESULTS_STREAM, f"wallet-results-{unique}")
        return info.num_pending == 0 and info.num_ack_pending == 0

    await _eventually(all_acked)
    assert (await ledger.get_balance(engine, a)).balance == 60
    await client.assert_books_balance()
