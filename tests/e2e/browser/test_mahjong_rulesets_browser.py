"""Mahjong's ``pinoy`` ruleset in the browser, against three bots.

The create form offers the rulesets; the lobby and the table show the rules with the
points table; the felt shows the joker, and the player's jokers come first, marked; the
player plays the hand to the result with clicks, and the result names the category.
Why Mahjong is not offered is drawn from a real engine view by the page's own module.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from kalaro.games import mahjong
from tests.e2e.browser.conftest import PHONE, WIDE
from tests.e2e.browser.pages import create_table, shot, sign_in, sign_up, sit_and_ready, view_of

pytestmark = pytest.mark.browser
playwright = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
expect = playwright.expect

HAND_SECONDS = 60

# Draw a hand with the page's own Mahjong module (what the table view does per frame).
RENDER_HAND = """async (view) => {
  const m = await import("/views/table-mahjong.js");
  const felt = document.createElement("section");
  felt.className = "felt";
  const ctx = {
    table: { game: "mahjong", options: view.options }, frame: { version: 1, deadline_ms: null },
    view, seat: view.seat, selection: [], busy: false, name: (i) => `Seat ${i + 1}`,
    toggle() {}, setSelection() {}, act() {},
  };
  felt.append(m.renderHand(ctx));
  // Your tiles and moves are drawn in the tray (fixed at the bottom of a phone).
  const tray = document.createElement("section");
  tray.className = "tray playing";
  tray.append(...m.renderTray(ctx).filter(Boolean));
  document.querySelector("#app").replaceChildren(felt, tray);
}"""


def both(page: Any, screenshots: Path, name: str) -> None:
    """Screenshots at 1280x800 and 375x812."""
    shot(page, screenshots, f"{name}-wide")
    page.set_viewport_size(PHONE)
    shot(page, screenshots, f"{name}-phone")
    page.set_viewport_size(WIDE)


def play(page: Any) -> None:
    """One move of the player's, by clicks, from its legal moves (none: wait a little)."""
    state = view_of(page)
    if not state or state["result"] or not state["view"]["legal"]:
        page.wait_for_timeout(50)
        return
    legal = state["view"]["legal"]
    types = {a["type"] for a in legal}
    if {"type": "claim", "kind": "mahjong", "tiles": []} in legal:
        clicks = ['#claim-prompt button[data-claim="mahjong"]']
    elif "pass" in types:
        clicks = ["#pass"]
    elif "declare_win" in types:
        clicks = ["#mahjong"]
    elif "draw" in types:
        clicks = ["#draw"]
    else:
        clicks = ["#hand button >> nth=-1", "#discard"]  # the drawn tile (or the last)
    try:
        for selector in clicks:
            page.click(selector, timeout=2000)
    except playwright.TimeoutError:
        return  # the moment passed (a bot's claim closed the window): look again
    page.wait_for_function(
        "v => { const s = window.kalaro.tableState; return s.frame.version > v || s.result; }",
        arg=state["version"],
    )


def test_pinoy_table_against_bots(new_page: Any, unique: str, screenshots: Path) -> None:
    host = new_page(WIDE)
    sign_in(host)
    host.goto("/#/")
    host.select_option("#create-game", "mahjong")
    assert host.locator("#create-ruleset option").all_inner_texts()[:3] == [
        "KaLaro", "Joker", "Pinoy (everything on)",
    ]  # fmt: skip
    host.select_option("#create-ruleset", "pinoy")
    expect(host.locator("#ruleset-hint")).to_contain_text("turn timer")
    host.locator("#create-table").scroll_into_view_if_needed()
    host.screenshot(path=str(screenshots / "19-mahjong-create-pinoy-wide.png"))
    table_id = create_table(host, "mahjong", bet=0, ruleset="pinoy")

    player = new_page(WIDE)
    sign_up(player, f"mj-rules-{unique}@example.com", "Isko")
    card = player.locator(f'li.table-card[data-table-id="{table_id}"]')
    card.locator("details.rules summary").click()
    row = card.locator('table.points tr[data-entry="Win by Draw Joker Eye"]')
    expect(row).to_contain_text("3")
    expect(card.locator('tr[data-entry="All Honours"]')).to_be_visible()  # special hands: on
    expect(card.locator(".rules-body")).to_contain_text("turn timer 20 s")
    card.scroll_into_view_if_needed()
    both(player, screenshots, "20-mahjong-rules-lobby")

    sit_and_ready(player, table_id)
    bots = host.locator("#seats .chip", has_text="Bot")
    for n in range(1, 4):
        host.locator("button.add-bot").first.click()
        expect(bots).to_have_count(n)
    expect(host.locator("#deal")).to_be_enabled(timeout=15000)
    host.click("#deal")

    player.wait_for_selector(".board.mahjong")
    state = view_of(player)
    assert state is not None
    joker = state["view"]["joker"]
    expect(player.locator(f'#joker .tile.joker[data-tile="{joker}"]')).to_be_visible()
    hand = state["view"]["players"][state["seat"]]["hand"]
    first = player.locator("#hand button").first
    if joker in hand:  # jokers come first in the hand, marked
        expect(first).to_have_attribute("data-tile", joker)
        expect(first).to_have_class(re.compile(r"\bjoker\b"))
    expect(player.locator(".table-head details.rules summary")).to_contain_text("Pinoy")
    both(player, screenshots, "21-mahjong-joker-table")
    rules = player.locator(".table-head details.rules")
    rules.locator("summary").click()  # the same rules on the table, points included
    expect(rules.locator('tr[data-entry="Bisaklat Regular"]')).to_contain_text("8")
    shot(player, screenshots, "21-mahjong-table-rules-wide")
    rules.locator("summary").click()

    deadline = time.monotonic() + HAND_SECONDS
    while not player.locator("#result-panel").count():
        assert time.monotonic() < deadline, "the hand did not end in time"
        play(player)
    result = player.evaluate("() => window.kalaro.tableState.result.result")
    if result["winner"] is not None:
        expect(player.locator("#result-category")).to_contain_text(result["category"])
    expect(player.locator("#result-category .tile.joker")).to_be_visible()
    both(player, screenshots, "22-mahjong-category-result")

    # Why no Mahjong: a seat that passed a winning tile (and holds jokers), as the
    # engine shows it, drawn by the page's module.
    options = mahjong.options_for("pinoy")
    deals = (mahjong.new_hand(options, b"browser %d" % i, dealer=0) for i in range(500))
    state = next(d for d in deals if d.joker in d.players[1].hand)
    state = msgspec.structs.replace(state, passed_win=(False, True, False, False))
    blocked = msgspec.to_builtins(mahjong.view(state, 1))
    player.goto("/#/how-to-play")
    player.evaluate(RENDER_HAND, blocked)
    reason = mahjong.WIN_BLOCKED_REASONS["passed_win"]
    expect(player.locator("#win-blocked")).to_have_text(reason)
    expect(player.locator("#mahjong")).to_be_disabled()
    first = player.locator("#hand button").first
    expect(first).to_have_attribute("data-tile", state.joker)
    expect(first).to_have_accessible_name(re.compile(r"\(joker\)$"))
    both(player, screenshots, "23-mahjong-win-blocked")
