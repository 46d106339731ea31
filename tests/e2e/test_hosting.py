"""Hosting through the gateway: the invite code again (host only), removal and allow
back (host only), each refusal a clear 4xx that changes nothing."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.test_accounts import PASSWORD, admin_token, bearer, error_code, sign_up


def _host(http: httpx.Client, unique: str) -> dict[str, Any]:
    person = sign_up(http, unique, "Hoster")
    asked = http.post(
        "/api/approvals",
        json={"kind": "host_access", "note": "e2e"},
        headers=bearer(person["access_token"]),
    )
    assert asked.status_code == 201, asked.text
    admin = bearer(admin_token(http))
    decided = http.post(
        f"/api/admin/approvals/{asked.json()['approval_id']}/decision",
        json={"approve": True},
        headers=admin,
    )
    assert decided.status_code == 200, decided.text
    again = http.post(
        "/api/auth/sign-in", json={"email": person["user"]["email"], "password": PASSWORD}
    )
    body: dict[str, Any] = again.json()
    assert "host" in body["user"]["roles"]
    return body


def test_invite_code_and_allow_back_are_the_hosts(http: httpx.Client, unique: str) -> None:
    host = bearer(_host(http, unique)["access_token"])
    guest = sign_up(http, unique, "Guestee")
    guest_h, guest_id = bearer(guest["access_token"]), guest["user"]["user_id"]
    created = http.post(
        "/api/tables", json={"game": "tongits", "bet": 0, "private": True}, headers=host
    )
    assert created.status_code == 201, created.text
    table_id, code = created.json()["table"]["table_id"], created.json()["invite_code"]
    path = f"/api/tables/{table_id}"

    for _ in range(2):  # as often as the host likes
        again = http.get(f"{path}/invite", headers=host)
        assert again.json() == {"table_id": table_id, "invite_code": code}
    # Not to a stranger (not even that it exists), nor to an invited player.
    assert error_code(http.get(f"{path}/invite", headers=guest_h)) == "not_found"
    sat = http.post(f"{path}/sit", json={"invite_code": code}, headers=guest_h)
    assert sat.status_code == 200, sat.text
    refused = http.get(f"{path}/invite", headers=guest_h)
    assert (refused.status_code, error_code(refused)) == (403, "forbidden")
    assert code not in refused.text

    # The host sits at their own private table without the code.
    assert http.post(f"{path}/sit", json={}, headers=host).status_code == 200
    seat = next(
        i
        for i, s in enumerate(http.get(path, headers=host).json()["seats"])
        if s and s["user_id"] == guest_id
    )
    removed = http.post(f"{path}/remove", json={"seat": seat}, headers=host)
    assert [r["user_id"] for r in removed.json()["removed"]] == [guest_id]
    back = http.post(f"{path}/sit", json={"invite_code": code}, headers=guest_h)
    assert (back.status_code, error_code(back)) == (403, "removed_from_table")

    body = {"user_id": guest_id}
    # Removed, the guest no longer belongs to the private table: it is not there for them.
    nope = http.post(f"{path}/allow-back", json=body, headers=guest_h)
    assert (nope.status_code, error_code(nope)) == (404, "not_found"), nope.text
    bad = http.post(f"{path}/allow-back", json={"user_id": guest_id, "extra": 1}, headers=host)
    assert bad.status_code == 400, bad.text
    assert [r["user_id"] for r in http.get(path, headers=host).json()["removed"]] == [guest_id]
    allowed = http.post(f"{path}/allow-back", json=body, headers=host)
    assert allowed.status_code == 200 and allowed.json()["removed"] == []
    # Allowing back someone who is not barred is a state conflict, not a missing table.
    again = http.post(f"{path}/allow-back", json=body, headers=host)
    assert (again.status_code, error_code(again)) == (409, "not_removed"), again.text
    assert http.post(f"{path}/sit", json={"invite_code": code}, headers=guest_h).status_code == 200
