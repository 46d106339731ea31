"""A voided hand in the browser (issue 31): My hands says "Voided" with 0 credits, and
its replay steps through the moves played, then ends "voided, nobody paid" where a
finished hand shows its result; the fairness check still passes in the page. axe-core
finds no serious or critical WCAG 2.2 AA violation on that end.

The hand is played and cancelled with the SDK in a thread of its own (Playwright's sync
API owns this thread's event loop), as in test_history.
"""

from __future__ import annotations

import asyncio
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser.axe import assert_accessible
from tests.e2e.browser.conftest import PHONE
from tests.e2e.browser.pages import PASSWORD, shot, sign_in
from tests.e2e.stack import Stack
from tests.e2e.test_voided_hands import MOVES, voided_private_hand, wait_listed

expect = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed").expect

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def voided_hand(stack: Stack, unique: str) -> str:
    """A hand voided after ``MOVES`` moves, in history; its id."""

    async def play() -> str:
        host, players, _, hand_id = await voided_private_hand(stack, unique, "Bv")
        await wait_listed(players[0], hand_id)
        for client in [host, *players]:
            await client.close()
        return hand_id

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, play()).result(timeout=180)


def test_a_voided_hand_replays_to_nobody_paid(
    new_page: Any, stack: Stack, screenshots: Path
) -> None:
    unique = uuid.uuid4().hex[:10]
    hand_id = voided_hand(stack, unique)
    page = new_page(PHONE)
    sign_in(page, f"bv0-{unique}@example.com", PASSWORD)

    page.goto("/#/hands")
    row = page.locator(f"tr.hand-row[data-hand='{hand_id}']")
    expect(row.locator(".outcome")).to_have_text("Voided")
    expect(row.locator("td.amount")).to_have_text("0")

    page.goto(f"/#/hands/tongits/{hand_id}")
    expect(page.locator("#replay-counter")).to_contain_text(f"Step 0 of {MOVES}")
    page.click("#replay-next")
    expect(page.locator("#replay-counter")).to_contain_text(f"Step 1 of {MOVES}")
    page.click("#replay-last")
    expect(page.locator("#replay-counter")).to_contain_text(f"Voided ({MOVES + 1} steps)")
    expect(page.locator("#replay-move")).to_have_text("The end: voided, nobody paid.")
    expect(page.locator("#replay-voided")).to_contain_text("nobody paid")
    expect(page.locator("#result-panel")).to_have_count(0)
    page.click("#verify-hand")
    expect(page.locator("#verify-verdict")).to_contain_text("Verified")
    assert page.locator("#verify-checks li.ok").count() == 3
    shot(page, screenshots, "36-replay-voided-phone")
    assert_accessible(page, "the replay of a voided hand, its end (phone)")
