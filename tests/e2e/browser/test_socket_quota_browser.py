"""On a phone, a tab refused for too many sockets says so once, and connects by itself
when the account closes one (``KALARO_WS_SOCKETS_PER_USER``, 16 on the test stack).

The account's other 16 sockets are plain WebSockets opened here with its access token.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from websockets.sync.client import ClientConnection, connect

from tests.e2e.browser.conftest import PHONE
from tests.e2e.browser.pages import sign_in
from tests.e2e.stack import Stack
from tests.e2e.tables import PASSWORD

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
expect = sync_api.expect

HELD = 16  # the default per-account limit


@pytest.fixture
def crowded(stack: Stack) -> Iterator[tuple[str, list[ClientConnection]]]:
    """A new account holding its whole share of sockets: its email, and the sockets."""
    email = f"crowded-{uuid.uuid4().hex[:8]}@example.com"
    with httpx.Client(base_url=stack.base_url) as http:
        body = {"email": email, "password": PASSWORD, "display_name": "Crowded"}
        assert http.post("/api/auth/sign-up", json=body).status_code < 300
        signed = http.post("/api/auth/sign-in", json={"email": email, "password": PASSWORD})
        token = signed.json()["access_token"]
    url = stack.base_url.replace("http://", "ws://") + "/ws"
    sockets = []
    with ExitStack() as held:
        for _ in range(HELD):
            headers = {"Authorization": f"Bearer {token}"}
            socket = held.enter_context(connect(url, additional_headers=headers))
            sockets.append(socket)
            assert '"welcome"' in str(socket.recv(timeout=10))
        yield email, sockets


def test_a_crowded_account_is_told_once_and_the_tab_connects_when_room_is_made(
    new_page: Any, crowded: tuple[str, list[ClientConnection]]
) -> None:
    email, sockets = crowded
    page = new_page(PHONE)
    sign_in(page, email, PASSWORD)
    toast = page.locator("#toast.error")
    expect(toast).to_contain_text("too many KaLaro tabs")
    # On screen once it has slid in (a 0.2 s transition), all of it, at phone width.
    page.wait_for_function(
        """() => { const r = document.getElementById('toast').getBoundingClientRect();
                   return r.top >= 0 && r.bottom <= innerHeight && r.left >= 0
                     && r.right <= innerWidth; }"""
    )
    assert page.evaluate("() => window.scrollY") == 0  # said without moving the page
    conn = page.locator("#conn")
    expect(conn).not_to_have_attribute("data-status", "open")
    # One of the account's other sockets closes: the tab's next try gets in.
    sockets.pop().close()
    expect(conn).to_have_attribute("data-status", "open", timeout=30000)
