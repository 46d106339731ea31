"""Admins find accounts by email or display name (``auth.users.search``)."""

from __future__ import annotations

import pytest

from kalaro.bus.codec import encode
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.auth import SearchUsers, UserSearchResult
from services.auth.accounts import ensure_admin
from tests.integration.auth.harness import AuthHarness


async def _admin(auth: AuthHarness) -> str:
    account = await ensure_admin(auth.deps.engine, auth.deps.passwords, auth.email("admin"))
    return account.user_id


async def _search(auth: AuthHarness, admin_id: str, query: str, **page: int) -> UserSearchResult:
    message = SearchUsers(admin_id=admin_id, query=query, **page)
    return await auth.call(subjects.AUTH_SEARCH_USERS, message, UserSearchResult)


async def test_search_by_name_or_email_any_case_prefix_first(auth: AuthHarness) -> None:
    admin_id = await _admin(auth)
    nena = await auth.sign_up(email=auth.email("nena"), name="Aling Nena")
    mark = await auth.sign_up(email=auth.email("mark"), name="Marky Nenadez")
    other = await auth.sign_up(email=auth.email("zed"), name="Zed")

    by_name = await _search(auth, admin_id, "  NENA ")
    # Both contain "nena"; the email "nena…" starts with it, so Aling Nena comes first.
    assert [u.user_id for u in by_name.users] == [nena.user.user_id, mark.user.user_id]
    assert by_name.next_offset is None

    by_email = await _search(auth, admin_id, other.user.email.upper())
    assert [u.user_id for u in by_email.users] == [other.user.user_id]
    assert by_email.users[0].display_name == "Zed"

    assert (await _search(auth, admin_id, "nobody-like-this")).users == ()


async def test_search_pages_and_like_wildcards_are_literal(auth: AuthHarness) -> None:
    admin_id = await _admin(auth)
    for n in range(3):
        await auth.sign_up(email=auth.email(f"page{n}"), name=f"Pager {n}")
    lucky = await auth.sign_up(email=auth.email("lucky"), name="100% Lucky_One")

    first = await _search(auth, admin_id, "pager", limit=2)
    assert len(first.users) == 2 and first.next_offset == 2
    rest = await _search(auth, admin_id, "pager", limit=2, offset=2)
    assert len(rest.users) == 1 and rest.next_offset is None
    assert {u.user_id for u in first.users}.isdisjoint(u.user_id for u in rest.users)

    # "%" and "_" match only themselves, not any text.
    assert [u.user_id for u in (await _search(auth, admin_id, "%")).users] == [lucky.user.user_id]
    assert [u.user_id for u in (await _search(auth, admin_id, "y_o")).users] == [lucky.user.user_id]


async def test_search_replies_carry_no_credentials(auth: AuthHarness) -> None:
    admin_id = await _admin(auth)
    await auth.sign_up(email=auth.email("secret"), name="Secret Keeper")
    stored = await auth.column("auth_users", "password_hash", admin_id)
    assert stored
    message = encode(SearchUsers(admin_id=admin_id, query="e"))
    raw = (await auth.nc.request(subjects.AUTH_SEARCH_USERS, message, timeout=5)).data
    assert b"Secret Keeper" in raw
    assert b"password" not in raw and stored.encode() not in raw and b"google_sub" not in raw


@pytest.mark.parametrize(
    ("query", "page"),
    [
        ("", {}),
        ("   ", {}),
        ("x" * 101, {}),
        ("bad\x00", {}),
        ("ok", {"limit": 0}),
        ("ok", {"limit": 51}),
        ("ok", {"offset": -1}),
        ("ok", {"offset": 10_001}),
    ],
)
async def test_bad_searches_are_bad_requests(
    auth: AuthHarness, query: str, page: dict[str, int]
) -> None:
    admin_id = await _admin(auth)
    err = await auth.refused(
        subjects.AUTH_SEARCH_USERS,
        SearchUsers(admin_id=admin_id, query=query, **page),
        UserSearchResult,
    )
    assert err.code == codes.BAD_REQUEST, err


async def test_only_admins_search(auth: AuthHarness) -> None:
    player = await auth.sign_up(name="Curious")
    err = await auth.refused(
        subjects.AUTH_SEARCH_USERS,
        SearchUsers(admin_id=player.user.user_id, query="a"),
        UserSearchResult,
    )
    assert err.code == codes.FORBIDDEN
    err = await auth.refused(
        subjects.AUTH_SEARCH_USERS, SearchUsers(admin_id="0" * 32, query="a"), UserSearchResult
    )
    assert err.code == codes.FORBIDDEN
