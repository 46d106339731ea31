"""The players' books (:class:`services.wallet.books.Books`): a welcome grant once per
player, admins' adjustments (once per request key, never below what is available, only
to players with an account) and each player's entries, newest first, paged."""

from __future__ import annotations

import pytest

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.wallet import Adjust, GetBalance, GetHistory, WelcomeGrant
from services.wallet import handlers as h
from services.wallet.books import Books
from services.wallet.handlers import WalletDeps

__all__ = [
    "test_a_keyed_adjustment_happens_once_and_a_reused_key_is_refused",
    "test_adjustments_need_an_account_and_never_take_more_than_available",
    "test_history_pages_newest_first",
    "test_the_handlers_grant_adjust_and_list_through_the_books",
    "test_the_welcome_grant_is_paid_once",
]


async def test_the_welcome_grant_is_paid_once(ledger: Books, unique: str) -> None:
    me = f"{unique}-a"
    assert (await ledger.get_balance(me)).balance == 0  # no account yet: zeros
    first = await ledger.welcome_grant(me, 500)
    assert (first.granted, first.amount, first.balance.balance) == (True, 500, 500)
    again = await ledger.welcome_grant(me, 900)  # a redelivery, or a changed setting
    assert (again.granted, again.amount, again.balance.available) == (False, 500, 500)
    assert await ledger.get_balance(me) == first.balance
    with pytest.raises(ServiceError) as bad:
        await ledger.welcome_grant("@house", 5)  # reserved for the house
    assert bad.value.code == codes.BAD_REQUEST


async def test_adjustments_need_an_account_and_never_take_more_than_available(
    ledger: Books, unique: str
) -> None:
    me, admin = f"{unique}-a", f"{unique}-admin"
    with pytest.raises(ServiceError) as missing:
        await ledger.adjust(admin, me, 100, "a typo'd id")
    assert missing.value.code == codes.NOT_FOUND
    await ledger.welcome_grant(me, 100)
    granted = await ledger.adjust(admin, me, 50, "tournament prize")
    assert granted.balance.balance == 150
    with pytest.raises(ServiceError) as short:
        await ledger.adjust(admin, me, -151, "too much back", "adjust")
    assert short.value.code == codes.INSUFFICIENT_FUNDS
    back = await ledger.adjust(admin, me, -150, "all of it back", "adjust")
    assert (back.balance.balance, back.balance.available) == (0, 0)
    assert await ledger.get_balance(me) == back.balance
    assert granted.tx_id != back.tx_id


async def test_a_keyed_adjustment_happens_once_and_a_reused_key_is_refused(
    ledger: Books, unique: str
) -> None:
    me, admin = f"{unique}-a", f"{unique}-admin"
    await ledger.welcome_grant(me, 10)
    first = await ledger.adjust(admin, me, 40, "prize", request_key="k1")
    again = await ledger.adjust(admin, me, 40, "prize", request_key="k1")
    assert (again.tx_id, again.repeated, again.balance.balance) == (first.tx_id, True, 50)
    with pytest.raises(ServiceError) as reused:
        await ledger.adjust(admin, me, 41, "prize", request_key="k1")
    assert reused.value.code == codes.CONFLICT
    # Keys are per admin: another admin's k1 is another adjustment.
    other = await ledger.adjust(f"{unique}-admin2", me, 40, "prize", request_key="k1")
    assert (other.repeated, other.balance.balance) == (False, 90)


async def test_history_pages_newest_first(ledger: Books, unique: str) -> None:
    me, admin = f"{unique}-a", f"{unique}-admin"
    await ledger.welcome_grant(me, 100)
    for n in range(1, 4):
        await ledger.adjust(admin, me, n, f"grant {n}")
    first = await ledger.history(me, limit=3)
    assert [(e.kind, e.amount, e.memo) for e in first.entries] == [
        ("grant", 3, "grant 3"),
        ("grant", 2, "grant 2"),
        ("grant", 1, "grant 1"),
    ]
    assert first.next_before == first.entries[-1].entry_id
    rest = await ledger.history(me, limit=3, before=first.next_before)
    assert [(e.kind, e.amount) for e in rest.entries] == [("welcome", 100)]
    assert rest.next_before is None
    assert (await ledger.history(f"{unique}-nobody")).entries == ()


async def test_the_handlers_grant_adjust_and_list_through_the_books(
    wallet: WalletDeps, unique: str
) -> None:
    """The request handlers over whichever books the deps hold: the welcome grant is the
    settings' amount, once; an admin's grant shows in the balance and the entries."""
    me, admin = f"{unique}-a", f"{unique}-admin"
    amount = wallet.settings.welcome_grant
    first = await h.welcome(WelcomeGrant(user_id=me), wallet)
    again = await h.welcome(WelcomeGrant(user_id=me), wallet)
    assert (first.granted, first.amount, again.granted) == (True, amount, False)
    adjusted = await h.adjust(
        Adjust(admin_id=admin, user_id=me, amount=25, reason="prize", request_key="r1"), wallet
    )
    assert adjusted.balance.balance == amount + 25
    assert await h.balance(GetBalance(user_id=me), wallet) == adjusted.balance
    entries = (await h.history(GetHistory(user_id=me, limit=10), wallet)).entries
    assert [(e.kind, e.amount) for e in entries] == [("grant", 25), ("welcome", amount)]
    with pytest.raises(ServiceError) as bad:
        await h.history(GetHistory(user_id=me, limit=0), wallet)
    assert bad.value.code == codes.BAD_REQUEST
