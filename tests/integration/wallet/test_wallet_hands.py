"""Holds, settlement and void through the bus: all or nothing, exactly once, capped."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select

from kalaro.bus import RemoteError
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.wallet import (
    GetHistory,
    History,
    HoldRequest,
    HoldsPlaced,
    Payment,
    PlaceHolds,
    SettleHand,
    Settlement,
    VoidHand,
)
from services.wallet.schema import holds
from tests.integration.wallet.wallet_helpers import Wallet


def _players(unique: str, n: int) -> list[str]:
    return [f"{unique}-p{i}" for i in range(n)]


async def _seat(wallet: Wallet, table: str, hand: str, players: list[str], hold: int) -> None:
    placed = await wallet.call(
        subjects.WALLET_PLACE_HOLDS,
        PlaceHolds(
            table_id=table,
            hand_id=hand,
            holds=tuple(HoldRequest(user_id=p, amount=hold) for p in players),
        ),
        HoldsPlaced,
    )
    assert placed.holds == tuple(HoldRequest(user_id=p, amount=hold) for p in players)


async def _error(coro: object) -> RemoteError:
    with pytest.raises(RemoteError) as err:
        await coro  # type: ignore[misc]
    return err.value


async def test_settlement_sent_five_times_concurrently_is_applied_once(
    wallet: Wallet, unique: str
) -> None:
    a, b, c, d = players = _players(unique, 4)
    for p in players:
        await wallet.fund(p, 1000)
    hand = f"{unique}-h1"
    await _seat(wallet, f"{unique}-t1", hand, players, 400)
    settle = SettleHand(
        hand_id=hand,
        payments=(
            Payment(user_id=a, amount=-100),
            Payment(user_id=b, amount=-200),
            Payment(user_id=c, amount=-300),
            Payment(user_id=d, amount=600),
        ),
    )

    answers = await asyncio.gather(
        *(wallet.call(subjects.WALLET_SETTLE, settle, Settlement) for _ in range(5))
    )

    assert len(set(answers)) == 1  # every caller gets the same stored answer
    assert answers[0].status == "settled"
    assert answers[0].payments == settle.payments
    balances = [await wallet.balance(p) for p in players]
    assert [(x.balance, x.held) for x in balances] == [(900, 0), (800, 0), (700, 0), (1600, 0)]
    winner = await wallet.call(subjects.WALLET_HISTORY, GetHistory(user_id=d), History)
    assert [e.kind for e in winner.entries] == ["settlement", "grant"]
    # A later repeat (a redelivery long after) still changes nothing.
    assert await wallet.call(subjects.WALLET_SETTLE, settle, Settlement) == answers[0]
    assert (await wallet.balance(d)).balance == 1600
    await wallet.assert_books_balance()


async def test_holds_from_many_tables_at_once_never_exceed_available(
    wallet: Wallet, unique: str
) -> None:
    shared, *others = _players(unique, 7)
    for p in [shared, *others]:
        await wallet.fund(p, 1000)

    # Six tables deal at once, each holding 300 on the shared player (and on a partner,
    # seated in both orders so PostgreSQL's row locks are taken across each other).
    async def deal(i: int) -> HoldsPlaced | RemoteError:
        seats = [shared, others[i]] if i % 2 else [others[i], shared]
        msg = PlaceHolds(
            table_id=f"{unique}-t{i}",
            hand_id=f"{unique}-h{i}",
            holds=tuple(HoldRequest(user_id=p, amount=300) for p in seats),
        )
        try:
            return await wallet.call(subjects.WALLET_PLACE_HOLDS, msg, HoldsPlaced)
        except RemoteError as exc:
            return exc

    results = await asyncio.gather(*(deal(i) for i in range(6)))

    placed = [r for r in results if isinstance(r, HoldsPlaced)]
    refused = [r for r in results if isinstance(r, RemoteError)]
    assert len(placed) == 3 and len(refused) == 3  # 3 × 300 ≤ 1000 < 4 × 300
    for err in refused:
        assert err.code == codes.INSUFFICIENT_FUNDS
        assert shared in err.message and "available 100" in err.message
    mine = await wallet.balance(shared)
    assert (mine.balance, mine.held, mine.available) == (1000, 900, 100)
    # All or nothing: partners of the refused tables hold nothing.
    partners = [await wallet.balance(p) for p in others[:6]]
    assert sorted(x.held for x in partners) == [0, 0, 0, 300, 300, 300]
    await wallet.assert_books_balance()


async def test_holds_are_all_or_nothing_and_name_everyone_short(
    wallet: Wallet, unique: str
) -> None:
    rich, poor, broke = _players(unique, 3)
    await wallet.fund(rich, 1000)
    await wallet.fund(poor, 50)
    hand = f"{unique}-h1"
    msg = PlaceHolds(
        table_id=f"{unique}-t1",
        hand_id=hand,
        holds=(
            HoldRequest(user_id=rich, amount=200),
            HoldRequest(user_id=poor, amount=200),
            HoldRequest(user_id=broke, amount=200),
        ),
    )

    err = await _error(wallet.call(subjects.WALLET_PLACE_HOLDS, msg, HoldsPlaced))

    assert err.code == codes.INSUFFICIENT_FUNDS
    assert f"{poor} (available 50, needs 200)" in err.message
    assert f"{broke} (available 0, needs 200)" in err.message
    assert rich not in err.message
    assert (await wallet.balance(rich)).held == 0
    async with wallet.engine.connect() as conn:
        assert (await conn.execute(select(holds).where(holds.c.hand_id == hand))).first() is None
    # Once everyone can cover it, the same hand can be dealt.
    await wallet.fund(poor, 150)
    await wallet.fund(broke, 200)
    placed = await wallet.call(subjects.WALLET_PLACE_HOLDS, msg, HoldsPlaced)
    assert placed.holds == msg.holds
    await wallet.assert_books_balance()


async def test_repeat_place_holds_returns_the_existing_holds(wallet: Wallet, unique: str) -> None:
    a, b = _players(unique, 2)
    await wallet.fund(a, 1000)
    await wallet.fund(b, 1000)
    msg = PlaceHolds(
        table_id=f"{unique}-t1",
        hand_id=f"{unique}-h1",
        holds=(HoldRequest(user_id=a, amount=100), HoldRequest(user_id=b, amount=100)),
    )

    answers = await asyncio.gather(
        *(wallet.call(subjects.WALLET_PLACE_HOLDS, msg, HoldsPlaced) for _ in range(4))
    )

    assert all(x == HoldsPlaced(hand_id=msg.hand_id, holds=msg.holds) for x in answers)
    assert (await wallet.balance(a)).held == 100  # held once, not four times
    assert (await wallet.balance(b)).held == 100


async def test_void_releases_holds_and_settle_and_void_exclude_each_other(
    wallet: Wallet, unique: str
) -> None:
    a, b, c = players = _players(unique, 3)
    for p in players:
        await wallet.fund(p, 500)
    voided, settled = f"{unique}-h1", f"{unique}-h2"
    await _seat(wallet, f"{unique}-t1", voided, players, 200)
    await _seat(wallet, f"{unique}-t2", settled, players, 100)
    assert (await wallet.balance(a)).available == 200

    answer = await wallet.call(subjects.WALLET_VOID, VoidHand(hand_id=voided), Settlement)

    assert (answer.status, answer.payments) == ("voided", ())
    assert [(await wallet.balance(p)).held for p in players] == [100, 100, 100]
    assert [(await wallet.balance(p)).balance for p in players] == [500, 500, 500]
    assert await wallet.call(subjects.WALLET_VOID, VoidHand(hand_id=voided), Settlement) == answer
    err = await _error(
        wallet.call(
            subjects.WALLET_SETTLE,
            SettleHand(
                hand_id=voided,
                payments=(Payment(user_id=a, amount=-10), Payment(user_id=b, amount=10)),
            ),
            Settlement,
        )
    )
    assert err.code == codes.CONFLICT and "voided" in err.message
    err = await _error(
        wallet.call(
            subjects.WALLET_PLACE_HOLDS,
            PlaceHolds(table_id="t", hand_id=voided, holds=(HoldRequest(user_id=a, amount=1),)),
            HoldsPlaced,
        )
    )
    assert err.code == codes.CONFLICT

    settle = SettleHand(
        hand_id=settled, payments=(Payment(user_id=a, amount=-50), Payment(user_id=c, amount=50))
    )
    await wallet.call(subjects.WALLET_SETTLE, settle, Settlement)
    err = await _error(wallet.call(subjects.WALLET_VOID, VoidHand(hand_id=settled), Settlement))
    assert err.code == codes.CONFLICT and "settled" in err.message
    assert [(await wallet.balance(p)).balance for p in players] == [450, 500, 550]
    assert [(await wallet.balance(p)).held for p in players] == [0, 0, 0]
    await wallet.assert_books_balance()


async def test_settle_racing_void_applies_exactly_one(wallet: Wallet, unique: str) -> None:
    a, b = players = _players(unique, 2)
    for p in players:
        await wallet.fund(p, 500)
    for i in range(4):
        hand = f"{unique}-h{i}"
        await _seat(wallet, f"{unique}-t", hand, players, 100)
        settle = SettleHand(
            hand_id=hand, payments=(Payment(user_id=a, amount=-100), Payment(user_id=b, amount=100))
        )
        results = await asyncio.gather(
            wallet.call(subjects.WALLET_SETTLE, settle, Settlement),
            wallet.call(subjects.WALLET_VOID, VoidHand(hand_id=hand), Settlement),
            return_exceptions=True,
        )
        outcomes = [r for r in results if isinstance(r, Settlement)]
        conflicts = [r for r in results if isinstance(r, RemoteError)]
        assert len(outcomes) == 1 and len(conflicts) == 1, results
        assert conflicts[0].code == codes.CONFLICT
    a_now, b_now = await wallet.balance(a), await wallet.balance(b)
    assert a_now.held == b_now.held == 0
    assert a_now.balance + b_now.balance == 1000
    await wallet.assert_books_balance()


async def test_void_before_holds_refuses_late_holds(wallet: Wallet, unique: str) -> None:
    a = _players(unique, 1)[0]
    await wallet.fund(a, 500)
    hand = f"{unique}-h1"

    await wallet.call(
        subjects.WALLET_VOID, VoidHand(hand_id=hand, table_id=f"{unique}-t1"), Settlement
    )

    err = await _error(
        wallet.call(
            subjects.WALLET_PLACE_HOLDS,
            PlaceHolds(table_id="t", hand_id=hand, holds=(HoldRequest(user_id=a, amount=100),)),
            HoldsPlaced,
        )
    )
    assert err.code == codes.CONFLICT
    assert (await wallet.balance(a)).held == 0  # nothing stranded on a dead hand


async def test_a_loser_pays_at_most_their_hold(wallet: Wallet, unique: str) -> None:
    a, b, c, d = players = _players(unique, 4)
    for p in players:
        await wallet.fund(p, 1000)
    hand = f"{unique}-h1"
    await _seat(wallet, f"{unique}-t1", hand, players, 100)
    # a is asked for 150 but holds 100: winners c and d share the 50 shortfall 2:1.
    asked = (
        Payment(user_id=a, amount=-150),
        Payment(user_id=b, amount=-30),
        Payment(user_id=c, amount=120),
        Payment(user_id=d, amount=60),
    )

    answer = await wallet.call(
        subjects.WALLET_SETTLE, SettleHand(hand_id=hand, payments=asked), Settlement
    )

    # Paid 130 of 180: c gets floor(86.67)+1 (largest remainder), d floor(43.33).
    assert answer.payments == (
        Payment(user_id=a, amount=-100),
        Payment(user_id=b, amount=-30),
        Payment(user_id=c, amount=87),
        Payment(user_id=d, amount=43),
    )
    balances = [(await wallet.balance(p)).balance for p in players]
    assert balances == [900, 970, 1087, 1043]
    assert [(await wallet.balance(p)).available for p in players] == balances
    async with wallet.engine.connect() as conn:
        rows = (
            await conn.execute(
                select(holds.c.status, holds.c.captured)
                .where(holds.c.hand_id == hand)
                .order_by(holds.c.id)
            )
        ).all()
    assert [tuple(r) for r in rows] == [
        ("captured", 100),
        ("captured", 30),
        ("released", 0),
        ("released", 0),
    ]
    await wallet.assert_books_balance()


async def test_invalid_settlements_are_refused_and_change_nothing(
    wallet: Wallet, unique: str
) -> None:
    a, b, stranger = _players(unique, 3)
    await wallet.fund(a, 500)
    await wallet.fund(b, 500)
    await wallet.fund(stranger, 500)
    hand = f"{unique}-h1"
    await _seat(wallet, f"{unique}-t1", hand, [a, b], 100)
    bad = {
        "sum to zero": (Payment(user_id=a, amount=-50), Payment(user_id=b, amount=40)),
        "appears twice": (
            Payment(user_id=a, amount=-50),
            Payment(user_id=a, amount=0),
            Payment(user_id=b, amount=50),
        ),
        f"no hold on hand {hand} for: {stranger}": (
            Payment(user_id=a, amount=-50),
            Payment(user_id=stranger, amount=50),
        ),
        "reserved for the house": (
            Payment(user_id=a, amount=-50),
            Payment(user_id="@house", amount=50),
        ),
    }
    for expected, payments in bad.items():
        err = await _error(
            wallet.call(
                subjects.WALLET_SETTLE, SettleHand(hand_id=hand, payments=payments), Settlement
            )
        )
        assert err.code == codes.BAD_REQUEST and expected in err.message, err
    err = await _error(
        wallet.call(
            subjects.WALLET_SETTLE, SettleHand(hand_id=f"{unique}-nohand", payments=()), Settlement
        )
    )
    assert err.code == codes.BAD_REQUEST and "no holds" in err.message
    assert [(await wallet.balance(p)).held for p in (a, b, stranger)] == [100, 100, 0]
    assert [(await wallet.balance(p)).balance for p in (a, b, stranger)] == [500, 500, 500]

    # The hand is still open and settles normally; a different result later conflicts.
    first = SettleHand(
        hand_id=hand, payments=(Payment(user_id=a, amount=-50), Payment(user_id=b, amount=50))
    )
    await wallet.call(subjects.WALLET_SETTLE, first, Settlement)
    other = SettleHand(
        hand_id=hand, payments=(Payment(user_id=a, amount=50), Payment(user_id=b, amount=-50))
    )
    err = await _error(wallet.call(subjects.WALLET_SETTLE, other, Settlement))
    assert err.code == codes.CONFLICT
    assert (await wallet.balance(b)).balance == 550
    await wallet.assert_books_balance()
