"""Ka Wu Xing (3 players, tiles) is drawn by the tile-table view: a short hand by clicks.

The same moves as Mahjong (Draw, Discard, the private claim prompt with Pong / Kong /
Win, or Pass); the test plays a few turns, checks the spectator sees no concealed
tile, and the host cancels the table.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser.conftest import PHONE, WIDE
from tests.e2e.browser.pages import create_table, shot, sign_in, sign_up, sit_and_ready, view_of
from tests.e2e.browser.test_mahjong_browser import play_one

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed").expect

MOVES = 12


def test_three_players_play_ka_wu_xing_turns(new_page: Any, unique: str, screenshots: Path) -> None:
    host = new_page(WIDE)
    sign_in(host)
    table_id = create_table(host, "kawuxing", bet=1, timer=5, ruleset="kawuxing")
    viewports = [WIDE, PHONE, WIDE]
    players = []
    for i, viewport in enumerate(viewports):
        page = new_page(viewport)
        sign_up(page, f"k{i}-{unique}@example.com", ["Ising", "Jojo", "Kiko"][i])
        sit_and_ready(page, table_id)
        players.append(page)
    host.click("#deal")
    for page in players:
        page.wait_for_selector(".board.mahjong.seats-3")

    spectator = new_page(PHONE)
    sign_up(spectator, f"kwatch-{unique}@example.com", "Lito")
    spectator.goto(f"/#/tables/{table_id}")
    spectator.wait_for_selector(".board.mahjong.seats-3")
    seen = view_of(spectator)
    assert seen is not None and seen["seat"] is None and seen["view"]["legal"] == []
    assert spectator.locator("#hand").count() == 0

    tag = {
        id(p): ("phone" if v == PHONE else "wide") for p, v in zip(players, viewports, strict=True)
    }
    progress: dict[str, Any] = {"claimed": None, "dir": screenshots, "tag": lambda p: tag[id(p)]}
    moves = 0
    deadline = time.monotonic() + 45
    while moves < MOVES and not players[0].locator("#result-panel").count():
        assert time.monotonic() < deadline, f"only {moves} moves in 45s"
        acted = False
        for page in players:
            state = view_of(page)
            if state and not state["result"] and play_one(page, state, progress):
                moves += 1
                acted = True
                break
        if not acted:
            time.sleep(0.05)
    shot(players[0], screenshots, "15-kawuxing-play-wide")
    shot(players[1], screenshots, "15-kawuxing-play-phone")

    if not players[0].locator("#result-panel").count():
        host.click("#cancel-table")
        host.click("#dialog-confirm")
        for page in (*players, spectator):
            expect(page.locator("#table-status")).to_have_text("Table cancelled")
