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


def test_the_page_never_puts_its_token_in_the_socket_url(
    new_page: Any, unique: str, stack: Any
) -> None:
    """The page offers its token as a WebSocket subprotocol: the /ws URL it opens has no
    query at all, the gateway accepts it (its first frame is the welcome), and the
    gateway's log shows no ``token=``."""
    page = new_page(WIDE)
    sockets: list[Any] = []
    frames: list[str] = []

    def opened(ws: Any) -> None:
        sockets.append(ws)
        ws.on("framereceived", lambda payload: frames.append(str(payload)))

    page.on("websocket", opened)
    sign_up(page, f"quiet-url-{unique}@example.com", "Quiet")
    page.click("button.practice[data-game='tongits']")
    page.wait_for_selector("#ready")
    page.wait_for_function("() => true")  # let Playwright deliver the socket's events
    assert sockets, "the page opened no WebSocket"
    for ws in sockets:
        assert ws.url.endswith("/ws"), ws.url
        assert "token" not in ws.url
    assert any('"welcome"' in frame for frame in frames), frames[:3]
    assert not [line for line in stack.log("gateway").splitlines() if "/ws?" in line]
