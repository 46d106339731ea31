"""Accounts and tokens to test the auth service's pure rules on: no servers, no SQL."""

from __future__ import annotations

from typing import Any

import pytest

from kalaro.bus import ServiceError
from services.auth.records import Account, EmailToken, RefreshToken

NOW_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
STRONG = "Tamarind-Kite-42"


def account(**changes: Any) -> Account:
    fields: dict[str, Any] = {
        "user_id": "u_ana",
        "email": "ana@example.com",
        "display_name": "Ana",
        "password_hash": "$argon2id$stored",
        "google_sub": None,
        "roles": ("player",),
        "created_at": NOW_MS,
        "email_verified": True,
    }
    fields.update(changes)
    return Account(**fields)


def refresh_token(**changes: Any) -> RefreshToken:
    fields: dict[str, Any] = {
        "token_hash": "ab" * 32,
        "family_id": "f1",
        "user_id": "u_ana",
        "expires_at": NOW_MS + 1000,
        "used_at": None,
        "revoked_at": None,
    }
    fields.update(changes)
    return RefreshToken(**fields)


def email_token(**changes: Any) -> EmailToken:
    fields: dict[str, Any] = {
        "token_hash": "cd" * 32,
        "user_id": "u_ana",
        "expires_at": NOW_MS + 1000,
        "used_at": None,
    }
    fields.update(changes)
    return EmailToken(**fields)


def refused(code: str, call: object, *args: object, **kw: object) -> str:
    """The message of the ``ServiceError`` with ``code`` that ``call`` raises."""
    with pytest.raises(ServiceError) as caught:
        call(*args, **kw)  # type: ignore[operator]
    assert caught.value.code == code, caught.value
    return caught.value.message
