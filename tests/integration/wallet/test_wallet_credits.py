"""Credits in: the welcome grant, approved grants (auth's approval workflow), admin grants
and adjustments, history."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select

from kalaro.bus import RemoteError
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.wallet import (
    Adjust,
    Adjusted,
    Balance,
    GetBalance,
    GetHistory,
    GrantApproved,
    History,
    HoldRequest,
    HoldsPlaced,
    PlaceHolds,
    WelcomeGrant,
    WelcomeGranted,
)
from services.wallet.ledger import MAX_CREDIT_REQUEST
from services.wallet.schema import transactions
from tests.integration.wallet.wallet_helpers import ADMIN, WELCOME, Wallet


async def _error(coro: object) -> RemoteError:
    with pytest.raises(RemoteError) as err:
        await coro  # type: ignore[misc]
    return err.value


async def test_welcome_grant_exactly_once_even_when_requested_concurrently(
    wallet: Wallet, unique: str
) -> None:
    user = f"{unique}-new"

    answers = await asyncio.gather(
        *(
            wallet.call(subjects.WALLET_WELCOME_GRANT, WelcomeGrant(user_id=user), WelcomeGranted)
            for _ in range(12)
        )
    )

    assert sum(a.granted for a in answers) == 1
    assert {a.amount for a in answers} == {WELCOME}  # a repeat says what was granted
    assert (await wallet.balance(user)).balance == WELCOME
    history = await wallet.call(subjects.WALLET_HISTORY, GetHistory(user_id=user), History)
    assert [(e.kind, e.amount) for e in history.entries] == [("welcome", WELCOME)]
    again = await wallet.call(
        subjects.WALLET_WELCOME_GRANT, WelcomeGrant(user_id=user), WelcomeGranted
    )
    assert (again.granted, again.balance.balance) == (False, WELCOME)
    await wallet.assert_books_balance()


async def test_balance_of_a_stranger_is_zero_and_creates_nothing(
    wallet: Wallet, unique: str
) -> None:
    before = await wallet.audit()
    balance = await wallet.balance(f"{unique}-nobody")
    assert (balance.balance, balance.held, balance.available) == (0, 0, 0)
    assert (await wallet.audit()).accounts == before.accounts


async def test_an_approved_grant_moves_credits_exactly_once_however_often_asked(
    wallet: Wallet, unique: str
) -> None:
    """Auth's approval workflow asks again after a timeout or a wallet restart: the
    grant is keyed by the approval, so racing and repeated asks make one transaction."""
    user = f"{unique}-asker"
    ask = GrantApproved(
        approval_id=f"{unique}-ap", user_id=user, amount=300, admin_id=ADMIN, memo="ok"
    )
    answers = await asyncio.gather(
        *(wallet.call(subjects.WALLET_GRANT_APPROVED, ask, Adjusted) for _ in range(6))
    )
    assert len({a.tx_id for a in answers}) == 1
    assert sum(not a.repeated for a in answers) == 1
    assert (await wallet.balance(user)).balance == 300
    again = await wallet.call(subjects.WALLET_GRANT_APPROVED, ask, Adjusted)
    assert (again.repeated, again.tx_id, again.balance.balance) == (True, answers[0].tx_id, 300)
    history = await wallet.call(subjects.WALLET_HISTORY, GetHistory(user_id=user), History)
    assert [(e.kind, e.amount, e.memo) for e in history.entries] == [("credit_request", 300, "ok")]
    async with wallet.engine.connect() as conn:
        actor = await conn.scalar(
            select(transactions.c.actor).where(transactions.c.id == answers[0].tx_id)
        )
    assert actor == ADMIN  # who approved is the ledger's actor
    await wallet.assert_books_balance()


async def test_an_approved_grant_refuses_bad_input(wallet: Wallet, unique: str) -> None:
    user = f"{unique}-asker"
    for amount in (0, -5, MAX_CREDIT_REQUEST + 1):
        err = await _error(
            wallet.call(
                subjects.WALLET_GRANT_APPROVED,
                GrantApproved(approval_id="ap", user_id=user, amount=amount, admin_id=ADMIN),
                Adjusted,
            )
        )
        assert err.code == codes.BAD_REQUEST and "amount must be between" in err.message
    err = await _error(
        wallet.call(
            subjects.WALLET_GRANT_APPROVED,
            GrantApproved(approval_id="", user_id=user, amount=5, admin_id=ADMIN),
            Adjusted,
        )
    )
    assert err.code == codes.BAD_REQUEST
    assert (await wallet.balance(user)).balance == 0


async def test_admin_grant_and_adjust_record_who_when_why(wallet: Wallet, unique: str) -> None:
    user = f"{unique}-player"
    await wallet.open_account(user)
    granted = await wallet.call(
        subjects.WALLET_ADJUST,
        Adjust(admin_id=ADMIN, user_id=user, amount=500, reason="tournament prize"),
        Adjusted,
    )
    assert granted.balance.balance == 500
    taken = await wallet.call(
        subjects.WALLET_ADJUST,
        Adjust(
            admin_id="admin-2", user_id=user, amount=-120, reason="duplicate prize", kind="adjust"
        ),
        Adjusted,
    )
    assert taken.balance.balance == 380

    async with wallet.engine.connect() as conn:
        rows = (
            await conn.execute(
                select(transactions.c.id, transactions.c.kind, transactions.c.actor)
                .add_columns(transactions.c.memo, transactions.c.created_at)
                .where(transactions.c.id.in_([granted.tx_id, taken.tx_id]))
                .order_by(transactions.c.id)
            )
        ).all()
    assert [(r.kind, r.actor, r.memo) for r in rows] == [
        ("grant", ADMIN, "tournament prize"),
        ("adjust", "admin-2", "duplicate prize"),
    ]
    assert all(r.created_at.startswith("20") for r in rows)  # when
    history = await wallet.call(subjects.WALLET_HISTORY, GetHistory(user_id=user), History)
    assert [(e.kind, e.amount) for e in history.entries] == [("adjust", -120), ("grant", 500)]
    await wallet.assert_books_balance()


async def test_an_adjustment_with_a_request_key_applies_once(wallet: Wallet, unique: str) -> None:
    user = f"{unique}-player"
    await wallet.open_account(user)

    def grant(amount: int, key: str, admin: str = ADMIN, reason: str = "prize") -> Adjust:
        return Adjust(admin_id=admin, user_id=user, amount=amount, reason=reason, request_key=key)

    first = await wallet.call(subjects.WALLET_ADJUST, grant(500, "k1"), Adjusted)
    assert (first.balance.balance, first.repeated) == (500, False)
    again = await wallet.call(subjects.WALLET_ADJUST, grant(500, "k1"), Adjusted)
    assert (again.tx_id, again.balance.balance, again.repeated) == (first.tx_id, 500, True)

    # Retries racing each other: one of them applies, every one answers with it.
    racing = await asyncio.gather(
        *(wallet.call(subjects.WALLET_ADJUST, grant(300, "k2"), Adjusted) for _ in range(6))
    )
    assert len({r.tx_id for r in racing}) == 1
    assert sorted(r.repeated for r in racing) == [False] + [True] * 5
    balance = await wallet.call(subjects.WALLET_BALANCE, GetBalance(user_id=user), Balance)
    assert balance.balance == 800

    # The same key for something else is refused, and nothing moves.
    for different in (grant(501, "k1"), grant(500, "k1", reason="another prize")):
        err = await _error(wallet.call(subjects.WALLET_ADJUST, different, Adjusted))
        assert err.code == codes.CONFLICT and str(first.tx_id) in err.message
    # Keys are each admin's own: another admin's "k1" is a new adjustment.
    theirs = await wallet.call(subjects.WALLET_ADJUST, grant(500, "k1", "admin-2"), Adjusted)
    assert (theirs.balance.balance, theirs.repeated) == (1300, False)
    # Without a key every request is its own, as before.
    for _ in range(2):
        await wallet.call(
            subjects.WALLET_ADJUST,
            Adjust(admin_id=ADMIN, user_id=user, amount=1, reason="one"),
            Adjusted,
        )
    balance = await wallet.call(subjects.WALLET_BALANCE, GetBalance(user_id=user), Balance)
    assert balance.balance == 1302

    err = await _error(wallet.call(subjects.WALLET_ADJUST, grant(1, "k" * 65), Adjusted))
    assert err.code == codes.BAD_REQUEST and "request_key" in err.message
    await wallet.assert_books_balance()


async def test_adjust_never_takes_held_or_missing_credits(wallet: Wallet, unique: str) -> None:
    user, other = f"{unique}-player", f"{unique}-other"
    await wallet.fund(user, 500)
    await wallet.fund(other, 500)
    await wallet.call(
        subjects.WALLET_PLACE_HOLDS,
        PlaceHolds(
            table_id=f"{unique}-t",
            hand_id=f"{unique}-h",
            holds=(HoldRequest(user_id=user, amount=400), HoldRequest(user_id=other, amount=1)),
        ),
        HoldsPlaced,
    )
    err = await _error(
        wallet.call(
            subjects.WALLET_ADJUST,
            Adjust(admin_id=ADMIN, user_id=user, amount=-101, reason="oops", kind="adjust"),
            Adjusted,
        )
    )
    assert err.code == codes.INSUFFICIENT_FUNDS and "only 100 available" in err.message
    invalid = [
        (
            Adjust(
                admin_id=ADMIN,
                user_id=user,
                amount=-5,
                reason="grant must be positive",
                kind="grant",
            ),
            "must be positive",
        ),
        (
            Adjust(admin_id=ADMIN, user_id=user, amount=0, reason="nothing", kind="adjust"),
            "must not be zero",
        ),
        (Adjust(admin_id=ADMIN, user_id=user, amount=10, reason="  "), "reason is required"),
        (Adjust(admin_id="", user_id=user, amount=10, reason="who?"), "admin_id"),
        (Adjust(admin_id=ADMIN, user_id="@house", amount=10, reason="the house"), "reserved"),
    ]
    for message, expected in invalid:
        err = await _error(wallet.call(subjects.WALLET_ADJUST, message, Adjusted))
        assert err.code == codes.BAD_REQUEST and expected in err.message, err
    err = await _error(
        wallet.call(
            subjects.WALLET_ADJUST,
            Adjust(admin_id=ADMIN, user_id=f"{unique}-ghost", amount=-1, reason="x", kind="adjust"),
            Adjusted,
        )
    )
    assert err.code == codes.NOT_FOUND  # no such player: nothing to take back
    taken = await wallet.call(
        subjects.WALLET_ADJUST,
        Adjust(admin_id=ADMIN, user_id=user, amount=-100, reason="all that is free", kind="adjust"),
        Adjusted,
    )
    assert (taken.balance.balance, taken.balance.held, taken.balance.available) == (400, 400, 0)
    await wallet.assert_books_balance()


async def test_history_pages_newest_first_by_entry_id(wallet: Wallet, unique: str) -> None:
    user = f"{unique}-player"
    await wallet.open_account(user)
    for amount in range(1, 8):
        await wallet.call(
            subjects.WALLET_ADJUST,
            Adjust(admin_id=ADMIN, user_id=user, amount=amount, reason=f"#{amount}"),
            Adjusted,
        )

    pages: list[History] = []
    before: int | None = None
    while True:
        page = await wallet.call(
            subjects.WALLET_HISTORY, GetHistory(user_id=user, limit=3, before=before), History
        )
        pages.append(page)
        if page.next_before is None:
            break
        before = page.next_before

    assert [[e.amount for e in p.entries] for p in pages] == [[7, 6, 5], [4, 3, 2], [1]]
    ids = [e.entry_id for p in pages for e in p.entries]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 7
    assert [e.memo for e in pages[0].entries] == ["#7", "#6", "#5"]
    exact = await wallet.call(subjects.WALLET_HISTORY, GetHistory(user_id=user, limit=7), History)
    assert len(exact.entries) == 7 and exact.next_before is None
    for bad in (
        GetHistory(user_id=user, limit=0),
        GetHistory(user_id=user, limit=201),
        GetHistory(user_id=user, before=0),
    ):
        err = await _error(wallet.call(subjects.WALLET_HISTORY, bad, History))
        assert err.code == codes.BAD_REQUEST
    empty = await wallet.call(
        subjects.WALLET_HISTORY, GetHistory(user_id=f"{unique}-nobody"), History
    )
    assert empty == History(entries=(), next_before=None)


async def test_a_grant_to_nobody_is_not_found_and_changes_nothing(
    wallet: Wallet, unique: str
) -> None:
    before = await wallet.audit()
    for kind, amount in (("grant", 500), ("adjust", 5)):
        err = await _error(
            wallet.call(
                subjects.WALLET_ADJUST,
                Adjust(
                    admin_id=ADMIN,
                    user_id=f"{unique}-typo",
                    amount=amount,
                    reason="prize",
                    kind=kind,
                    request_key=kind,
                ),
                Adjusted,
            )
        )
        assert err.code == codes.NOT_FOUND and f"{unique}-typo" in err.message
    assert await wallet.audit() == before  # no account conjured, no credit moved
    balance = await wallet.call(
        subjects.WALLET_BALANCE, GetBalance(user_id=f"{unique}-typo"), Balance
    )
    assert (balance.balance, balance.held) == (0, 0)
