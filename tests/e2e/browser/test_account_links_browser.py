"""The page a verification link opens: nothing happens until its button is pressed."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.browser.conftest import PHONE
from tests.e2e.browser.pages import PASSWORD, shot
from tests.e2e.stack import Stack

expect = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed").expect

pytestmark = pytest.mark.browser

SESSION_USER = "() => JSON.parse(sessionStorage.getItem('kalaro.session')).user"


def fits_the_phone(page: Any) -> None:
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]


def email_verified(stack: Stack, email: str) -> bool:
    with httpx.Client(base_url=stack.base_url) as http:
        pair = http.post("/api/auth/sign-in", json={"email": email, "password": PASSWORD})
        verified: bool = pair.json()["user"]["email_verified"]
    return verified


def test_the_mailed_link_opens_a_page_whose_button_confirms(
    new_page: Any, stack: Stack, unique: str, screenshots: Path
) -> None:
    email = f"dalia-{unique}@example.com"
    page = new_page(PHONE)
    page.goto("/#/sign-in")
    page.click("#tab-sign-up")
    page.fill("#email", email)
    page.fill("#password", PASSWORD)
    page.fill("#display-name", "Dalia")
    page.click("#auth-submit")
    page.wait_for_selector("#lobby-title")
    assert page.evaluate(SESSION_USER)["email_verified"] is False
    # The lobby says what waits for the confirmation, and can send the link again.
    expect(page.locator("#verify-banner")).to_contain_text("welcome grant of 1,000")
    fits_the_phone(page)
    shot(page, screenshots, "30-lobby-unverified-phone")

    # A mail scanner fetches the link, and the link in its old form, before she clicks.
    token = stack.mailed_token(email)
    link = f"{stack.base_url}/#/verify?token={token}"
    with httpx.Client(base_url=stack.base_url, follow_redirects=True) as scanner:
        assert scanner.get(link).status_code == 200
        assert scanner.get("/api/auth/verify", params={"token": token}).status_code == 200
    assert not email_verified(stack, email)

    page.goto(link)
    expect(page.locator("#verify-title")).to_have_text("Confirm your email address")
    expect(page.locator("#verify-page")).to_contain_text("1,000 fun credits")
    fits_the_phone(page)
    shot(page, screenshots, "30-verify-page-phone")
    assert not email_verified(stack, email)  # opening the page changed nothing

    page.focus("#verify-confirm")
    page.keyboard.press("Enter")
    expect(page.locator("#verify-title")).to_have_text("Your email is confirmed")
    expect(page.locator("#verify-title")).to_be_focused()  # read out at once
    expect(page.locator("#verify-page")).to_contain_text(email)
    shot(page, screenshots, "30-verify-done-phone")
    assert email_verified(stack, email)
    # Her signed-in tab now holds a session that knows it.
    assert page.evaluate(SESSION_USER)["email_verified"] is True
    page.click("#verify-next")
    page.wait_for_selector("#lobby-title")
    expect(page.locator("#verify-banner")).to_have_count(0)

    # Following the link again, signed out in another browser, changes nothing and
    # says what to do next.
    other = new_page(PHONE)
    other.goto(link)
    other.click("#verify-confirm")
    expect(other.locator("#verify-title")).to_have_text("This link was already used")
    expect(other.locator("#verify-sign-in")).to_be_visible()
    fits_the_phone(other)
    shot(other, screenshots, "30-verify-used-phone")
    other.click("#verify-sign-in")
    other.wait_for_selector("#auth-submit")


def test_a_broken_link_says_so_and_offers_sign_in(new_page: Any, screenshots: Path) -> None:
    page = new_page(PHONE)
    page.goto("/#/verify?token=cut-off-by-a-mail-app-xxxxxxxx")
    page.click("#verify-confirm")
    expect(page.locator("#verify-title")).to_have_text("This link is not valid")
    expect(page.locator("#verify-sign-in")).to_be_visible()
    shot(page, screenshots, "30-verify-invalid-phone")
    page.goto("/#/verify")
    expect(page.locator("#verify-title")).to_have_text("This link is not valid")


def test_a_forgotten_password_is_reset_from_the_mailed_link(
    new_page: Any, stack: Stack, unique: str, screenshots: Path
) -> None:
    email = f"rena-{unique}@example.com"
    with httpx.Client(base_url=stack.base_url) as http:
        body = {"email": email, "password": PASSWORD, "display_name": "Rena"}
        assert http.post("/api/auth/sign-up", json=body).status_code == 202
    page = new_page(PHONE)
    page.goto("/#/sign-in")
    page.click("#forgot-password")
    expect(page.locator("#reset-title")).to_have_text("Forgot your password?")
    page.fill("#reset-email", email)
    page.keyboard.press("Enter")
    expect(page.locator("#reset-status")).to_contain_text(f"If an account uses {email}")
    fits_the_phone(page)
    shot(page, screenshots, "31-reset-asked-phone")

    token = ""
    for msg in stack.mails_to(email):
        if msg["Subject"] == "Reset your KaLaro password":
            token = msg.get_content().split("/#/reset?token=")[1].split()[0]
    assert token
    page.goto(f"/#/reset?token={token}")
    expect(page.locator("#reset-title")).to_have_text("Choose a new password")
    page.fill("#reset-password", "short")
    page.click("#reset-save")
    expect(page.locator("#reset-error")).to_contain_text("password too weak")
    expect(page.locator("#reset-password")).to_be_focused()
    shot(page, screenshots, "31-reset-weak-phone")
    page.fill("#reset-password", "a new passphrase 2 remember")
    page.keyboard.press("Enter")
    expect(page.locator("#reset-title")).to_have_text("Your password is changed")
    fits_the_phone(page)
    page.click("#reset-next")
    page.wait_for_selector("#lobby-title")
    # The mail proved the address: the account is verified, and the link is spent.
    assert page.evaluate(SESSION_USER)["email_verified"] is True
    again = new_page(PHONE)
    again.goto(f"/#/reset?token={token}")
    again.fill("#reset-password", "another passphrase 3 here")
    again.click("#reset-save")
    expect(again.locator("#reset-title")).to_have_text("This link was already used")
    expect(again.locator("#reset-again")).to_be_visible()
    shot(again, screenshots, "31-reset-used-phone")


def test_an_expired_link_is_traded_for_a_new_one_on_its_page(
    new_page: Any, stack: Stack, unique: str, screenshots: Path
) -> None:
    email = f"ester-{unique}@example.com"
    with httpx.Client(base_url=stack.base_url) as http:
        body = {"email": email, "password": PASSWORD, "display_name": "Ester"}
        assert http.post("/api/auth/sign-up", json=body).status_code == 202
    old = stack.mailed_token(email)
    # A day passes: the link's expiry is moved into the past in the stack's database.
    with sqlite3.connect(stack.root / "kalaro.db") as db:
        db.execute(
            "UPDATE auth_email_tokens SET expires_at = 0 WHERE user_id ="
            " (SELECT id FROM auth_users WHERE email = ?)",
            (email,),
        )
    page = new_page(PHONE)
    page.goto(f"/#/verify?token={old}")
    page.click("#verify-confirm")
    expect(page.locator("#verify-title")).to_have_text("This link has expired")
    fits_the_phone(page)
    shot(page, screenshots, "30-verify-expired-phone")
    page.focus("#verify-resend")
    page.keyboard.press("Enter")
    expect(page.locator("#verify-status")).to_contain_text("We sent a new link")
    new = stack.mailed_token(email)
    assert new != old
    page.goto(f"/#/verify?token={new}")
    page.click("#verify-confirm")
    expect(page.locator("#verify-title")).to_have_text("Your email is confirmed")
    expect(page.locator("#verify-sign-in")).to_be_visible()  # not signed in in this tab
    assert email_verified(stack, email)
