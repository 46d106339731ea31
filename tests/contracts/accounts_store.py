"""Accounts (:class:`services.auth.account_store.AccountStore`): found by id, email or
Google identity; email and Google identity unique; updated column by column; searched
by email or name, prefix matches first."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from services.auth.account_store import AccountStore, AccountTaken
from services.auth.records import Account

__all__ = [
    "test_accounts_are_found_by_id_email_and_google",
    "test_an_email_or_google_identity_has_one_account",
    "test_search_puts_prefix_matches_first_then_names",
    "test_updates_change_only_what_is_given",
]


def account(unique: str, n: int, *, name: str = "", google: str | None = None) -> Account:
    return Account(
        user_id=f"{unique}-{n}",
        email=f"p{n}.{unique}@example.com",
        display_name=name or f"Player {n}",
        password_hash="hash",
        google_sub=google,
        roles=("player",),
        created_at=1_000 + n,
        email_verified=False,
    )


async def test_accounts_are_found_by_id_email_and_google(
    accounts: AccountStore, unique: str
) -> None:
    one, two = account(unique, 1), account(unique, 2, google=f"g-{unique}")
    await accounts.insert(one)
    await accounts.insert(two)
    assert await accounts.by_id(one.user_id) == one
    assert await accounts.by_email(two.email) == two
    assert await accounts.by_google(f"g-{unique}") == two
    assert await accounts.by_id(f"{unique}-9") is None
    assert await accounts.by_email(f"nobody.{unique}@example.com") is None
    assert await accounts.by_google(f"g-{unique}-x") is None


async def test_an_email_or_google_identity_has_one_account(
    accounts: AccountStore, unique: str
) -> None:
    await accounts.insert(account(unique, 1, google=f"g-{unique}"))
    same_email = replace(account(unique, 2), email=f"p1.{unique}@example.com")
    with pytest.raises(AccountTaken):
        await accounts.insert(same_email)
    with pytest.raises(AccountTaken):
        await accounts.insert(account(unique, 3, google=f"g-{unique}"))
    assert await accounts.by_id(f"{unique}-2") is None
    assert await accounts.by_id(f"{unique}-3") is None


async def test_updates_change_only_what_is_given(accounts: AccountStore, unique: str) -> None:
    one = account(unique, 1)
    await accounts.insert(one)
    await accounts.update(one.user_id, roles=("admin", "player", "host"), email_verified=True)
    changed = await accounts.by_id(one.user_id)
    assert changed is not None
    assert changed.email_verified
    assert set(changed.roles) == {"admin", "player", "host"}
    assert (changed.display_name, changed.password_hash) == (one.display_name, "hash")
    await accounts.update(one.user_id, display_name="Renamed", password_hash="new")
    again = await accounts.by_id(one.user_id)
    assert again is not None
    assert (again.display_name, again.password_hash, again.roles) == (
        "Renamed",
        "new",
        changed.roles,
    )


async def test_search_puts_prefix_matches_first_then_names(
    accounts: AccountStore, unique: str
) -> None:
    tag = unique[-6:].lower()
    await accounts.insert(account(unique, 1, name=f"Zed {tag}"))
    await accounts.insert(account(unique, 2, name=f"{tag} Bea"))
    await accounts.insert(account(unique, 3, name=f"Al {tag}"))
    await accounts.insert(account(unique, 4, name="Someone Else"))
    found = await accounts.search(tag, 10)
    # Every email holds the tag too (p<n>.<unique>@...), so all four match; Bea's
    # name starts with it, the others' names do not.
    assert [a.user_id for a in found][:1] == [f"{unique}-2"]
    assert [a.display_name for a in found[1:]] == [f"Al {tag}", "Someone Else", f"Zed {tag}"]
    assert [a.user_id for a in await accounts.search(tag, 2, 1)] == [f"{unique}-3", f"{unique}-4"]
    assert await accounts.search(f"{tag}-nothing", 10) == []
