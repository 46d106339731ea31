"""No table waits forever, in the browser: the turn clock, auto-play, away and presence.

The admin hosts a free Tongits table with a short turn clock, sits in seat 1 and then
does nothing (on a phone). Berto (a second browser, desktop) plays his turns at once;
the third seat is a bot. The admin's page shows their own countdown, counting down
to the server's deadline; Berto's page shows it on the admin's seat. When the clock
runs out the server plays for the admin and the page says so; after two time-outs in a
row the admin is marked away, and "I'm back" clears it. Berto then closes his browser:
his seat shows "Reconnecting…" and, after the stack's 2 s grace, "Offline".
"""

from __future__ import annotations

import contextlib
import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser.conftest import PHONE, WIDE
from tests.e2e.browser.pages import create_table, shot, sign_in, sign_up, view_of

pytestmark = pytest.mark.browser
playwright = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
expect = playwright.expect

CLOCK = 4  # seconds per turn
NOTICE = re.compile(r"Time ran out: we (drew and discarded|discarded|folded|passed) for you")


def _move(page: Any) -> bool:
    """Berto's move, made at once with clicks (draw; discard his last card; fold)."""
    state = view_of(page)
    if not state or state["result"] or state["status"] != "playing":
        return False
    legal = state["view"]["legal"]
    types = {a["type"] for a in legal}
    try:
        if "back" in types:
            page.click("#im-back", timeout=2000)
        elif "fold" in types:
            page.click("#fold", timeout=2000)
        elif "draw" in types:
            page.click("#draw", timeout=2000)
        elif "discard" in types:
            card = [a["card"] for a in legal if a["type"] == "discard"][-1]
            page.click(f'#hand button[data-card="{card}"][aria-pressed="false"]', timeout=2000)
            page.click("#discard", timeout=2000)
        else:
            return False
    except playwright.Error:
        return False  # the view moved on under the click (a timer): look again
    with contextlib.suppress(playwright.Error):  # a timer may have moved it already
        page.wait_for_function(
            """v => { const s = window.kalaro.tableState;
                      return !s || !s.frame || s.frame.version > v || s.result; }""",
            arg=state["version"],
            timeout=3000,
        )
    return True


class Table:
    """The admin's page (idle) and Berto's (plays at once); deals again when a hand ends."""

    def __init__(self, host: Any, berto: Any, table_id: str) -> None:
        self.host, self.berto, self.table_id = host, berto, table_id
        self.berto_plays = True

    def pump(self) -> int:
        """One step of play; 1 if it had to deal a new hand."""
        if self.berto_plays:
            _move(self.berto)
        status = self.host.evaluate("() => window.kalaro.tableState?.table?.status")
        if status == "waiting":
            self.deal_again()
            return 1
        return 0

    def deal_again(self) -> None:
        """The hand ended before the test saw everything: everyone ready, deal."""
        for page in (self.host, self.berto):
            if page.locator("#sit").count():  # an away seat sits out: sit down again
                page.click("#sit")
                page.wait_for_selector("#ready")
            if page.locator("#ready[aria-pressed='false']").count():
                page.click("#ready")
                page.wait_for_selector("#ready[aria-pressed='true']")
        self.host.click("#deal:not([disabled])", timeout=20000)
        self.host.wait_for_function(
            """() => { const s = window.kalaro.tableState;
                       return s.table.status === 'playing' && s.frame?.view?.phase !== 'over'; }"""
        )

    def until(self, selector: str, page: Any = None, timeout: float = 180) -> Any:
        """Keep the table going until ``selector`` is visible on ``page`` (the host's).

        Generous: on a loaded 2-core CI machine a hand can end (and the next be dealt)
        before the second time-out in a row. The failure says where the table was."""
        page = page or self.host
        deadline = time.monotonic() + timeout
        hands = 0
        while not page.locator(selector).is_visible():
            assert time.monotonic() < deadline, (
                f"{selector} never appeared in {timeout:.0f}s ({hands} hands dealt again); "
                f"the page's table: {_where(page)}"
            )
            hands += self.pump()
            time.sleep(0.05)
        return page.locator(selector)


def _where(page: Any) -> Any:
    """What a failure message needs of the page's table state."""
    return page.evaluate(
        """() => { const s = window.kalaro.tableState; const v = s?.frame?.view;
                   return { status: s?.table?.status, seat: s?.frame?.seat,
                            version: s?.frame?.version, phase: v?.phase, away: v?.away,
                            timeouts: v?.timeouts, to_act: v?.to_act,
                            result: Boolean(s?.result) }; }"""
    )


def _seconds(locator: Any) -> int:
    text = locator.text_content() or ""
    match = re.fullmatch(r"(\d+)s", text.strip())
    assert match, f"not a countdown: {text!r}"
    return int(match.group(1))


def _fits_one_screen(page: Any) -> None:
    """At 375x812 a move needs no scrolling: your hand, your clock (or the away banner)
    and your moves are in the tray, fixed inside the screen."""
    boxes = page.evaluate(
        """() => ['#hand', '#turn-status', '#actions'].map((sel) => {
          const r = document.querySelector(sel).getBoundingClientRect();
          return [sel, r.top, r.bottom, window.innerHeight];
        })"""
    )
    for sel, top, bottom, height in boxes:
        assert top >= 0 and bottom <= height, f"{sel} spans {top:.0f}..{bottom:.0f} of {height}"


def test_turn_clock_auto_play_away_and_presence(
    new_page: Any, unique: str, screenshots: Path
) -> None:
    host = new_page(PHONE)
    sign_in(host)
    table_id = create_table(host, "tongits", bet=0, options={"turn_seconds": CLOCK})
    # The clock is part of the table's rules, in the lobby and at the table.
    expect(host.locator(".table-head .clock-fact")).to_have_text(f"Turn clock {CLOCK} s")
    host.locator(".table-head details.rules summary").click()
    expect(host.locator(".table-head .rules-body")).to_contain_text(f"Turn clock {CLOCK} s")
    host.locator(".table-head details.rules summary").click()
    host.click("#sit")
    host.wait_for_selector("#ready")
    host.click("#ready")

    berto = new_page(WIDE)
    sign_up(berto, f"berto-clock-{unique}@example.com", "Berto")
    card = berto.locator(f'li.table-card[data-table-id="{table_id}"]')
    expect(card.locator(".clock-fact")).to_have_text(f"Turn clock {CLOCK} s")
    card.locator("button", has_text="Sit").click()
    berto.wait_for_selector("#ready")
    berto.click("#ready")
    host.click("button.add-bot")
    expect(host.locator("#seats li.seat .chip", has_text="Bot")).to_have_count(1)
    seats = host.evaluate("() => window.kalaro.tableState.table.seats")
    names = [s["display_name"] for s in seats]
    me = next(i for i, s in enumerate(seats) if not s["is_bot"] and s["display_name"] != "Berto")
    berto_seat = names.index("Berto")
    # Nobody is away or offline: no markers on any seat yet.
    expect(host.locator("#seats [data-marker]")).to_have_count(0)
    host.click("#deal:not([disabled])", timeout=20000)
    table = Table(host, berto, table_id)
    host.wait_for_selector(".board.tongits")

    # 1. My turn: a countdown from the server's deadline, counting down; Berto sees it
    #    on my seat.
    clock = table.until("#my-clock")
    first = _seconds(host.locator("#my-countdown"))
    assert 1 <= first <= CLOCK
    expect(berto.locator(f'.player-area[data-seat="{me}"] .countdown')).to_be_visible()
    # Only the countdown's text changes each second: the board is not drawn again (the
    # same element; the table patches what changed and keeps the rest).
    host.evaluate("() => { window.boardProbe = document.querySelector('.board'); }")
    expect(host.locator("#my-countdown")).to_have_text(f"{first - 1}s", timeout=2500)
    assert host.evaluate("() => document.querySelector('.board') === window.boardProbe")
    assert clock.get_attribute("data-kind") == "turn"
    _fits_one_screen(host)
    shot(host, screenshots, "24-clock-my-turn-phone")
    shot(berto, screenshots, "24-clock-their-turn-wide")

    # 2. Time runs out: the server plays for me, and the page says what it did.
    notice = table.until("#autoplay-notice")
    expect(notice).to_contain_text(NOTICE)
    shot(host, screenshots, "25-clock-auto-played-phone")

    # 3. Twice in a row: I am marked away (a banner, and a marker on my seat for all).
    #    Berto waits meanwhile, so the hand cannot end before I come back.
    banner = table.until("#away-banner")
    table.berto_plays = False
    expect(banner).to_contain_text("You are marked away — your turns are played for you")
    expect(host.locator(f'.player-area[data-seat="{me}"] [data-marker="away"]')).to_be_visible()
    expect(berto.locator(f'#seats li[data-seat="{me}"] [data-marker="away"]')).to_be_visible()
    _fits_one_screen(host)
    shot(host, screenshots, "26-clock-away-phone")
    shot(berto, screenshots, "26-clock-away-seen-wide")
    host.set_viewport_size(WIDE)
    shot(host, screenshots, "26-clock-away-wide")
    host.set_viewport_size(PHONE)
    host.click("#im-back")
    expect(host.locator("#away-banner")).to_have_count(0)
    expect(berto.locator(f'#seats li[data-seat="{me}"] [data-marker="away"]')).to_have_count(0)
    state = view_of(host)
    assert state is not None and not state["view"]["away"][me]
    table.berto_plays = True

    # 4. Berto closes his browser: his seat is reconnecting, then offline.
    berto.close()
    marker = host.locator(f'#seats li[data-seat="{berto_seat}"] [data-marker]')
    expect(marker).to_have_text("Reconnecting…", timeout=10000)
    expect(marker).to_have_text("Offline", timeout=10000)
    shot(host, screenshots, "27-clock-offline-phone")
    host.set_viewport_size(WIDE)
    shot(host, screenshots, "27-clock-offline-wide")
