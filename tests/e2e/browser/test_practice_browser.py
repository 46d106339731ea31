"""Practice in one click: a table of your own against bots, dealt as soon as you are ready."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser.conftest import PHONE, WIDE
from tests.e2e.browser.pages import shot, sign_up, view_of

pytestmark = pytest.mark.browser


@pytest.mark.parametrize(
    ("game", "viewport", "tag"), [("tongits", WIDE, "wide"), ("mahjong", PHONE, "phone")]
)
def test_practice_table_in_one_click(
    new_page: Any, unique: str, screenshots: Path, game: str, viewport: Any, tag: str
) -> None:
    page = new_page(viewport)
    sign_up(page, f"solo-{game}-{unique}@example.com", "Solo")
    page.click(f"button.practice[data-game='{game}']")
    page.wait_for_function("() => /^#\\/tables\\/[0-9a-f]+$/.test(location.hash)")
    page.wait_for_selector("#ready")
    seats = page.locator("#seats li.seat")
    bots = seats.filter(has_text="Bot")
    assert bots.count() == seats.count() - 1  # every other seat is a bot
    page.click("#ready")
    # A practice table deals itself once everyone is ready: the hand appears.
    page.wait_for_function(
        "() => window.kalaro.tableState && window.kalaro.tableState.frame", timeout=20000
    )
    state = view_of(page)
    assert state is not None
    assert state["seat"] == 0
    shot(page, screenshots, f"18-practice-{game}-{tag}")
    # Zero bet: the balance never moves.
    page.wait_for_function(
        "() => document.querySelector('#balance-amount')?.textContent === '1,000'"
    )
