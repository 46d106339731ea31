"""Accounts and credits through the gateway, as a browser or the SDK would use them."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import httpx
import pytest

from tests.e2e.stack import ADMIN_EMAIL, ADMIN_PASSWORD, GOOGLE_CLIENT_ID, Stack, running

PASSWORD = "correct horse battery staple"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def sign_up(
    http: httpx.Client, unique: str, name: str = "Juan", *, verified: bool = True
) -> dict[str, Any]:
    """Sign up and sign in; ``verified``: follow the mailed link first (as its owner
    would), so the account has its welcome grant coming and may sit at bet tables."""
    email = f"{name.lower()}-{unique}@example.com"
    r = http.post(
        "/api/auth/sign-up",
        json={"email": email, "password": PASSWORD, "display_name": name},
    )
    assert (r.status_code, r.json()) == (202, {"status": "check_email"}), r.text
    if verified:
        running().verify_email(email)
    r = http.post(
        "/api/auth/sign-in",
        json={"email": f"{name.lower()}-{unique}@example.com", "password": PASSWORD},
    )
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def admin_token(http: httpx.Client) -> str:
    r = http.post("/api/auth/sign-in", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD})
    assert r.status_code == 200, r.text
    token: str = r.json()["access_token"]
    return token


def wait_for_balance(http: httpx.Client, token: str, at_least: int) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while True:
        balance: dict[str, Any] = http.get("/api/wallet", headers=bearer(token)).json()
        if balance["balance"] >= at_least or time.monotonic() > deadline:
            return balance
        time.sleep(0.1)


def error_code(response: httpx.Response) -> str:
    code: str = response.json()["error"]["code"]
    return code


def test_sign_up_then_welcome_grant_shows_in_wallet(http: httpx.Client, unique: str) -> None:
    tokens = sign_up(http, unique)
    assert tokens["user"]["roles"] == ["player"]
    balance = wait_for_balance(http, tokens["access_token"], 1000)
    assert balance == {
        "user_id": tokens["user"]["user_id"], "balance": 1000, "held": 0, "available": 1000,
    }  # fmt: skip
    history = http.get("/api/wallet/history", headers=bearer(tokens["access_token"])).json()
    assert [(e["kind"], e["amount"]) for e in history["entries"]] == [("welcome", 1000)]


def test_sign_in_profile_refresh_and_sign_out(http: httpx.Client, unique: str) -> None:
    sign_up(http, unique, "Maria")
    email = f"maria-{unique}@example.com"
    bad = http.post("/api/auth/sign-in", json={"email": email, "password": "wrong password!!"})
    assert bad.status_code == 401 and error_code(bad) == "invalid_credentials"
    tokens = http.post("/api/auth/sign-in", json={"email": email.upper(), "password": PASSWORD})
    assert tokens.status_code == 200, tokens.text
    pair = tokens.json()
    me = http.get("/api/me", headers=bearer(pair["access_token"]))
    assert me.status_code == 200 and me.json()["display_name"] == "Maria"

    rotated = http.post("/api/auth/refresh", json={"refresh_token": pair["refresh_token"]})
    assert rotated.status_code == 200
    new_pair = rotated.json()
    assert new_pair["refresh_token"] != pair["refresh_token"]
    reused = http.post("/api/auth/refresh", json={"refresh_token": pair["refresh_token"]})
    assert reused.status_code == 401 and error_code(reused) == "refresh_token_reused"
    # Reuse revoked the whole family, including the token issued by the rotation.
    after = http.post("/api/auth/refresh", json={"refresh_token": new_pair["refresh_token"]})
    assert after.status_code == 401

    fresh = http.post("/api/auth/sign-in", json={"email": email, "password": PASSWORD}).json()
    out = http.post("/api/auth/sign-out", json={"refresh_token": fresh["refresh_token"]})
    assert out.status_code == 200
    gone = http.post("/api/auth/refresh", json={"refresh_token": fresh["refresh_token"]})
    assert gone.status_code == 401


def _forge(token: str, **changes: Any) -> str:
    header_b64, payload_b64, signature = token.split(".")
    pad = "=" * (-len(payload_b64) % 4)
    payload = json.loads(base64.urlsafe_b64decode(payload_b64 + pad))
    payload.update(changes)
    forged = base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode()
    return f"{header_b64}.{forged}.{signature}"


def _unsigned(claims: dict[str, Any]) -> str:
    def part(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}."


def test_bad_tokens_are_refused(http: httpx.Client, unique: str) -> None:
    tokens = sign_up(http, unique)
    good = tokens["access_token"]
    assert http.get("/api/me", headers=bearer(good)).status_code == 200
    payload = json.loads(base64.urlsafe_b64decode(good.split(".")[1] + "=="))
    cases = {
        "missing": {},
        "garbage": bearer("not-a-token"),
        "tampered roles": bearer(_forge(good, roles=["player", "admin"])),
        "alg none": bearer(_unsigned({**payload, "roles": ["admin"]})),
        "expired": bearer(_forge(good, exp=int(time.time()) - 3600)),
        "wrong audience": bearer(_forge(good, aud="someone-else")),
        "refresh token as bearer": bearer(tokens["refresh_token"]),
    }
    for name, headers in cases.items():
        r = http.get("/api/me", headers=headers)
        assert r.status_code == 401, (name, r.text)
        assert error_code(r) in {"unauthorized", "invalid_token", "token_expired"}, name


def test_non_admins_get_403_on_admin_routes(http: httpx.Client, unique: str) -> None:
    token = sign_up(http, unique)["access_token"]
    routes = [
        ("GET", "/api/admin/approvals", None),
        ("GET", "/api/admin/approvals?kind=credits", None),
        ("POST", "/api/admin/approvals/x/decision", {"approve": True}),
        ("GET", "/api/admin/approvals/x", None),
        ("POST", "/api/admin/grants", {"user_id": "x", "amount": 5, "reason": "because"}),
        ("GET", "/api/admin/audit", None),
    ]
    for method, path, body in routes:
        r = http.request(method, path, json=body, headers=bearer(token))
        assert r.status_code == 403, (path, r.text)
        assert error_code(r) == "forbidden"
        assert http.request(method, path, json=body).status_code == 401, path


def test_credit_request_approved_by_admin_updates_balance(http: httpx.Client, unique: str) -> None:
    player = sign_up(http, unique)
    token = player["access_token"]
    wait_for_balance(http, token, 1000)
    r = http.post(
        "/api/approvals", json={"kind": "credits", "amount": 250, "note": "more please"},
        headers=bearer(token),
    )  # fmt: skip
    assert r.status_code == 201, r.text
    approval_id = r.json()["approval_id"]

    admin = bearer(admin_token(http))
    pending = http.get("/api/admin/approvals?kind=credits", headers=admin).json()["approvals"]
    assert approval_id in [p["approval_id"] for p in pending]
    hosts = http.get("/api/admin/approvals?kind=host_access", headers=admin).json()["approvals"]
    assert approval_id not in [p["approval_id"] for p in hosts]
    decided = http.post(
        f"/api/admin/approvals/{approval_id}/decision",
        json={"approve": True, "reason": "welcome to the table"}, headers=admin,
    )  # fmt: skip
    # Approved and granted by the wallet in the one call (it is up).
    assert decided.status_code == 200 and decided.json()["status"] == "applied", decided.text
    again = http.post(
        f"/api/admin/approvals/{approval_id}/decision", json={"approve": False},
        headers=admin,
    )  # fmt: skip
    assert again.status_code == 409 and error_code(again) == "already_decided"
    mine = http.get("/api/approvals", headers=bearer(token)).json()["approvals"]
    assert [(m["approval_id"], m["status"]) for m in mine] == [(approval_id, "applied")]
    trail = http.get(f"/api/admin/approvals/{approval_id}", headers=admin).json()
    assert [(e["status"], e["reason"]) for e in trail["events"]] == [
        ("pending", ""),
        ("approved", "welcome to the table"),
        ("applied", ""),
    ]
    balance = http.get("/api/wallet", headers=bearer(token)).json()
    assert balance["balance"] == 1250 and balance["available"] == 1250

    grant = http.post(
        "/api/admin/grants",
        json={"user_id": player["user"]["user_id"], "amount": 40, "reason": "tournament prize"},
        headers=admin,
    )  # fmt: skip
    assert grant.status_code == 201, grant.text
    assert grant.json()["balance"]["balance"] == 1290
    audit = http.get("/api/admin/audit", headers=admin).json()
    assert audit["total"] == 0 and audit["mismatched_accounts"] == []


def test_host_request_approved_by_admin(http: httpx.Client, unique: str) -> None:
    player = sign_up(http, unique, "Host")
    token = player["access_token"]
    r = http.post("/api/approvals", json={"kind": "host_access", "note": "I run a barkada table"},
                  headers=bearer(token))  # fmt: skip
    assert r.status_code == 201, r.text
    admin = bearer(admin_token(http))
    decided = http.post(
        f"/api/admin/approvals/{r.json()['approval_id']}/decision",
        json={"approve": True}, headers=admin,
    )  # fmt: skip
    assert decided.status_code == 200 and decided.json()["status"] == "applied"
    refreshed = http.post("/api/auth/refresh", json={"refresh_token": player["refresh_token"]})
    assert "host" in refreshed.json()["user"]["roles"]
    me = http.get("/api/me", headers=bearer(refreshed.json()["access_token"])).json()
    assert "host" in me["roles"]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/auth/sign-up", {"email": "x@example.com"}),
        ("/api/auth/sign-up", {"email": "a@b.c", "password": "x" * 12, "display_name": "A",
                               "roles": ["admin"]}),
        ("/api/auth/sign-in", ["not", "an", "object"]),
        ("/api/approvals", {"kind": "credits", "amount": -5}),
        ("/api/approvals", {"kind": "credits", "amount": "lots"}),
        ("/api/approvals", {"kind": "credits", "amount": 10, "user_id": "someone-else"}),
        ("/api/approvals", {"kind": "everything", "amount": 10}),
    ],
)  # fmt: skip
def test_malformed_bodies_get_400_and_change_nothing(
    http: httpx.Client, unique: str, path: str, body: object
) -> None:
    token = sign_up(http, unique)["access_token"]
    before = http.get("/api/approvals", headers=bearer(token)).json()
    r = http.post(path, json=body, headers=bearer(token))
    assert r.status_code == 400, r.text
    assert error_code(r) == "bad_request"
    assert r.json()["error"]["message"].startswith("invalid request")
    assert http.get("/api/approvals", headers=bearer(token)).json() == before
    raw = http.post(
        path, content=b"{not json", headers=bearer(token) | {"content-type": "application/json"}
    )
    assert raw.status_code == 400 and error_code(raw) == "bad_request"


def test_google_sign_in_creates_then_links(stack: Stack, http: httpx.Client, unique: str) -> None:
    email = f"google-{unique}@gmail.com"
    first = http.post("/api/auth/google", json={"id_token": stack.google.id_token(unique, email)})
    assert first.status_code == 200, first.text
    second = http.post("/api/auth/google", json={"id_token": stack.google.id_token(unique, email)})
    assert second.json()["user"]["user_id"] == first.json()["user"]["user_id"]
    wrong_aud = stack.google.id_token(unique, email, aud="another-app")
    r = http.post("/api/auth/google", json={"id_token": wrong_aud})
    assert r.status_code == 401
    expired = stack.google.id_token(unique, email, exp=int(time.time()) - 60)
    assert http.post("/api/auth/google", json={"id_token": expired}).status_code == 401
    assert http.get("/api/config").json()["google_client_id"] == GOOGLE_CLIENT_ID


def test_api_docs_and_web_page_are_served(http: httpx.Client) -> None:
    schema = http.get("/schema/openapi.json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    assert "/api/auth/sign-up" in paths and "/api/admin/grants" in paths
    page = http.get("/")
    assert page.status_code == 200 and "KaLaro" in page.text
    assert http.get("/healthz").json()["nats"] is True


def test_sign_up_mails_a_single_use_link_and_reveals_nothing(
    stack: Stack, http: httpx.Client, unique: str
) -> None:
    email = f"vera-{unique}@example.com"
    tokens = sign_up(http, unique, "Vera", verified=False)
    assert tokens["user"]["email_verified"] is False
    body = stack.mails_to(email)[-1].get_content()
    token = stack.mailed_token(email)
    # The link opens the web client's page; fetching it (a mail scanner) spends nothing.
    assert f"{stack.base_url}/#/verify?token={token}" in body
    assert http.get(f"/#/verify?token={token}").status_code == 200
    # So does a link in the old form: it only leads to the page.
    old = http.get("/api/auth/verify", params={"token": token})
    assert old.status_code == 303 and old.headers["location"] == f"/#/verify?token={token}"
    me = http.get("/api/me/", headers=bearer(tokens["access_token"])).json()
    assert me["email_verified"] is False
    # The page's button POSTs the token.
    r = http.post("/api/auth/verify", json={"token": token})
    assert r.status_code == 200, r.text
    assert r.json() == {
        "user_id": tokens["user"]["user_id"],
        "email": email,
        "email_verified": True,
    }
    me = http.get("/api/me/", headers=bearer(tokens["access_token"])).json()
    assert me["email_verified"] is True
    again = http.post("/api/auth/verify", json={"token": token})
    assert again.status_code == 410 and error_code(again) == "link_used"
    garbage = http.post("/api/auth/verify", json={"token": "garbage-garbage-garbage-garbage"})
    assert garbage.status_code == 401 and error_code(garbage) == "invalid_token"
    assert http.post("/api/auth/verify", json={}).status_code == 400
    assert http.get("/api/auth/verify").status_code == 400
    # A known email is answered exactly like a new one; the owner is told by mail.
    known = http.post(
        "/api/auth/sign-up",
        json={"email": email.upper(), "password": "another long password", "display_name": "X"},
    )
    new = http.post(
        "/api/auth/sign-up",
        json={"email": f"nova-{unique}@example.com", "password": PASSWORD, "display_name": "Nova"},
    )
    assert (known.status_code, known.json()) == (new.status_code, new.json())
    assert (known.status_code, known.json()) == (202, {"status": "check_email"})
    assert stack.mails_to(email)[-1]["Subject"] == "You already have a KaLaro account"
    squat = http.post(
        "/api/auth/sign-in", json={"email": email, "password": "another long password"}
    )
    assert squat.status_code == 401 and error_code(squat) == "invalid_credentials"


def test_google_takes_over_an_unverified_account_and_links_a_verified_one(
    stack: Stack, http: httpx.Client, unique: str
) -> None:
    squatted = f"owner-{unique}@gmail.com"
    r = http.post(
        "/api/auth/sign-up",
        json={"email": squatted, "password": PASSWORD, "display_name": "Squatter"},
    )
    assert r.status_code == 202, r.text
    squatter = http.post("/api/auth/sign-in", json={"email": squatted, "password": PASSWORD})
    assert squatter.status_code == 200, squatter.text
    owner = http.post(
        "/api/auth/google", json={"id_token": stack.google.id_token(f"o-{unique}", squatted)}
    )
    assert owner.status_code == 200, owner.text
    assert owner.json()["user"]["email_verified"] is True
    assert owner.json()["user"]["google_linked"] is True
    again = http.post("/api/auth/sign-in", json={"email": squatted, "password": PASSWORD})
    assert again.status_code == 401 and error_code(again) == "invalid_credentials"
    stale = http.get("/api/me/", headers=bearer(squatter.json()["access_token"]))
    assert stale.status_code == 401, stale.text
    refresh = squatter.json()["refresh_token"]
    assert http.post("/api/auth/refresh", json={"refresh_token": refresh}).status_code == 401
    # Google verified the address: the owner gets the welcome grant the squatter never had.
    assert wait_for_balance(http, owner.json()["access_token"], 1000)["balance"] == 1000

    # A verified password account is linked, and its password keeps working.
    tokens = sign_up(http, unique, "Vida")  # verified
    email = f"vida-{unique}@example.com"
    linked = http.post(
        "/api/auth/google", json={"id_token": stack.google.id_token(f"v-{unique}", email)}
    )
    assert linked.status_code == 200, linked.text
    assert linked.json()["user"]["user_id"] == tokens["user"]["user_id"]
    assert linked.json()["user"]["display_name"] == "Vida"
    signed_in = http.post("/api/auth/sign-in", json={"email": email, "password": PASSWORD})
    assert signed_in.status_code == 200, signed_in.text
