"""Admin in the browser: find a player by name or email, read their ledger, and grant
credits by picking them (never by typing a 32-character id)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser.conftest import PHONE, WIDE
from tests.e2e.browser.pages import shot, sign_in, sign_up

expect = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed").expect

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("viewport", [PHONE, WIDE], ids=["phone", "wide"])
def test_admin_finds_a_player_sees_the_ledger_and_grants(
    new_page: Any, unique: str, screenshots: Path, viewport: dict[str, int]
) -> None:
    tag = "phone" if viewport == PHONE else "wide"
    name = f"Rosa {unique[:6]}"
    player = new_page(PHONE)
    sign_up(player, f"rosa-{unique}@example.com", name)
    player.wait_for_function(
        "() => document.querySelector('#balance-amount')?.textContent === '1,000'"
    )
    user_id = player.evaluate(
        "() => JSON.parse(sessionStorage.getItem('kalaro.session')).user.user_id"
    )
    # A player has no admin page, and its search is refused to them.
    player.goto("/#/admin")
    expect(player.locator("#app")).to_contain_text("This page is for admins.")
    expect(player.locator("#user-search")).to_have_count(0)

    admin = new_page(viewport)
    sign_in(admin)
    admin.click("a[data-nav='admin']")
    # Part of the email, in another case: found all the same.
    admin.fill("#user-search", f"ROSA-{unique[:6]}")
    admin.click("#user-search-submit")
    row = admin.locator(f'#user-results li[data-user-id="{user_id}"]')
    expect(row).to_contain_text(name)
    expect(row).to_contain_text(f"rosa-{unique}@example.com")
    expect(admin.locator("#user-results li")).to_have_count(1)
    shot(admin, screenshots, f"18-admin-search-{tag}")

    row.locator("button.user-pick").click()
    detail = admin.locator("#user-detail")
    expect(detail).to_be_visible()
    expect(detail.locator("#detail-title")).to_have_text(name)
    expect(admin.locator("#user-balance")).to_contain_text("Balance 1,000")
    expect(admin.locator("#user-ledger tr[data-kind='welcome']")).to_have_count(1)

    admin.fill("#grant-amount", "75")
    admin.fill("#grant-reason", f"tournament {unique}")
    admin.click("#grant-submit")
    expect(admin.locator("#toast")).to_contain_text("1,075")
    expect(admin.locator("#user-ledger tr").first).to_contain_text("+75")
    expect(admin.locator("#user-balance")).to_contain_text("Balance 1,075")
    # Nothing runs off the side of a phone.
    width = admin.evaluate("() => document.documentElement.scrollWidth")
    assert width <= viewport["width"], width
    shot(admin, screenshots, f"18-admin-ledger-{tag}")

    player.reload()
    expect(player.locator("#balance-amount")).to_have_text("1,075")

    # A search that finds nobody says so; an empty one is not sent.
    admin.fill("#user-search", f"nobody-{unique}")
    admin.click("#user-search-submit")
    expect(admin.locator("#user-results")).to_contain_text("No player matches")
