"""Three players sit at a Tongits table and play a hand to the result, through clicks.

The admin hosts (creates the table from the dashboard and deals); three new players
sit and tap Ready; a fourth context watches. Each turn the test reads the player's
legal moves from the page (the server's own list) and makes one of them the way a
player would: select cards, tap Meld / Discard / a meld to lay off on / the discard.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser.conftest import PHONE, WIDE
from tests.e2e.browser.pages import (
    create_table,
    shot,
    sign_in,
    sign_up,
    sit_and_ready,
    view_of,
    wait_newer,
)

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed").expect

HAND_SECONDS = 90


def select(page: Any, cards: list[str]) -> None:
    for card in cards:
        page.click(f'#hand button[data-card="{card}"][aria-pressed="false"]')


def play_one(page: Any, state: dict[str, Any], shots: dict[str, Any]) -> bool:
    """Make one legal move on this page; False if it has none."""
    view = state["view"]
    legal = view["legal_actions"]
    if not legal:
        return False
    types = {a["type"] for a in legal}
    if "fold" in types:
        page.click("#fold")
    elif view["phase"] == "start":
        take = next((a for a in legal if a["type"] == "take_discard"), None)
        if take is not None:
            select(page, take["cards"])
            page.click("#top-discard")  # tapping the glowing discard takes it
        else:
            page.click("#draw")
    else:
        meld = next((a for a in legal if a["type"] == "meld"), None)
        lay_off = next((a for a in legal if a["type"] == "lay_off"), None)
        if meld is not None:
            select(page, meld["cards"])
            page.click("#meld")
        elif lay_off is not None:
            select(page, lay_off["cards"])
            page.click(f'button.meld[data-meld="{lay_off["meld_id"]}"]')
        else:
            discards = [a["card"] for a in legal if a["type"] == "discard"]
            select(page, [discards[-1]])
            if "play" not in shots:
                shots["play"] = True
                shot(page, shots["dir"], f"07-tongits-play-{shots['tag'](page)}")
            page.click("#discard")
    wait_newer(page, state["version"])
    return True


def test_three_players_play_a_tongits_hand_to_the_result(
    new_page: Any, unique: str, screenshots: Path
) -> None:
    host = new_page(WIDE)
    sign_in(host)
    table_id = create_table(host, "tongits", bet=5, timer=5)

    viewports = [WIDE, PHONE, WIDE]
    players = []
    for i, viewport in enumerate(viewports):
        page = new_page(viewport)
        sign_up(page, f"p{i}-{unique}@example.com", ["Ana", "Berto", "Cita"][i])
        sit_and_ready(page, table_id)
        players.append(page)
    tag = {id(p): ("phone" if v == PHONE else "wide") for p, v in zip(players, viewports, strict=True)}
    shot(players[0], screenshots, "06-table-waiting-wide")

    host.click("#deal")
    for page in players:
        page.wait_for_selector(".board.tongits")

    spectator = new_page(PHONE)
    sign_up(spectator, f"watcher-{unique}@example.com", "Watcher")
    spectator.goto(f"/#/tables/{table_id}")
    spectator.wait_for_selector(".board.tongits")
    expect(spectator.locator("#watching")).to_be_visible()

    # The spectator sees no concealed card: no hand, and no card of anyone's hand.
    spectator_view = view_of(spectator)
    assert spectator_view is not None and spectator_view["seat"] is None
    assert spectator_view["view"]["hand"] == [] and spectator_view["view"]["legal_actions"] == []
    assert spectator.locator("#hand").count() == 0
    concealed = {c for page in players for c in (view_of(page) or {"view": {"hand": []}})["view"]["hand"]}
    shown = set(spectator.eval_on_selector_all("[data-card]", "els => els.map(e => e.dataset.card)"))
    visible = set(spectator_view["view"]["discards"]) | {
        c for meld in spectator_view["view"]["melds"] for c in meld["cards"]
    }
    assert not (shown - visible), "the spectator's page shows a card that is not public"
    assert not (concealed & shown), "a concealed card reached the spectator's page"
    shot(spectator, screenshots, "08-tongits-spectator-phone")

    shots: dict[str, Any] = {"dir": screenshots, "tag": lambda p: tag[id(p)]}
    deadline = time.monotonic() + HAND_SECONDS
    moves = 0
    while not players[0].locator("#result-panel").count():
        assert time.monotonic() < deadline, f"the hand did not end in {HAND_SECONDS}s ({moves} moves)"
        acted = False
        for page in players:
            state = view_of(page)
            if state and not state["result"] and play_one(page, state, shots):
                moves += 1
                acted = True
                break
        if not acted:
            time.sleep(0.05)

    for page in (*players, spectator):
        panel = page.locator("#result-panel")
        panel.wait_for()
        expect(page.locator("#result-headline")).not_to_be_empty()
        # Every hand is revealed: one row per seat, with the seed to verify the deal.
        assert panel.locator("tbody tr").count() == 3
        expect(page.locator("#server-seed")).not_to_be_empty()
    # What moved adds up to zero, and each player's own line says what they paid or got.
    amounts = players[0].eval_on_selector_all("#result-panel td.amount", "els => els.map(e => e.textContent)")
    assert sum(int(a.replace("−", "-").replace("+", "").replace(",", "")) for a in amounts) == 0
    for page in players:
        expect(page.locator("#result-panel .my-amount")).to_be_visible()
        expect(page.locator("#ready")).to_contain_text("Ready for the next hand")
    shot(players[0], screenshots, "09-tongits-result-wide")
    shot(players[1], screenshots, "09-tongits-result-phone")

    # Ready for the next hand works straight from the result.
    players[0].click("#ready")
    players[0].wait_for_selector("#ready[aria-pressed='true']")
