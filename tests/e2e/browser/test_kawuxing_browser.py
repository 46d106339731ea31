"""Ka Wu Xing (3 players, tiles) is drawn by the tile-table view: hands by clicks.

The same moves as Mahjong (Draw, Discard, the private claim prompt with Pong / Kong /
Win, or Pass), plus Show Hand. The first test plays a few turns, checks the spectator
sees no concealed tile, and the host cancels the table. The second finds the table with
the lobby's Ka Wu Xing filter, plays with the smart bot's choices made by clicks until a
player can Show Hand, shows it with the Show Hand button, and checks that the other
players and the spectator see the shown tiles.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from kalaro.bots.kawuxing import SmartKaWuXing
from kalaro.games.kawuxing import View
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


def click(page: Any, action: dict[str, Any], before_show: Any = None) -> None:
    """Make ``action`` (one of the page's legal moves) with the clicks a player would.

    ``before_show()`` runs when a Show Hand tile is selected, before the button is tapped.
    """
    kind = action["type"]
    if kind == "draw":
        page.click("#draw")
    elif kind == "discard":
        page.locator(f'#hand button[data-tile="{action["tile"]}"]').last.click()
        page.click("#discard")
    elif kind == "show_hand":
        # the row of Show Hand discards selects the tile in the hand; then the button
        page.click(f'#show-tiles button[data-tile="{action["tile"]}"]')
        picked = f'#hand button[data-tile="{action["tile"]}"][aria-pressed="true"]'
        expect(page.locator(picked)).to_have_count(1)
        expect(page.locator("#show-hand")).to_be_enabled()
        if before_show is not None:
            before_show()
        page.click("#show-hand")
    elif kind == "declare_kong":
        page.click(f'#actions button[data-action="kang"][data-tile="{action["tile"]}"]')
    elif kind == "declare_win":
        page.click("#mahjong")
    elif kind == "claim":
        page.locator(f'#claim-prompt button[data-claim="{action["kind"]}"]').first.click()
    else:
        page.click("#pass")


def test_show_hand_is_seen_by_everyone(new_page: Any, unique: str, screenshots: Path) -> None:
    host = new_page(WIDE)
    sign_in(host)
    table_id = create_table(host, "kawuxing", bet=1, timer=20, ruleset="kawuxing")
    viewports = [WIDE, PHONE, WIDE]
    names = ["Luz", "Mando", "Nena"]
    host.goto("/#/")
    host.click("label.pill:has-text('Ka Wu Xing')")
    expect(host.locator(f'li.table-card[data-table-id="{table_id}"]')).to_have_count(1)
    expect(host.locator("li.table-card:not([data-game='kawuxing'])")).to_have_count(0)
    shot(host, screenshots, "16-kawuxing-lobby-filter-wide")
    host.goto(f"/#/tables/{table_id}")
    players = []
    for i, viewport in enumerate(viewports):
        page = new_page(viewport)
        sign_up(page, f"ks{i}-{unique}@example.com", names[i])
        if i == 1:  # one player finds the table through the lobby's Ka Wu Xing filter
            card = page.locator(f'li.table-card[data-table-id="{table_id}"]')
            page.click("label.pill:has-text('Mahjong')")
            expect(card).to_have_count(0)
            page.click("label.pill:has-text('Ka Wu Xing')")
            expect(card).to_have_count(1)
            expect(
                page.locator("li.table-card[data-game]:not([data-game='kawuxing'])")
            ).to_have_count(0)
            shot(page, screenshots, "16-kawuxing-lobby-filter-phone")
        sit_and_ready(page, table_id)
        players.append(page)
    host.click("#deal")
    spectator = new_page(PHONE)
    sign_up(spectator, f"kswatch-{unique}@example.com", "Osang")
    spectator.goto(f"/#/tables/{table_id}")
    for page in (*players, spectator):
        page.wait_for_selector(".board.mahjong.seats-3")

    bot, rng = SmartKaWuXing(), random.Random(4)
    shower: int | None = None
    deadline = time.monotonic() + 60
    while shower is None:
        assert time.monotonic() < deadline, "nobody could Show Hand in time"
        assert not players[0].locator("#result-panel").count(), "the hand ended before a show"
        acted = False
        for seat, page in enumerate(players):
            state = view_of(page)
            if not state or state["result"] or not state["view"]["legal"]:
                continue
            legal = state["view"]["legal"]
            shows = [a for a in legal if a["type"] == "show_hand"]
            chosen = msgspec.to_builtins(bot.choose(msgspec.convert(state["view"], View), rng))
            if shows and chosen["type"] != "show_hand":
                chosen = shows[0]  # the bot would wait; the test wants a shown hand now
            tag = "phone" if viewports[seat] == PHONE else "wide"
            click(page, chosen, lambda p=page, t=tag: shot(p, screenshots, f"16-kawuxing-show-{t}"))
            wait_newer(page, state["version"])
            if chosen["type"] == "show_hand":
                shower = seat
            acted = True
            break
        if not acted:
            time.sleep(0.05)

    # Everyone else, the spectator too, sees the shown tiles, exactly as the owner holds them.
    mine = view_of(players[shower])
    assert mine is not None
    tiles = sorted(mine["view"]["players"][shower]["hand"])
    others = [p for s, p in enumerate(players) if s != shower]
    for page in (*others, spectator):
        shown = page.locator(f'[aria-label="{names[shower]}\'s shown hand"]')
        expect(shown).to_be_visible()
        seen = view_of(page)
        assert seen is not None and seen["view"]["players"][shower]["shown"]
        assert sorted(seen["view"]["players"][shower]["hand"]) == tiles
        assert (
            sorted(shown.locator(".tile").evaluate_all("els => els.map(e => e.dataset.tile)"))
            == tiles
        )
        unshown = [p for p in seen["view"]["players"] if p["seat"] not in (shower, seen["seat"])]
        assert all(p["hand"] is None for p in unshown)
    expect(players[shower].locator(".mj-seat.bottom")).to_contain_text("Hand shown")
    phone = players[1] if shower != 1 else spectator
    wide = next(p for s, p in enumerate(players) if s != shower and viewports[s] == WIDE)
    shot(wide, screenshots, "17-kawuxing-shown-wide")
    shot(phone, screenshots, "17-kawuxing-shown-phone")

    host.click("#cancel-table")
    host.click("#dialog-confirm")
    for page in (*players, spectator):
        expect(page.locator("#table-status")).to_have_text("Table cancelled")
