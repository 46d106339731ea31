"""Refresh tokens, verification links, Google linking and mails: the auth service's pure
session rules."""

from __future__ import annotations

import hashlib

from kalaro.proto import errors as codes
from kalaro.settings import load_settings
from services.auth import letters, rules
from tests.unit.auth.auth_helpers import NOW_MS, account, email_token, refresh_token, refused


def test_tokens_are_stored_as_their_sha256() -> None:
    assert rules.hash_token("secret") == hashlib.sha256(b"secret").hexdigest()
    assert not rules.plausible_token("x" * 19)
    assert rules.plausible_token("x" * 20) and rules.plausible_token("x" * 512)
    assert not rules.plausible_token("x" * 513)


def test_expiries() -> None:
    assert rules.refresh_expiry(NOW_MS, 30) == NOW_MS + 30 * 86_400_000
    assert rules.link_expiry(NOW_MS, 48) == NOW_MS + 48 * 3_600_000


def test_refresh_verdicts() -> None:
    assert rules.judge_refresh(None, NOW_MS) == "unknown"
    assert rules.judge_refresh(refresh_token(), NOW_MS) == "usable"
    assert rules.judge_refresh(refresh_token(expires_at=NOW_MS), NOW_MS) == "expired"
    assert rules.judge_refresh(refresh_token(revoked_at=1), NOW_MS) == "revoked"
    # A used token is theft even when it was also revoked or has expired since.
    stolen = refresh_token(used_at=1, revoked_at=2, expires_at=NOW_MS - 1)
    assert rules.judge_refresh(stolen, NOW_MS) == "reused"


def test_refresh_refusals_carry_their_code() -> None:
    cases = {
        "reused": (codes.REFRESH_REUSED, "already used"),
        "expired": (codes.TOKEN_EXPIRED, "expired"),
        "revoked": (codes.INVALID_TOKEN, "revoked"),
        "unknown": (codes.INVALID_TOKEN, "unknown refresh token"),
    }
    for verdict, (code, words) in cases.items():
        err = rules.refresh_refusal(verdict)  # type: ignore[arg-type]
        assert err.code == code and words in err.message, verdict


def test_link_verdicts_and_refusals() -> None:
    assert rules.judge_link(None, NOW_MS) == "unknown"
    assert rules.judge_link(email_token(), NOW_MS) == "usable"
    assert rules.judge_link(email_token(expires_at=NOW_MS), NOW_MS) == "expired"
    assert rules.judge_link(email_token(used_at=1, expires_at=0), NOW_MS) == "used"
    assert rules.link_refusal("unknown").message == "this verification link is not valid"
    assert rules.link_refusal("used").message == "this verification link was already used"
    expired = rules.link_refusal("expired")
    assert (expired.code, "new one" in expired.message) == (codes.TOKEN_EXPIRED, True)
    assert rules.link_refusal("used").code == codes.LINK_USED


def test_google_identities_meet_accounts() -> None:
    assert rules.google_link(None) == "create"
    assert rules.google_link(account(email_verified=True)) == "link"
    # Anyone could have typed this address: its Google-verified owner takes it over.
    assert rules.google_link(account(email_verified=False)) == "take_over"
    other = account(google_sub="g-other")
    assert "different Google account" in refused(codes.CONFLICT, rules.google_link, other)


def test_letters() -> None:
    settings = load_settings({}, public_url="https://play.example.com/")
    base = letters.link_base(settings)
    assert base == "https://play.example.com"
    link = letters.verify_link(base, "tok")
    assert link == "https://play.example.com/#/verify?token=tok"
    verify = letters.verify_letter("Ana", link, 48)
    assert link in verify.body and "within 48 hours" in verify.body and "Hello Ana" in verify.body
    already = letters.already_registered_letter(base)
    assert "already have an account" in already.body and f"{base}/" in already.body


def test_the_link_base_without_a_public_url() -> None:
    settings = load_settings({}, public_url="", http_host="127.0.0.1", http_port=8000)
    assert letters.link_base(settings) == "http://127.0.0.1:8000"
