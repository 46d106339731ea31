"""One sign-up, one recipient: an address that could name more is refused before any mail."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.stack import Stack

PASSWORD = "correct horse battery staple"

SMUGGLING = [
    "ana,eve@example.com",
    "ana;eve@example.com",
    "ana:eve@example.com",
    "ana(eve)@example.com",
    "ana<eve@example.com>",
    "ana>x@example.com",
    '"ana eve"@example.com',
    '"ana,eve"@example.com',
    "ana@example.com\r\nBcc: eve@example.com",
    "ana@example.com\nBcc: eve@example.com",
    "ana@example.com, eve@example.com",
    "Ana <ana@example.com>",
]


def letters(stack: Stack) -> list[str]:
    return sorted(p.name for p in (stack.root / "mail").glob("*.eml"))


@pytest.mark.parametrize("address", SMUGGLING)
def test_an_address_naming_more_than_one_mailbox_is_refused_and_nothing_is_mailed(
    stack: Stack, http: httpx.Client, address: str
) -> None:
    before = letters(stack)
    r = http.post(
        "/api/auth/sign-up",
        json={"email": address, "password": PASSWORD, "display_name": "Eve"},
    )
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["code"] == "bad_request"
    assert error["message"].startswith("enter one valid email address"), error
    assert letters(stack) == before


def test_a_valid_address_is_stored_and_mailed_in_its_canonical_form(
    stack: Stack, http: httpx.Client, unique: str
) -> None:
    typed = f"  Ana.Cruz+{unique}@Example.COM "
    canonical = f"ana.cruz+{unique}@example.com"
    r = http.post(
        "/api/auth/sign-up", json={"email": typed, "password": PASSWORD, "display_name": "Ana"}
    )
    assert r.status_code == 202, r.text
    [letter] = stack.mails_to(canonical)
    assert [a.addr_spec for a in letter["To"].addresses] == [canonical]
    pair = http.post("/api/auth/sign-in", json={"email": typed, "password": PASSWORD})
    assert pair.status_code == 200, pair.text
    assert pair.json()["user"]["email"] == canonical
