"""The installable app, the offline API docs and the welcome banner, in the browser on a
phone (375×812) and a desktop.

- The page links its manifest and registers the service worker for the whole app; once
  the network is gone, opening the app shows the offline page.
- ``/schema`` renders the API reference with every other origin blocked (no internet).
- After an admin approves a credit request, the welcome banner still shows the welcome
  grant (1,000), not the new balance.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from kalaro.client import KalaroClient
from tests.e2e.browser.conftest import PHONE, WIDE
from tests.e2e.browser.pages import shot, sign_up
from tests.e2e.stack import ADMIN_EMAIL, ADMIN_PASSWORD, Stack

expect = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed").expect

pytestmark = pytest.mark.browser


def test_installable_and_offline_page(new_page: Any, stack: Stack, screenshots: Path) -> None:
    for viewport, tag in ((PHONE, "phone"), (WIDE, "wide")):
        page = new_page(viewport)
        page.goto("/")
        page.wait_for_selector("#auth-submit")
        manifest = page.evaluate(
            """async () => {
              const link = document.querySelector("link[rel=manifest]");
              const r = await fetch(link.href);
              return { type: r.headers.get("content-type"), body: await r.json() };
            }"""
        )
        assert manifest["type"].startswith("application/manifest+json")
        assert {i["purpose"] for i in manifest["body"]["icons"]} == {"any", "maskable"}
        scope = page.evaluate("async () => (await navigator.serviceWorker.ready).scope")
        assert scope == f"{stack.base_url}/"
        # The worker controls the page after a reload; then the network goes away.
        page.reload()
        page.wait_for_function("() => navigator.serviceWorker.controller !== null")
        page.context.set_offline(True)
        page.goto("/?from=home-screen")
        expect(page.get_by_role("heading", name="You're offline")).to_be_visible()
        expect(page.locator(".offline-retry")).to_be_visible()
        shot(page, screenshots, f"40-offline-{tag}")
        page.context.set_offline(False)
        page.goto("/")
        page.wait_for_selector("#auth-submit")


def test_schema_page_without_internet(new_page: Any, stack: Stack, screenshots: Path) -> None:
    for viewport, tag in ((PHONE, "phone"), (WIDE, "wide")):
        page = new_page(viewport)
        outside: list[str] = []

        def only_ours(route: Any, outside: list[str] = outside) -> None:
            if route.request.url.startswith(stack.base_url):
                route.continue_()
            else:
                outside.append(route.request.url)
                route.abort()

        page.route("**/*", only_ours)
        page.goto("/schema")
        expect(page.locator("#tag-hands")).to_be_visible()
        expect(page.locator("code", has_text="/api/hands/{game}/{hand_id}/replay")).to_be_visible()
        page.click("a[href='#schema-HandsPage']")
        expect(page.locator("#schema-HandsPage")).to_have_attribute("open", "")
        assert outside == []
        # The first screen only: the whole reference is many screens long.
        page.screenshot(path=str(screenshots / f"41-schema-offline-{tag}.png"))


def test_welcome_banner_shows_the_grant_after_an_approval(
    new_page: Any, stack: Stack, unique: str, screenshots: Path
) -> None:
    for viewport, tag in ((PHONE, "phone"), (WIDE, "wide")):
        page = new_page(viewport)
        sign_up(page, f"welcome-{tag}-{unique}@example.com", "Wilma")
        page.wait_for_function(
            "() => document.querySelector('#welcome-amount')?.textContent === '1,000'"
        )
        page.goto("/#/wallet")
        page.fill("#credit-amount", "500")
        page.fill("#credit-note", f"note-{tag}-{unique}")
        page.click("#credit-submit")
        page.wait_for_selector("#my-requests li[data-status='pending']")

        async def approve(note: str = f"note-{tag}-{unique}") -> None:
            async with KalaroClient(stack.base_url) as admin:
                await admin.sign_in(ADMIN_EMAIL, ADMIN_PASSWORD)
                pending = (await admin.approvals("credits")).approvals
                (mine,) = [r for r in pending if r.note == note]
                await admin.decide(mine.approval_id, True)

        with ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, approve()).result(timeout=60)
        page.wait_for_function(
            "() => document.querySelector('#balance-amount')?.textContent === '1,500'",
            timeout=30000,
        )
        page.goto("/#/")
        expect(page.locator("#welcome")).to_be_visible()
        page.wait_for_function(
            "() => document.querySelector('#welcome-amount')?.textContent !== '…'"
        )
        # Before the fix this read the balance: 1,500.
        assert page.inner_text("#welcome-amount") == "1,000"
        shot(page, screenshots, f"42-welcome-after-approval-{tag}")
