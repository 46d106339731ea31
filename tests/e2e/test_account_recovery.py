"""Accounts through the gateway: the welcome grant waits for a verified email, an
unverified account sits at no bet table, and a password reset by email gives an
address back to whoever reads its mail (a squatter's password and sessions end)."""

from __future__ import annotations

import re
import time
from typing import Any

import httpx

from tests.e2e.stack import Stack
from tests.e2e.test_accounts import (
    PASSWORD,
    admin_token,
    bearer,
    error_code,
    sign_up,
    wait_for_balance,
)

NEW_PASSWORD = "a brand new passphrase 7"


def welcome_entries(http: httpx.Client, token: str) -> list[tuple[str, int]]:
    history = http.get("/api/wallet/history", headers=bearer(token)).json()
    return [(e["kind"], e["amount"]) for e in history["entries"]]


def bet_table(http: httpx.Client, bet: int) -> str:
    r = http.post(
        "/api/tables", json={"game": "tongits", "bet": bet}, headers=bearer(admin_token(http))
    )
    assert r.status_code == 201, r.text
    table_id: str = r.json()["table"]["table_id"]
    return table_id


def sit(http: httpx.Client, token: str, table_id: str) -> httpx.Response:
    return http.post(f"/api/tables/{table_id}/sit", json={}, headers=bearer(token))


def signed_in(http: httpx.Client, email: str, password: str = PASSWORD) -> dict[str, Any]:
    r = http.post("/api/auth/sign-in", json={"email": email, "password": password})
    assert r.status_code == 200, r.text
    pair: dict[str, Any] = r.json()
    return pair


def test_the_welcome_grant_waits_for_the_verified_email_and_so_do_bet_tables(
    stack: Stack, http: httpx.Client, unique: str
) -> None:
    email = f"gina-{unique}@example.com"
    pair = sign_up(http, unique, "Gina", verified=False)
    token = pair["access_token"]
    free, betting = bet_table(http, 0), bet_table(http, 10)
    refused = sit(http, token, betting)
    assert refused.status_code == 403 and error_code(refused) == "email_unverified", refused.text
    assert "confirm your email" in refused.json()["error"]["message"]
    assert sit(http, token, free).status_code == 200  # free tables are open to it
    # A verified account signed up at the same time has its grant: this one has none.
    wait_for_balance(http, sign_up(http, unique, "Control")["access_token"], 1000)
    assert welcome_entries(http, token) == []

    stack.verify_email(email)
    assert wait_for_balance(http, token, 1000)["balance"] == 1000
    # The token from before says "unverified" until it is refreshed.
    assert error_code(sit(http, token, betting)) == "email_unverified"
    fresh = http.post("/api/auth/refresh", json={"refresh_token": pair["refresh_token"]}).json()
    assert http.post(f"/api/tables/{free}/leave", json={}, headers=bearer(token)).is_success
    assert sit(http, fresh["access_token"], betting).status_code == 200
    # Following the link again pays nothing more.
    again = http.post("/api/auth/verify", json={"token": stack.mailed_token(email)})
    assert again.status_code == 410
    time.sleep(0.5)  # a second grant would arrive through JetStream like the first
    assert welcome_entries(http, fresh["access_token"]) == [("welcome", 1000)]

    # Google vouches for the email: a Google sign-up is paid at once.
    google = http.post(
        "/api/auth/google",
        json={"id_token": stack.google.id_token(f"g-{unique}", f"gabby-{unique}@gmail.com")},
    )
    assert google.status_code == 200, google.text
    assert wait_for_balance(http, google.json()["access_token"], 1000)["balance"] == 1000


def reset_token(stack: Stack, email: str) -> str:
    [letter] = [m for m in stack.mails_to(email) if m["Subject"] == "Reset your KaLaro password"]
    match = re.search(r"/#/reset\?token=([A-Za-z0-9_-]+)", letter.get_content())
    assert match
    return match.group(1)


def test_a_password_reset_takes_the_address_back_from_a_squatter(
    stack: Stack, http: httpx.Client, unique: str
) -> None:
    email = f"owner-{unique}@example.com"
    r = http.post(
        "/api/auth/sign-up", json={"email": email, "password": PASSWORD, "display_name": "Sq"}
    )
    assert r.status_code == 202
    squatter = signed_in(http, email)

    # Asking reveals nothing: a known and an unknown address get the same answer.
    unknown = http.post("/api/auth/password-reset", json={"email": f"nobody-{unique}@x.org"})
    known = http.post("/api/auth/password-reset", json={"email": email.upper()})
    assert (unknown.status_code, unknown.json()) == (known.status_code, known.json())
    assert (known.status_code, known.json()) == (202, {"status": "check_email"})
    assert stack.mails_to(f"nobody-{unique}@x.org") == []
    token = reset_token(stack, email)
    assert token not in stack.log("auth")  # a reset link is a password: never logged
    # Opening the link (a scanner's prefetch) changes nothing.
    assert http.get(f"/#/reset?token={token}").status_code == 200
    assert signed_in(http, email)["user"]["user_id"] == squatter["user"]["user_id"]

    weak = http.post("/api/auth/password-reset/confirm", json={"token": token, "password": "x"})
    assert weak.status_code == 400 and error_code(weak) == "weak_password"
    done = http.post(
        "/api/auth/password-reset/confirm", json={"token": token, "password": NEW_PASSWORD}
    )
    assert done.status_code == 200, done.text  # the weak try did not spend the link
    owner = done.json()
    assert owner["user"]["user_id"] == squatter["user"]["user_id"]
    assert owner["user"]["email_verified"] is True  # the mail proved the address

    # The squatter is out: password, refresh token and access token.
    old = http.post("/api/auth/sign-in", json={"email": email, "password": PASSWORD})
    assert old.status_code == 401 and error_code(old) == "invalid_credentials"
    refresh = http.post("/api/auth/refresh", json={"refresh_token": squatter["refresh_token"]})
    assert refresh.status_code == 401
    assert http.get("/api/me/", headers=bearer(squatter["access_token"])).status_code == 401
    # The owner is in, with the welcome grant the verification paid.
    assert http.get("/api/me/", headers=bearer(owner["access_token"])).status_code == 200
    assert signed_in(http, email, NEW_PASSWORD)["user"]["email_verified"] is True
    assert wait_for_balance(http, owner["access_token"], 1000)["balance"] == 1000
    # The link worked once.
    again = http.post(
        "/api/auth/password-reset/confirm", json={"token": token, "password": NEW_PASSWORD}
    )
    assert again.status_code == 410 and error_code(again) == "link_used"


def test_a_google_only_account_can_have_a_password_by_reset(
    stack: Stack, http: httpx.Client, unique: str
) -> None:
    email = f"gloria-{unique}@gmail.com"
    google = http.post(
        "/api/auth/google", json={"id_token": stack.google.id_token(f"gl-{unique}", email)}
    )
    assert google.status_code == 200, google.text
    assert http.post("/api/auth/password-reset", json={"email": email}).status_code == 202
    done = http.post(
        "/api/auth/password-reset/confirm",
        json={"token": reset_token(stack, email), "password": NEW_PASSWORD},
    )
    assert done.status_code == 200, done.text
    assert signed_in(http, email, NEW_PASSWORD)["user"]["google_linked"] is True
