"""Credits in: the welcome grant, credit requests, admin grants and adjustments, history."""

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
    CreditRequest,
    CreditRequestList,
    DecideCreditRequest,
    GetBalance,
    GetHistory,
    History,
    HoldRequest,
    HoldsPlaced,
    ListCreditRequests,
    PlaceHolds,
    RequestCredits,
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


async def test_credit_request_approve_reject_and_decide_once(wallet: Wallet, unique: str) -> None:
    user = f"{unique}-asker"
    asked = await wallet.call(
        subjects.WALLET_REQUEST_CREDITS,
        RequestCredits(user_id=user, amount=300, note="ran dry"),
        CreditRequest,
    )
    assert (asked.status, asked.amount, asked.note) == ("pending", 300, "ran dry")
    pending = await wallet.call(
        subjects.WALLET_LIST_CREDIT_REQUESTS, ListCreditRequests(user_id=user), CreditRequestList
    )
    assert [r.request_id for r in pending.requests] == [asked.request_id]

    # Two admins click at once: exactly one decision lands, the other is told so.
    decisions = await asyncio.gather(
        *(
            wallet.call(
                subjects.WALLET_DECIDE_CREDIT_REQUEST,
                DecideCreditRequest(
                    request_id=asked.request_id, admin_id=f"admin-{i}", approve=True, reason="ok"
                ),
                CreditRequest,
            )
            for i in range(3)
        ),
        return_exceptions=True,
    )
    approved = [d for d in decisions if isinstance(d, CreditRequest)]
    refused = [d for d in decisions if isinstance(d, RemoteError)]
    assert len(approved) == 1 and len(refused) == 2
    assert all(r.code == codes.ALREADY_DECIDED for r in refused)
    assert approved[0].status == "approved" and approved[0].decided_by is not None
    assert (await wallet.balance(user)).balance == 300
    history = await wallet.call(subjects.WALLET_HISTORY, GetHistory(user_id=user), History)
    assert [(e.kind, e.amount, e.memo) for e in history.entries] == [("credit_request", 300, "ok")]

    second = await wallet.call(
        subjects.WALLET_REQUEST_CREDITS, RequestCredits(user_id=user, amount=5000), CreditRequest
    )
    rejected = await wallet.call(
        subjects.WALLET_DECIDE_CREDIT_REQUEST,
        DecideCreditRequest(
            request_id=second.request_id, admin_id=ADMIN, approve=False, reason="too much"
        ),
        CreditRequest,
    )
    assert (rejected.status, rejected.decided_by, rejected.reason) == (
        "rejected",
        ADMIN,
        "too much",
    )
    assert (await wallet.balance(user)).balance == 300  # a rejection moves nothing
    err = await _error(
        wallet.call(
            subjects.WALLET_DECIDE_CREDIT_REQUEST,
            DecideCreditRequest(request_id=second.request_id, admin_id=ADMIN, approve=True),
            CreditRequest,
        )
    )
    assert err.code == codes.ALREADY_DECIDED and "rejected" in err.message
    assert (await wallet.balance(user)).balance == 300

    by_status = {
        status: await wallet.call(
            subjects.WALLET_LIST_CREDIT_REQUESTS,
            ListCreditRequests(status=status, user_id=user),
            CreditRequestList,
        )
        for status in ("pending", "approved", "rejected")
    }
    assert [len(by_status[s].requests) for s in ("pending", "approved", "rejected")] == [0, 1, 1]
    everything = await wallet.call(
        subjects.WALLET_LIST_CREDIT_REQUESTS,
        ListCreditRequests(status=None, user_id=user),
        CreditRequestList,
    )
    assert [r.request_id for r in everything.requests] == [asked.request_id, second.request_id]
    await wallet.assert_books_balance()


async def test_credit_request_limits_and_unknown_ids(wallet: Wallet, unique: str) -> None:
    user = f"{unique}-asker"
    for amount in (0, -5, MAX_CREDIT_REQUEST + 1):
        err = await _error(
            wallet.call(
                subjects.WALLET_REQUEST_CREDITS,
                RequestCredits(user_id=user, amount=amount),
                CreditRequest,
            )
        )
        assert err.code == codes.BAD_REQUEST and "amount must be between" in err.message
    err = await _error(
        wallet.call(
            subjects.WALLET_DECIDE_CREDIT_REQUEST,
            DecideCreditRequest(request_id="no-such-request", admin_id=ADMIN, approve=True),
            CreditRequest,
        )
    )
    assert err.code == codes.NOT_FOUND
    listed = await wallet.call(
        subjects.WALLET_LIST_CREDIT_REQUESTS, ListCreditRequests(user_id=user), CreditRequestList
    )
    assert listed.requests == ()
    err = await _error(
        wallet.call(
            subjects.WALLET_LIST_CREDIT_REQUESTS, ListCreditRequests(limit=0), CreditRequestList
        )
    )
    assert err.code == codes.BAD_REQUEST


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
