"""The profile page on a phone (375×812): reached from the header with the keyboard, it
shows the player's stats of a hand they played (the numbers the API gives, formatted as
the client formats credits), and a player's name in a replay opens that player's profile.
axe-core finds no serious or critical WCAG 2.2 AA violation; nothing scrolls sideways."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser.axe import assert_accessible
from tests.e2e.browser.conftest import PHONE
from tests.e2e.browser.pages import PASSWORD, shot, sign_in
from tests.e2e.browser.test_history import no_sideways_scroll, played_hand
from tests.e2e.stack import Stack

expect = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed").expect

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def hand(stack: Stack) -> tuple[str, str, str]:
    return played_hand(stack, uuid.uuid4().hex[:10])


def _signed(n: int) -> str:
    """As web/dom.js ``signed`` writes it (a real minus sign, thousands commas)."""
    return f"+{n:,}" if n > 0 else f"−{-n:,}" if n < 0 else "0"


def test_profile_from_the_header_and_from_a_replay(
    new_page: Any, hand: tuple[str, str, str], screenshots: Path
) -> None:
    email, _table_id, hand_id = hand
    page = new_page(PHONE)
    sign_in(page, email, PASSWORD)

    # The header's Profile link, with the keyboard.
    page.locator("nav a[data-nav='profile']").focus()
    page.keyboard.press("Enter")
    row = page.locator("#profile-games tr[data-game='tongits']")
    expect(row).to_be_visible(timeout=30000)  # history stores the hand within moments
    expect(page.locator("#profile-title")).to_contain_text("(you)")
    expect(page.locator("nav a[data-nav='profile']")).to_have_attribute("aria-current", "page")
    # What the API says, asked through the page's own client (same session).
    stats = page.evaluate(
        """async () => {
             const api = await import('/api.js');
             return api.call('GET', `/api/players/${api.currentUser().user_id}/stats`);
           }"""
    )
    [tongits] = stats["games"]
    cells = row.locator("td").all_inner_texts()
    assert cells[0] == "1"
    assert cells[1] == f"{tongits['won']:,}"
    assert cells[2] == _signed(tongits["net"])
    assert cells[3] == f"{tongits['biggest_win']:,}"
    no_sideways_scroll(page)
    shot(page, screenshots, "60-profile-phone")
    assert_accessible(page, "my profile (phone)")

    # Another player's name in the replay opens their profile.
    page.goto(f"/#/hands/tongits/{hand_id}")
    other = page.locator(".replay-seat:not(.me) a.player-link").first
    expect(other).to_be_visible()
    name = other.inner_text()
    other.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#profile-title")).to_have_text(name)
    expect(page.locator("#profile-games tr[data-game='tongits'] td").first).to_have_text("1")
    no_sideways_scroll(page)
    shot(page, screenshots, "61-profile-of-another-phone")
    assert_accessible(page, "another player's profile (phone)")
