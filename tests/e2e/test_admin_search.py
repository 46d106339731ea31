"""Admins find users and read their ledgers through the gateway; nobody else can."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.test_accounts import admin_token, bearer, error_code, sign_up, wait_for_balance


def _search(http: httpx.Client, token: str, **params: Any) -> httpx.Response:
    return http.get("/api/admin/users", params=params, headers=bearer(token))


def test_non_admins_cannot_search_users_or_read_ledgers(http: httpx.Client, unique: str) -> None:
    player = sign_up(http, unique, "Nosy")
    token, user_id = player["access_token"], player["user"]["user_id"]
    for path, params in (
        ("/api/admin/users", {"q": "a"}),
        (f"/api/admin/users/{user_id}/ledger", {}),
        (f"/api/admin/users/{user_id}/balance", {}),
    ):
        r = http.get(path, params=params, headers=bearer(token))
        assert r.status_code == 403, (path, r.text)
        assert error_code(r) == "forbidden"
        assert "users" not in r.json() and "entries" not in r.json()
        assert http.get(path, params=params).status_code == 401, path


def test_admin_finds_a_user_and_reads_their_ledger(http: httpx.Client, unique: str) -> None:
    player = sign_up(http, unique, "Searchable")
    user_id = player["user"]["user_id"]
    wait_for_balance(http, player["access_token"], 1)
    admin = admin_token(http)

    found = _search(http, admin, q=f"SEARCHABLE-{unique}".upper())  # part of the email
    assert found.status_code == 200, found.text
    body = found.json()
    assert [u["user_id"] for u in body["users"]] == [user_id]
    assert body["users"][0]["display_name"] == "Searchable"
    assert body["next_offset"] is None
    assert "password" not in found.text and "password_hash" not in body["users"][0]

    ledger = http.get(f"/api/admin/users/{user_id}/ledger", headers=bearer(admin))
    assert ledger.status_code == 200, ledger.text
    assert [e["kind"] for e in ledger.json()["entries"]] == ["welcome"]
    balance = http.get(f"/api/admin/users/{user_id}/balance", headers=bearer(admin)).json()
    assert balance["user_id"] == user_id and balance["balance"] > 0

    # A grant by the picked user's id shows up in the ledger the admin reads.
    granted = http.post(
        "/api/admin/grants",
        json={"user_id": user_id, "amount": 7, "reason": "found by search"},
        headers=bearer(admin),
    )
    assert granted.status_code == 201, granted.text
    entries = http.get(f"/api/admin/users/{user_id}/ledger", headers=bearer(admin)).json()
    first = entries["entries"][0]
    assert (first["kind"], first["amount"]) == ("grant", 7)


def test_bad_searches_get_a_clear_400(http: httpx.Client, unique: str) -> None:
    admin = admin_token(http)
    for params in (
        {},
        {"q": ""},
        {"q": "   "},
        {"q": "x" * 101},
        {"q": "ok", "limit": 0},
        {"q": "ok", "limit": 51},
        {"q": "ok", "offset": -1},
        {"q": "ok", "offset": 10_001},
    ):
        r = _search(http, admin, **params)
        assert r.status_code == 400, (params, r.text)
        assert error_code(r) == "bad_request", (params, r.text)
