"""Issue 34 end to end in Chromium at 375×812: three players join the ranked queue from
the lobby's Quick play, are seated together (the `seated` frame takes each page to the
table), tap Ready (the table deals by itself), play the hand through clicks, and then
see their new rating on their profile — the winner's risen.

The matcher never seats two accounts seen from one address at one table, and every
browser here is 127.0.0.1: the players use a gateway of their own that trusts the test
as a proxy, each page sending its own ``X-Forwarded-For``.
"""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser.axe import assert_accessible
from tests.e2e.browser.conftest import PHONE
from tests.e2e.browser.pages import shot, sign_up, view_of
from tests.e2e.browser.test_tongits_browser import HAND_SECONDS, play_one
from tests.e2e.stack import Stack

expect = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed").expect

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]

RATED_WITHIN_S = 30  # the ranked service rates a hand within seconds of its record


def test_join_the_queue_be_seated_play_and_see_the_new_rating(
    browser: Any, stack: Stack, screenshots: Path
) -> None:
    base_url = stack.start_gateway("gateway-ranked-e2e", KALARO_TRUSTED_PROXIES="127.0.0.1")
    unique = uuid.uuid4().hex[:8]
    contexts, pages, errors = [], [], []
    try:
        for i, name in enumerate(("Rina", "Sol", "Tess")):
            context = browser.new_context(
                viewport=PHONE,
                base_url=base_url,
                extra_http_headers={"X-Forwarded-For": f"198.51.100.{10 + i}"},
            )
            context.set_default_timeout(20000)
            contexts.append(context)
            page = context.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            sign_up(page, f"ranked{i}-{unique}@example.com", name)
            pages.append(page)
        for page in pages:
            page.select_option("#queue-game", "tongits")
            page.select_option("#queue-bet", "10")
            page.click("#queue-join")
            # Waiting, or (the join that completes a table) already on the way to it.
            page.wait_for_function(
                "() => document.querySelector('#queue-waited')"
                " || /^#\\/tables\\/.+/.test(location.hash)"
            )
        shot(pages[0], screenshots, "74-ranked-queue-waiting-phone")
        for page in pages:
            page.wait_for_function("() => /^#\\/tables\\/.+/.test(location.hash)", timeout=30000)
        table_ids = {p.evaluate("() => location.hash.split('/').pop()") for p in pages}
        assert len(table_ids) == 1, f"seated apart: {table_ids}"
        for page in pages:
            page.click("#ready")  # the ranked table deals by itself once all are ready
        for page in pages:
            page.wait_for_selector(".board.tongits")
        shot(pages[1], screenshots, "75-ranked-table-phone")
        assert_accessible(pages[1], "a ranked table in a hand (phone)")

        shots: dict[str, Any] = {"dir": screenshots, "tag": lambda p: "ranked-phone"}
        deadline = time.monotonic() + HAND_SECONDS
        while not pages[0].locator("#result-panel").count():
            assert time.monotonic() < deadline, f"the hand did not end in {HAND_SECONDS}s"
            acted = False
            for page in pages:
                state = view_of(page)
                if state and not state["result"] and play_one(page, state, shots):
                    acted = True
                    break
            if not acted:
                time.sleep(0.05)
        paid = [
            p.evaluate(
                """() => { const s = window.kalaro.tableState, r = s.result;
                           return r.payments[r.players.indexOf(s.me)]; }"""
            )
            for p in pages
        ]
        winner = pages[max(range(3), key=lambda i: paid[i])]
        assert max(paid) > 0

        # The new ratings, on each player's profile (rated within seconds of the end).
        for page in pages:
            page.goto("/#/profile")
            row = page.locator("#profile-ratings tr[data-game='tongits']")
            deadline = time.monotonic() + RATED_WITHIN_S
            while row.count() == 0 or row.locator("td").nth(2).inner_text() != "1":  # hands
                assert time.monotonic() < deadline, "the hand was not rated in time"
                time.sleep(1)
                page.reload()
                page.wait_for_selector("#ratings-body:not([aria-busy])")
        change = winner.locator("#profile-ratings tr[data-game='tongits'] td.last-change")
        expect(change).to_have_text(re.compile(r"^\+\d"))
        shot(winner, screenshots, "76-ranked-new-rating-phone")
        assert_accessible(winner, "the winner's new rating (phone)")
        assert not errors, f"JavaScript errors on the page: {errors}"
    finally:
        for context in contexts:
            context.close()
        stack.stop("gateway-ranked-e2e")
