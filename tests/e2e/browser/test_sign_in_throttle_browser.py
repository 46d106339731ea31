"""Sign-in throttling as a person on a phone meets it, against the whole stack: the
form says how long to wait, in words, then asks for the code we emailed; afterwards
this browser is a known device and signs in without one.

The e2e stack slows new devices after 5 failures (waits 1, 2, 4 s) and asks for a code
after 8 (tests/e2e/stack.py).
"""

from __future__ import annotations

import re
import time
from email import message_from_bytes
from email.policy import default
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.browser.conftest import PHONE
from tests.e2e.browser.pages import PASSWORD, shot
from tests.e2e.stack import Stack

expect = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed").expect

pytestmark = pytest.mark.browser


def _code(stack: Stack, email: str) -> str:
    for path in sorted(Path(stack.root, "mail").glob("*.eml"), reverse=True):
        msg: Any = message_from_bytes(path.read_bytes(), policy=default)
        if msg["To"] == email and "sign-in code" in msg["Subject"]:
            return str(re.findall(r"^ {4}(\d{6})$", msg.get_content(), re.M)[0])
    raise AssertionError(f"no code was mailed to {email}")


def _try(page: Any, email: str) -> None:
    page.fill("#email", email)
    page.fill("#password", PASSWORD)
    page.click("#auth-submit")


def test_the_form_says_how_long_to_wait_then_asks_for_the_code(
    new_page: Any, stack: Stack, unique: str, screenshots: Path
) -> None:
    email = f"tala-{unique}@example.com"
    with httpx.Client(base_url=stack.base_url, timeout=20) as guesser:
        body = {"email": email, "password": PASSWORD, "display_name": "Tala"}
        assert guesser.post("/api/auth/sign-up", json=body).status_code == 202

        def guess(i: int) -> None:
            wrong = {"email": email, "password": f"wrong guess {i}"}
            r = guesser.post("/api/auth/sign-in", json=wrong)
            assert r.status_code == 401, r.text

        for i in range(5):
            guess(i)
        time.sleep(1.05)
        guess(5)
        time.sleep(2.05)
        guess(6)  # 7 failures: new devices wait 4 s

        page = new_page(PHONE)
        page.goto("/#/sign-in")
        _try(page, email)
        expect(page.locator("#auth-error")).to_have_text(
            re.compile(r"Too many attempts\. Please wait [1-4] seconds? and try again\.")
        )
        assert page.locator("#sign-in-code").is_hidden()
        shot(page, screenshots, "sign-in-wait-phone")
        words = page.evaluate(
            "() => import('/views/sign-in.js').then((m) => "
            "[1, 45, 60, 61, 125].map((s) => m.waitInWords(s)))"
        )
        assert words == ["1 second", "45 seconds", "1 minute", "2 minutes", "3 minutes"]

        time.sleep(4.1)
        guess(7)  # 8 failures: a new device needs the emailed code

    page.click("#auth-submit")
    expect(page.locator("#auth-error")).to_contain_text("we emailed you a 6-digit code")
    expect(page.locator("#sign-in-code")).to_be_visible()
    expect(page.locator("#sign-in-code")).to_be_focused()
    shot(page, screenshots, "sign-in-code-phone")
    page.fill("#sign-in-code", "12")
    page.click("#auth-submit")
    expect(page.locator("#auth-error")).to_contain_text("the 6 digits in our email")
    page.fill("#sign-in-code", _code(stack, email))
    page.click("#auth-submit")
    page.wait_for_selector("#lobby-title")

    # This browser is a known device now: no code, though the account still needs one.
    page.evaluate("() => sessionStorage.clear()")
    page.goto("/#/sign-in")
    page.reload()
    _try(page, email)
    page.wait_for_selector("#lobby-title")
