"""Three players sit at a Tongits table and play a hand to the result, through clicks.

The admin hosts (creates the table from the dashboard and deals); three new players
sit and tap Ready; a fourth context watches. Each turn the test reads the player's
legal moves from the page (the server's own list) and makes one of them the way a
player would: select cards, tap Meld / Discard / a meld to lay off on / the discard.
"""

from __future__ import annotations

import re
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


def sit_from_dashboard(page: Any, table_id: str, screenshots: Path) -> None:
    """Find the table in the lobby (the game filter works), sit, and tap I am ready."""
    card = page.locator(f'li.table-card[data-table-id="{table_id}"]')
    page.click("label.pill:has-text('Mahjong')")
    expect(card).to_have_count(0)
    page.click("label.pill:has-text('Tongits')")
    expect(card).to_have_count(1)
    expect(card).to_contain_text("Bet 5")
    expect(card).to_contain_text("0/3 seated")
    shot(page, screenshots, "05-dashboard-tables-wide")
    card.locator("button", has_text="Sit").click()
    page.wait_for_selector("#ready")
    page.click("#ready")
    page.wait_for_selector("#ready[aria-pressed='true']")


def select_with_keyboard(page: Any, card: str) -> None:
    """Arrow keys walk the hand, Space selects: the card goes up, Discard lights up."""
    cards = page.eval_on_selector_all("#hand button", "els => els.map(e => e.dataset.card)")
    page.focus("#hand button >> nth=0")
    for _ in range(cards.index(card)):
        page.keyboard.press("ArrowRight")
    assert page.evaluate("() => document.activeElement.dataset.card") == card
    page.keyboard.press("Space")
    expect(page.locator(f'#hand button[data-card="{card}"]')).to_have_attribute(
        "aria-pressed", "true"
    )
    expect(page.locator("#discard")).to_be_enabled()


def play_one(page: Any, state: dict[str, Any], shots: dict[str, Any]) -> bool:
    """Make one legal move on this page; False if it has none."""
    view = state["view"]
    legal = view["legal"]
    if not legal:
        return False
    types = {a["type"] for a in legal}
    if "fold" in types:
        # The Fight/Fold prompt, with its countdown: the first answer fights.
        expect(page.locator("#fight-prompt .countdown")).to_have_text(re.compile(r"^\d+s$"))
        if not shots.get("fought"):
            shots["fought"] = True
            shot(page, shots["dir"], f"08-tongits-fight-or-fold-{shots['tag'](page)}")
            page.click("#fight")
        else:
            page.click("#fold")
    elif "call_draw" in types and not shots.get("called"):
        shots["called"] = True  # once opened, call Draw at the start of a turn
        page.click("#call-draw")
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
            if "keyboard" not in shots:
                shots["keyboard"] = True
                select_with_keyboard(page, discards[-1])
            else:
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
    host.wait_for_selector("#create-table")
    shot(host, screenshots, "04-dashboard-host-wide")
    table_id = create_table(host, "tongits", bet=5, timer=5)

    viewports = [WIDE, PHONE, WIDE]
    players = []
    for i, viewport in enumerate(viewports):
        page = new_page(viewport)
        sign_up(page, f"p{i}-{unique}@example.com", ["Ana", "Berto", "Cita"][i])
        if i == 0:
            sit_from_dashboard(page, table_id, screenshots)
        else:
            sit_and_ready(page, table_id)
        players.append(page)
    tag = {
        id(p): ("phone" if v == PHONE else "wide") for p, v in zip(players, viewports, strict=True)
    }
    shot(players[0], screenshots, "06-table-waiting-wide")

    host.click("#deal")
    for page in players:
        page.wait_for_selector(".board.tongits")
    shot(players[1], screenshots, "07-tongits-deal-phone")

    spectator = new_page(PHONE)
    sign_up(spectator, f"watcher-{unique}@example.com", "Watcher")
    spectator.goto(f"/#/tables/{table_id}")
    spectator.wait_for_selector(".board.tongits")
    expect(spectator.locator("#watching")).to_be_visible()

    # The spectator sees no concealed card: no hand, and no card of anyone's hand.
    spectator_view = view_of(spectator)
    assert spectator_view is not None and spectator_view["seat"] is None
    assert spectator_view["view"]["hand"] == [] and spectator_view["view"]["legal"] == []
    assert spectator.locator("#hand").count() == 0
    concealed = {
        c for page in players for c in (view_of(page) or {"view": {"hand": []}})["view"]["hand"]
    }
    shown = set(
        spectator.eval_on_selector_all("[data-card]", "els => els.map(e => e.dataset.card)")
    )
    visible = set(spectator_view["view"]["discards"]) | {
        c for meld in spectator_view["view"]["melds"] for c in meld["cards"]
    }
    assert not (shown - visible), "the spectator's page shows a card that is not public"
    assert not (concealed & shown), "a concealed card reached the spectator's page"
    shot(spectator, screenshots, "08-tongits-spectator-phone")

    # Chat reaches everyone, the spectator too, as text (never as markup).
    players[1].fill("#chat-input", "<b>Good luck</b> everyone!")
    players[1].press("#chat-input", "Enter")
    for page in (players[0], spectator):
        expect(page.locator("#chat-list")).to_contain_text("<b>Good luck</b> everyone!")
        assert page.locator("#chat-list b").count() == 0

    # Cita flags "leave after this hand": she keeps playing, then her seat empties.
    players[2].click("#leave-after")
    expect(players[2].locator("#leave-after")).to_have_attribute("aria-pressed", "true")
    expect(players[0].locator('#seats li[data-seat="2"]')).to_contain_text(
        "Leaving after this hand"
    )

    shots: dict[str, Any] = {"dir": screenshots, "tag": lambda p: tag[id(p)]}
    dropped = reloaded = False
    deadline = time.monotonic() + HAND_SECONDS
    moves = 0
    while not players[0].locator("#result-panel").count():
        assert time.monotonic() < deadline, (
            f"the hand did not end in {HAND_SECONDS}s ({moves} moves)"
        )
        if moves == 4 and not dropped:
            # A dropped connection heals by itself: reconnect, re-subscribe, fresh view.
            dropped = True
            players[0].evaluate("() => window.kalaro.socket.drop()")
            players[0].wait_for_function("() => window.kalaro.socket.status === 'reconnecting'")
            players[0].wait_for_function("() => window.kalaro.socket.status === 'open'")
        if moves == 2 and not reloaded:
            # A reload mid-hand keeps the session (per-tab storage) and the seat.
            reloaded = True
            players[1].reload()
            players[1].wait_for_selector(".board.tongits")
            players[1].wait_for_selector("#tray #hand")
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
    amounts = players[0].eval_on_selector_all(
        "#result-panel td.amount", "els => els.map(e => e.textContent)"
    )
    assert sum(int(a.replace("−", "-").replace("+", "").replace(",", "")) for a in amounts) == 0
    for page in players:
        expect(page.locator("#result-panel .my-amount")).to_be_visible()
    for page in players[:2]:
        expect(page.locator("#ready")).to_contain_text("Ready for the next hand")
    shot(players[0], screenshots, "09-tongits-result-wide")
    shot(players[1], screenshots, "09-tongits-result-phone")
    expect(players[0].locator('#seats li[data-seat="2"]')).to_contain_text("Empty seat")
    expect(players[2].locator("#sit")).to_be_visible()  # back to watching

    # Ready for the next hand works straight from the result, and can be undone there.
    expect(players[0].locator("#result-ready")).to_be_enabled()
    players[0].click("#result-ready")
    players[0].wait_for_selector("#ready[aria-pressed='true']")
    expect(players[0].locator("#result-ready")).to_have_attribute("aria-pressed", "true")
    expect(players[0].locator("#result-ready")).to_be_enabled()

    # Host controls between hands: chat off, remove a player, end the table.
    host.goto(f"/#/tables/{table_id}")
    host.click("#chat-toggle")
    expect(players[0].locator("#chat-input")).to_be_disabled()
    host.click('#seats li[data-seat="1"] button.remove')
    host.click("#dialog-confirm")
    # The removed player is told, and taken back to the lobby (issue 18).
    expect(players[1].locator("#table-notice[data-kind='removed']")).to_be_visible()
    players[1].wait_for_selector("#lobby-title")
    host.click("#end-table")
    host.click("#dialog-confirm")
    # Everyone still at the table, seated or watching, is told and taken to the lobby.
    for page in (players[0], players[2], spectator, host):
        expect(page.locator("#table-notice[data-kind='ended']")).to_be_visible()
        page.wait_for_selector("#lobby-title")
