"""A randomised sequence of 1,000 wallet operations keeps the books.

Operations run through the bus in small concurrent batches (so they also race each
other) against a model of what must be true: the sum over all accounts is 0; every
balance equals its entries' sum; no available balance is ever negative; the players
together hold exactly what the house issued (settlements only move credits); each
player's ``held`` equals their holds on hands still open.

The seed is printed on failure; ``KALARO_WALLET_SEED=<seed>`` replays the same
sequence of operations (the interleaving of concurrent ones may differ).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

import pytest

from kalaro.bus import RemoteError
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.wallet import (
    Adjust,
    Adjusted,
    GetHistory,
    GrantApproved,
    History,
    HoldRequest,
    HoldsPlaced,
    Payment,
    PlaceHolds,
    SettleHand,
    Settlement,
    VoidHand,
    WelcomeGrant,
    WelcomeGranted,
)
from tests.integration.wallet.wallet_helpers import ADMIN, Wallet

OPERATIONS = 1000
CHECK_EVERY = 100
SEED_VARIABLE = "KALARO_WALLET_SEED"

T = TypeVar("T")


async def _unless(code: str, call: Awaitable[T]) -> T | None:
    """The reply, or None if the wallet refused with ``code``; any other error fails."""
    try:
        return await call
    except RemoteError as exc:
        if exc.code != code:
            raise
        return None


@dataclass
class _Model:
    issued: int = 0  # credits the house has put into players' accounts, net
    open_hands: dict[str, dict[str, int]] = field(default_factory=dict)  # hand -> holds
    settled: dict[str, tuple[SettleHand, Settlement]] = field(default_factory=dict)


class _Run:
    def __init__(self, wallet: Wallet, unique: str, rng: random.Random) -> None:
        self.wallet = wallet
        self.rng = rng
        self.players = [f"{unique}-p{i}" for i in range(6)]
        self.hands = (f"{unique}-h{i}" for i in itertools.count())
        self.model = _Model()
        self.operations: list[tuple[int, Callable[[], Awaitable[None]]]] = [
            (5, self.welcome),
            (8, self.grant),
            (5, self.take_back),
            (5, self.approved_grant),
            (25, self.deal),
            (18, self.settle),
            (6, self.void),
            (4, self.settle_racing_void),
            (5, self.repeat_settle),
            (12, self.read),
            (5, self.invalid),
        ]

    def pick(self) -> Callable[[], Awaitable[None]]:
        weights, ops = zip(*self.operations, strict=True)
        return self.rng.choices(ops, weights)[0]

    def _open_hand(self) -> tuple[str, dict[str, int]] | None:
        # Runs before the operation's first await, so operations started in the same
        # batch never take the same hand (except the deliberate race below).
        if not self.model.open_hands:
            return None
        hand = self.rng.choice(sorted(self.model.open_hands))
        return hand, self.model.open_hands.pop(hand)

    def _payments(self, seats: dict[str, int]) -> tuple[Payment, ...]:
        users = list(seats)
        self.rng.shuffle(users)
        cut = self.rng.randint(1, len(users) - 1)
        losers, winners = users[:cut], users[cut:]
        # Sometimes ask a loser for up to 1.5× their hold: the wallet must cap it.
        paid = {u: self.rng.randint(0, seats[u] * 3 // 2) for u in losers}
        total = sum(paid.values())
        cuts = sorted(self.rng.randint(0, total) for _ in range(len(winners) - 1))
        shares = [b - a for a, b in zip([0, *cuts], [*cuts, total], strict=True)]
        payments = [Payment(user_id=u, amount=-x) for u, x in paid.items()]
        payments += [Payment(user_id=u, amount=x) for u, x in zip(winners, shares, strict=True)]
        self.rng.shuffle(payments)
        return tuple(payments)

    # --- operations -----------------------------------------------------------------

    async def welcome(self) -> None:
        user = self.rng.choice(self.players)
        reply = await self.wallet.call(
            subjects.WALLET_WELCOME_GRANT, WelcomeGrant(user_id=user), WelcomeGranted
        )
        if reply.granted:
            self.model.issued += reply.amount

    async def grant(self) -> None:
        user, amount = self.rng.choice(self.players), self.rng.randint(1, 400)
        await self.wallet.call(
            subjects.WALLET_ADJUST,
            Adjust(admin_id=ADMIN, user_id=user, amount=amount, reason="random grant"),
            Adjusted,
        )
        self.model.issued += amount

    async def take_back(self) -> None:
        user, amount = self.rng.choice(self.players), self.rng.randint(1, 300)
        reply = await _unless(
            codes.INSUFFICIENT_FUNDS,
            self.wallet.call(
                subjects.WALLET_ADJUST,
                Adjust(
                    admin_id=ADMIN,
                    user_id=user,
                    amount=-amount,
                    reason="random correction",
                    kind="adjust",
                ),
                Adjusted,
            ),
        )
        if reply is not None:
            assert reply.balance.available >= 0
            self.model.issued -= amount

    async def approved_grant(self) -> None:
        """Auth applies an approved credit request, sometimes twice (a retry): once."""
        user, amount = self.rng.choice(self.players), self.rng.randint(1, 300)
        ask = GrantApproved(
            approval_id=f"ap-{next(self.hands)}", user_id=user, amount=amount, admin_id=ADMIN
        )
        first = await self.wallet.call(subjects.WALLET_GRANT_APPROVED, ask, Adjusted)
        if self.rng.random() < 0.3:
            again = await self.wallet.call(subjects.WALLET_GRANT_APPROVED, ask, Adjusted)
            assert (again.repeated, again.tx_id) == (True, first.tx_id)
        self.model.issued += amount

    async def deal(self) -> None:
        seats = self.rng.sample(self.players, self.rng.randint(2, 4))
        hold, hand = self.rng.randint(1, 250), next(self.hands)
        placed = await _unless(
            codes.INSUFFICIENT_FUNDS,
            self.wallet.call(
                subjects.WALLET_PLACE_HOLDS,
                PlaceHolds(
                    table_id="t",
                    hand_id=hand,
                    holds=tuple(HoldRequest(user_id=u, amount=hold) for u in seats),
                ),
                HoldsPlaced,
            ),
        )
        if placed is not None:
            self.model.open_hands[hand] = dict.fromkeys(seats, hold)

    async def settle(self) -> None:
        picked = self._open_hand()
        if picked is None:
            return await self.read()
        hand, seats = picked
        message = SettleHand(hand_id=hand, payments=self._payments(seats))
        copies = self.rng.randint(1, 3)  # an engine that retries, all at once
        answers = await asyncio.gather(
            *(self.wallet.call(subjects.WALLET_SETTLE, message, Settlement) for _ in range(copies))
        )
        assert len(set(answers)) == 1, answers
        applied = answers[0].payments
        assert sum(p.amount for p in applied) == 0
        assert all(-p.amount <= seats[p.user_id] for p in applied)
        self.model.settled[hand] = (message, answers[0])
        return None

    async def void(self) -> None:
        picked = self._open_hand()
        if picked is None:
            return await self.read()
        answer = await self.wallet.call(
            subjects.WALLET_VOID, VoidHand(hand_id=picked[0]), Settlement
        )
        assert answer.status == "voided"
        return None

    async def settle_racing_void(self) -> None:
        picked = self._open_hand()
        if picked is None:
            return await self.read()
        hand, seats = picked
        message = SettleHand(hand_id=hand, payments=self._payments(seats))
        results = await asyncio.gather(
            self.wallet.call(subjects.WALLET_SETTLE, message, Settlement),
            self.wallet.call(subjects.WALLET_VOID, VoidHand(hand_id=hand), Settlement),
            return_exceptions=True,
        )
        done = [r for r in results if isinstance(r, Settlement)]
        refused = [r for r in results if isinstance(r, RemoteError)]
        assert len(done) == 1 and len(refused) == 1, results
        assert refused[0].code == codes.CONFLICT
        if done[0].status == "settled":
            self.model.settled[hand] = (message, done[0])
        return None

    async def repeat_settle(self) -> None:
        if not self.model.settled:
            return await self.read()
        message, answer = self.model.settled[self.rng.choice(sorted(self.model.settled))]
        assert await self.wallet.call(subjects.WALLET_SETTLE, message, Settlement) == answer
        return None

    async def read(self) -> None:
        user = self.rng.choice(self.players)
        balance = await self.wallet.balance(user)
        assert balance.available == balance.balance - balance.held >= 0
        history = await self.wallet.call(
            subjects.WALLET_HISTORY, GetHistory(user_id=user, limit=5), History
        )
        assert len(history.entries) <= 5

    async def invalid(self) -> None:
        user = self.rng.choice(self.players)
        unbalanced = SettleHand(
            hand_id=next(self.hands), payments=(Payment(user_id=user, amount=-5),)
        )
        with pytest.raises(RemoteError) as refused:
            await self.wallet.call(subjects.WALLET_SETTLE, unbalanced, Settlement)
        assert refused.value.code == codes.BAD_REQUEST

    # --- invariants -----------------------------------------------------------------

    async def check(self) -> None:
        await self.wallet.assert_books_balance()
        balances = [await self.wallet.balance(u) for u in self.players]
        assert sum(b.balance for b in balances) == self.model.issued
        for b in balances:
            assert b.available >= 0, b
            expected_held = sum(h.get(b.user_id, 0) for h in self.model.open_hands.values())
            assert b.held == expected_held, b

    async def run(self, operations: int) -> None:
        await self.wallet.open_account(*self.players)  # as if each had signed up
        done = 0
        while done < operations:
            batch = [self.pick() for _ in range(min(self.rng.randint(1, 8), operations - done))]
            await asyncio.gather(*(op() for op in batch))
            if (done + len(batch)) // CHECK_EVERY > done // CHECK_EVERY:
                await self.check()
            done += len(batch)
        await self.check()
        # Nothing left dangling: void what is still open, then everything is available.
        for hand in sorted(self.model.open_hands):
            await self.wallet.call(subjects.WALLET_VOID, VoidHand(hand_id=hand), Settlement)
        self.model.open_hands.clear()
        await self.check()
        assert len(self.model.settled) > 20  # the run really exercised settlement


async def test_random_operations_keep_the_books(wallet: Wallet, unique: str) -> None:
    seed = int(os.environ.get(SEED_VARIABLE) or random.randrange(2**32))
    try:
        await _Run(wallet, unique, random.Random(seed)).run(OPERATIONS)
    except BaseException:
        print(f"wallet random sequence failed: replay with {SEED_VARIABLE}={seed}")
        raise
