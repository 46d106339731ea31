"""axe-core (WCAG 2.2 AA: tags wcag2a, wcag2aa, wcag21a, wcag21aa, wcag22aa) on the
sign-in page, the lobby, the wallet, How to play and the table during a hand of Tongits
and of Mahjong, on a phone (375×812) and a desktop: no serious or critical violation.
The replay page is checked in test_history.py, whole phone hands in test_table_phone.py.

During a hand on the phone the header is one line and the stock (wall) and the top
discard are on the screen above the tray, also after the page scrolls; the move log
scrolls from the keyboard; the hand is played with the keyboard as with taps.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser.axe import assert_accessible
from tests.e2e.browser.conftest import PHONE, WIDE
from tests.e2e.browser.pages import sign_up, view_of
from tests.e2e.browser.test_table_phone import newer, tile_move, tongits_move

pytestmark = pytest.mark.browser
pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")

VIEWPORTS = {"phone": PHONE, "wide": WIDE}
# Moves of ours (against bots) before the checks: the log then overflows its box.
MOVES = 4
PLAY_SECONDS = 120

BOXES = """() => {
  const box = (sel) => { const el = document.querySelector(sel);
    if (!el) return null; const r = el.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height}; };
  return {h: window.innerHeight, head: box('.table-head'), tray: box('#tray'),
          topbar: getComputedStyle(document.querySelector('#topbar')).display,
          stock: box('#stock') || box('#wall'),
          discard: box('#top-discard') || box('#call-tile') || box('#last-discard')};
}"""


@pytest.mark.parametrize("tag", ["phone", "wide"])
def test_sign_in_lobby_wallet_and_help_have_no_serious_violations(
    new_page: Any, unique: str, screenshots: Path, tag: str
) -> None:
    page = new_page(VIEWPORTS[tag])
    page.goto("/#/sign-in")
    page.wait_for_selector("#auth-submit")
    assert_accessible(page, f"the sign-in page ({tag})")
    sign_up(page, f"axe-lobby-{tag}-{unique}@example.com", "Lobby")
    page.wait_for_selector("button.practice")
    # The open tables (other tests' too: full, private, practice) have loaded.
    page.wait_for_selector("#table-list[aria-busy='false']", state="attached")
    assert_accessible(page, f"the lobby ({tag})")
    page.goto("/#/wallet")
    page.wait_for_selector("#history")
    assert_accessible(page, f"the wallet ({tag})")
    page.goto("/#/how-to-play")
    page.wait_for_selector("main h1")
    assert_accessible(page, f"How to play ({tag})")


def our_turn(page: Any, deadline: float) -> dict[str, Any]:
    """Wait until this seat has a legal move (bots wait for us); the view. A hand that a
    bot ended early is followed by the next one (Ready again)."""
    while time.monotonic() < deadline:
        state = view_of(page)
        if state is None or state["status"] not in ("playing", "dealing") or state["result"]:
            if page.locator("#ready[aria-pressed='false']").count():
                page.click("#ready")
            page.wait_for_timeout(200)
            continue
        if state["view"]["legal"] and page.locator("#tray #hand").count():
            return state
        newer(page, state["version"], timeout=30000)
    raise AssertionError("no move of ours came")


def play_moves(page: Any, game: str, screenshots: Path, n: int) -> dict[str, Any]:
    deadline = time.monotonic() + PLAY_SECONDS
    seen: dict[str, Any] = {"dir": screenshots, "tag": f"{game}-axe", "reason": True}
    for _ in range(n):
        state = our_turn(page, deadline)
        (tongits_move if game == "tongits" else tile_move)(page, state["view"], seen)
        newer(page, state["version"], timeout=30000)
    return our_turn(page, deadline)


def check_phone_layout(page: Any, where: str) -> None:
    lay = page.evaluate(BOXES)
    assert lay["topbar"] == "none", f"{where}: the site's bar is shown during a hand"
    assert lay["head"]["height"] <= 48, f"{where}: the header is {lay['head']['height']} px tall"
    tray_top = lay["tray"]["top"]
    for part in ("stock", "discard"):
        r = lay[part]
        assert r is not None, f"{where}: no {part} on the board"
        assert r["top"] >= -0.5 and r["bottom"] <= tray_top + 0.5, (
            f"{where}: the {part} {r} is not in sight above the tray (top {tray_top})"
        )


def check_log_scrolls_from_the_keyboard(page: Any, where: str) -> None:
    log = page.locator("#move-log")
    size = log.evaluate("(el) => ({h: el.scrollHeight, c: el.clientHeight})")
    assert log.get_attribute("tabindex") == "0", f"{where}: the move log takes no focus"
    if size["h"] <= size["c"] + 1:
        return  # nothing to scroll (yet): focusable is all a keyboard needs
    log.evaluate("(el) => { el.scrollTop = 0; }")
    log.focus()
    page.keyboard.press("End")
    page.wait_for_function("() => document.querySelector('#move-log').scrollTop > 0")


def check_hand_by_keyboard(page: Any, where: str) -> None:
    """Arrow keys move along the hand, Space selects and unselects (aria-pressed)."""
    hand = page.locator("#tray #hand button")
    hand.first.focus()
    page.keyboard.press("ArrowRight")
    second = hand.nth(1)
    assert second.evaluate("(el) => el === document.activeElement"), f"{where}: arrows"
    name = second.evaluate("(el) => el.textContent.trim()")
    assert name, f"{where}: a card or tile without a name"
    page.keyboard.press("Space")
    page.wait_for_function(
        "() => document.activeElement.getAttribute('aria-pressed') === 'true'", timeout=5000
    )
    page.keyboard.press("Space")
    page.wait_for_function(
        "() => document.activeElement.getAttribute('aria-pressed') === 'false'", timeout=5000
    )


@pytest.mark.timeout(PLAY_SECONDS + 90)
@pytest.mark.parametrize("game", ["tongits", "mahjong"])
@pytest.mark.parametrize("tag", ["phone", "wide"])
def test_a_hand_at_the_table_has_no_serious_violations(
    new_page: Any, unique: str, screenshots: Path, game: str, tag: str
) -> None:
    page = new_page(VIEWPORTS[tag])
    sign_up(page, f"axe-{game}-{tag}-{unique}@example.com", "Axe")
    page.click(f"button.practice[data-game='{game}']")
    page.wait_for_function("() => /^#\\/tables\\/[0-9a-f]+$/.test(location.hash)")
    page.click("#ready")
    page.wait_for_function("() => window.kalaro.tableState?.frame", timeout=20000)
    play_moves(page, game, screenshots, MOVES)
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=str(screenshots / f"40-a11y-{game}-{tag}.png"))
    where = f"the {game} table during a hand ({tag})"
    if tag == "phone":
        check_phone_layout(page, where)
        # Scrolled down (to the board's end): the middle of the board sticks in sight.
        page.evaluate("() => window.scrollTo(0, 160)")
        page.screenshot(path=str(screenshots / f"40-a11y-{game}-{tag}-scrolled.png"))
        check_phone_layout(page, f"{where}, scrolled")
        page.evaluate("() => window.scrollTo(0, 0)")
    check_hand_by_keyboard(page, where)
    check_log_scrolls_from_the_keyboard(page, where)
    assert_accessible(page, where)
    # The rules, opened: still no violation (they drop over the board on a phone).
    page.click(".table-head details.rules summary")
    page.screenshot(path=str(screenshots / f"40-a11y-{game}-{tag}-rules.png"))
    assert_accessible(page, f"{where}, its rules open")
