"""Four players at a Mahjong table play through a claim on a discard, through clicks.

Each move is one of the player's legal moves read from the page, made with real
clicks: Draw, tap a tile then Discard, Kang, Mahjong!, and the private claim prompt
(Mahjong / Kang / Pong / Chow with its tiles, or Pass). After the first claim the hand
plays on for a while; then the host cancels the table (the hand is voided).
"""

from __future__ import annotations

import os
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

CLAIM_SECONDS = 60
AFTER_CLAIM_MOVES = 6
# KALARO_BROWSER_FULL_HAND=1 plays on to the result panel (a minute or two more).
FULL_HAND = os.environ.get("KALARO_BROWSER_FULL_HAND") == "1"


def play_one(page: Any, state: dict[str, Any], progress: dict[str, Any]) -> bool:
    view = state["view"]
    legal = view["legal"]
    if not legal:
        return False
    claims = [a for a in legal if a["type"] == "claim"]
    types = {a["type"] for a in legal}
    if claims:
        if not progress["claimed"]:
            progress["claimed"] = claims[0]
            shot(page, progress["dir"], f"11-mahjong-claim-{progress['tag'](page)}")
            # The prompt shows each claim with its tiles; tap the first one offered.
            page.locator(f'#claim-prompt button[data-claim="{claims[0]["kind"]}"]').first.click()
        else:
            page.click("#pass")
    elif "pass" in types:
        page.click("#pass")
    elif "declare_win" in types:
        page.click("#mahjong")
    elif "draw" in types:
        page.click("#draw")
    else:
        tiles = [a["tile"] for a in legal if a["type"] == "discard"]
        page.locator(f'#hand button[data-tile="{tiles[-1]}"]').last.click()
        page.click("#discard")
    wait_newer(page, state["version"])
    return True


def test_four_players_play_mahjong_through_a_claim(
    new_page: Any, unique: str, screenshots: Path
) -> None:
    host = new_page(WIDE)
    sign_in(host)
    # A claim window of 30 s (not the default 10): the test answers every claim itself,
    # and on a slow machine it must never race the server's time-out across four pages.
    table_id = create_table(host, "mahjong", bet=1, timer=30)
    viewports = [WIDE, PHONE, WIDE, WIDE]
    players = []
    for i, viewport in enumerate(viewports):
        page = new_page(viewport)
        sign_up(page, f"m{i}-{unique}@example.com", ["Dado", "Elena", "Fely", "Gardo"][i])
        sit_and_ready(page, table_id)
        players.append(page)
    tag = {
        id(p): ("phone" if v == PHONE else "wide") for p, v in zip(players, viewports, strict=True)
    }
    host.click("#deal")
    for page in players:
        page.wait_for_selector(".board.mahjong")
    shot(players[0], screenshots, "10-mahjong-deal-wide")
    shot(players[1], screenshots, "10-mahjong-deal-phone")

    spectator = new_page(WIDE)
    sign_up(spectator, f"mwatch-{unique}@example.com", "Hilda")
    spectator.goto(f"/#/tables/{table_id}")
    spectator.wait_for_selector(".board.mahjong")
    seen = view_of(spectator)
    assert seen is not None and seen["seat"] is None and seen["view"]["legal"] == []
    assert all(p["hand"] is None for p in seen["view"]["players"])
    assert spectator.locator("#hand").count() == 0

    progress: dict[str, Any] = {"claimed": None, "dir": screenshots, "tag": lambda p: tag[id(p)]}
    deadline = time.monotonic() + CLAIM_SECONDS * (5 if FULL_HAND else 1)
    after = 0
    limit = 10_000 if FULL_HAND else AFTER_CLAIM_MOVES
    while after < limit and not players[0].locator("#result-panel").count():
        assert time.monotonic() < deadline, "no claim was offered in time"
        acted = False
        for page in players:
            state = view_of(page)
            if state and not state["result"] and play_one(page, state, progress):
                acted = True
                after += 1 if progress["claimed"] else 0
                break
        if not acted:
            time.sleep(0.05)
    claim = progress["claimed"]
    assert claim is not None
    # The claimed set is exposed for everyone, the spectator included.
    if claim["kind"] != "mahjong" and not players[0].locator("#result-panel").count():
        spectator.wait_for_selector(f".mj-meld.{claim['kind']}")
        shot(spectator, screenshots, "12-mahjong-spectator-wide")
        # Nothing concealed reached the spectator: no player's hand is in its view.
        assert all(p["hand"] is None for p in (view_of(spectator) or {})["view"]["players"])

    if players[0].locator("#result-panel").count():
        for page in players:
            expect(page.locator("#result-headline")).not_to_be_empty()
            assert page.locator("#result-panel tbody tr").count() == 4
        shot(players[0], screenshots, "14-mahjong-result-wide")
        shot(players[1], screenshots, "14-mahjong-result-phone")
    else:
        host.click("#cancel-table")
        host.click("#dialog-confirm")
        for page in (*players, spectator):
            expect(page.locator("#table-status")).to_have_text("Table cancelled")
        expect(players[0].locator("#felt")).to_contain_text("no credits moved")
        shot(players[1], screenshots, "13-mahjong-cancelled-phone")
