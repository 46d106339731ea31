"""Hand history in the browser, on a phone (375×812) and a desktop: the wallet's hand row
opens the replay, the replay steps through the hand from my seat to the revealed result,
the fairness check runs in the page (and fails on a tampered record), and the record
downloads as the file ``kalaro verify`` reads. Dates in the wallet share one format.
axe-core finds no serious or critical WCAG 2.2 AA violation on My hands and on the
replay (a step, the result, the fairness check).

The hand itself is played with the SDK (a thread of its own: Playwright's sync API owns
this thread's event loop), then the player signs in to the browser.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgspec
import pytest

from kalaro.proto.engine import HandRecord
from kalaro.verify import verify_hand
from tests.e2e.browser.axe import assert_accessible
from tests.e2e.browser.conftest import PHONE, WIDE
from tests.e2e.browser.pages import PASSWORD, shot, sign_in
from tests.e2e.stack import Stack
from tests.e2e.tables import admin, open_table, play_hand, signed_up

expect = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed").expect

# A real hand is played first (about a minute on a busy two-core machine).
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

DATE = re.compile(r"^\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4}, \d{2}:\d{2}$")


def played_hand(stack: Stack, unique: str) -> tuple[str, str, str]:
    """Three players play one Tongits hand for 10 credits; (a player's email, table, hand)."""

    async def play() -> tuple[str, str, str]:
        host = await admin(stack)
        players = [await signed_up(stack, f"Br{i}", unique) for i in range(3)]
        live = await open_table(stack, host, players, "tongits", 10)
        await live.deal()
        result = await play_hand(live, "tongits", policy="smart", rng=random.Random(4))
        await live.close()
        for client in [host, *players]:
            await client.close()
        # A seat the hand paid or charged has a ledger entry (a zero payment has none).
        seat = next(s for s, amount in enumerate(result.payments) if amount != 0)
        return f"br{seat}-{unique}@example.com", live.table_id, result.hand_id

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, play()).result(timeout=180)


def no_sideways_scroll(page: Any) -> None:
    width = page.evaluate("() => document.scrollingElement.scrollWidth")
    wide = page.evaluate(
        """(w) => [...document.querySelectorAll('#app *')]
             .filter((e) => e.getBoundingClientRect().right > w + 1)
             .slice(0, 5).map((e) => `${e.tagName}.${e.className}#${e.id}`)""",
        page.viewport_size["width"],
    )
    assert width <= page.viewport_size["width"], f"page is {width}px wide: {wide}"


@pytest.fixture(scope="module")
def hand(stack: Stack) -> tuple[str, str, str]:
    return played_hand(stack, uuid.uuid4().hex[:10])


@pytest.mark.parametrize("tag", ["phone", "wide"])
def test_wallet_row_opens_the_replay_which_verifies(
    new_page: Any, hand: tuple[str, str, str], tag: str, screenshots: Path
) -> None:
    email, table_id, hand_id = hand
    viewport = PHONE if tag == "phone" else WIDE
    page = new_page(viewport)
    sign_in(page, email, PASSWORD)

    # The wallet: the hand's row links to its replay; every date has one format.
    page.goto("/#/wallet")
    link = page.locator("a.hand-link").first
    expect(link).to_be_visible()
    dates = page.locator("#history time, #my-requests time").all_inner_texts()
    assert dates and all(DATE.match(d) for d in dates), dates
    shot(page, screenshots, f"30-wallet-hand-link-{tag}")

    # My hands lists it with its game, table, result and credits.
    page.goto("/#/hands")
    row = page.locator(f"tr.hand-row[data-hand='{hand_id}']")
    expect(row).to_be_visible()
    assert "Tongits" in row.inner_text()
    assert DATE.match(row.locator("time").inner_text())
    no_sideways_scroll(page)
    shot(page, screenshots, f"31-my-hands-{tag}")
    assert_accessible(page, f"My hands ({tag})")

    # The replay from the wallet's link: the deal, then step by step, then the result.
    page.goto("/#/wallet")
    page.locator("a.hand-link").first.click()
    expect(page.locator("#replay-title")).to_contain_text("Tongits hand")
    expect(page.locator("#replay-counter")).to_contain_text("Step 0 of")
    expect(page.locator("#replay-move")).to_contain_text("The deal")
    assert page.locator("#replay-hand .card").count() in (12, 13)
    page.click("#replay-next")
    expect(page.locator("#replay-counter")).to_contain_text("Step 1 of")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#replay-counter")).to_contain_text("Step 2 of")
    no_sideways_scroll(page)
    shot(page, screenshots, f"32-replay-step-{tag}")
    assert_accessible(page, f"the replay, step 2 ({tag})")
    page.click("#replay-last")
    expect(page.locator("#result-panel")).to_be_visible()
    # Every hand revealed at the end: three players' rows with their cards.
    assert page.locator("#result-panel tbody tr").count() == 3
    assert page.locator("#result-panel .revealed .card").count() > 13

    # The fairness check in the page, and the file for `kalaro verify`.
    page.click("#verify-hand")
    expect(page.locator("#verify-verdict")).to_contain_text("Verified")
    assert page.locator("#verify-checks li.ok").count() == 3
    shot(page, screenshots, f"33-replay-verified-{tag}")
    assert_accessible(page, f"the replay's result, verified ({tag})")
    with page.expect_download() as download:
        page.click("#download-hand")
    assert download.value.suggested_filename == f"hand-{hand_id}.json"
    saved = Path(download.value.path()).read_bytes()
    record = msgspec.json.decode(saved, type=HandRecord)
    assert record.hand_id == hand_id and record.table_id == table_id
    assert verify_hand(record).ok


def test_a_tampered_record_fails_in_the_page(
    new_page: Any, hand: tuple[str, str, str], screenshots: Path
) -> None:
    # The server lying about the entropy: the deal no longer follows from it.
    email, _, hand_id = hand
    page = new_page(PHONE)
    sign_in(page, email, PASSWORD)

    def tamper(route: Any) -> None:
        response = route.fetch()
        body = json.loads(response.body())
        body["entropy"] = ["forged"] * len(body["entropy"])
        route.fulfill(response=response, body=json.dumps(body))

    page.route(f"**/api/hands/tongits/{hand_id}", tamper)
    page.goto(f"/#/hands/tongits/{hand_id}")
    page.click("#verify-hand")
    expect(page.locator("#verify-verdict")).to_contain_text("FAILED")
    expect(page.locator("#verify-checks li[data-check='deal']")).to_have_class(re.compile("bad"))
    shot(page, screenshots, "34-replay-tampered-phone")


def test_someone_elses_hand_is_not_shown(new_page: Any, hand: tuple[str, str, str]) -> None:
    _, _, hand_id = hand
    page = new_page(PHONE)
    sign_in(page)  # the admin did not play it
    page.goto(f"/#/hands/tongits/{hand_id}")
    expect(page.get_by_role("heading", name="Hand not found")).to_be_visible()
    page.goto(f"/#/hands/any/{hand_id}")
    expect(page.get_by_role("heading", name="Hand not found")).to_be_visible()


def test_download_all_my_hands_by_keyboard(
    new_page: Any, hand: tuple[str, str, str], screenshots: Path
) -> None:
    """My hands' "Download all my hands" is a named button reached and pressed with the
    keyboard; the file is the export: every record, each verifying."""
    email, _, hand_id = hand
    page = new_page(PHONE)
    sign_in(page, email, PASSWORD)
    page.goto("/#/hands")
    expect(page.locator(f"tr.hand-row[data-hand='{hand_id}']")).to_be_visible()
    button = page.get_by_role("button", name="Download all my hands")
    expect(button).to_be_visible()
    described = page.locator("#" + (button.get_attribute("aria-describedby") or "none"))
    expect(described).to_contain_text("kalaro verify")
    button.focus()
    with page.expect_download() as download:
        page.keyboard.press("Enter")
    assert download.value.suggested_filename == "kalaro-my-hands.json"
    records = json.loads(Path(download.value.path()).read_bytes())
    assert [r["hand_id"] for r in records] == [hand_id]
    assert verify_hand(msgspec.convert(records[0], HandRecord)).ok
    expect(page.locator("#toast")).to_contain_text("downloaded")
    no_sideways_scroll(page)
    shot(page, screenshots, "35-my-hands-download-phone")
    assert_accessible(page, "My hands, after a download (phone)")
