"""What a player does in the browser, as small helpers over Playwright pages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.stack import ADMIN_EMAIL, ADMIN_PASSWORD, running

PASSWORD = "correct horse battery staple"

# The page's own state of the table it shows (see web/views/table.js): the newest view
# frame, exactly as the server sent it. Tests read the legal moves from here and then
# make them with real clicks.
READ_VIEW = """() => {
  const s = window.kalaro && window.kalaro.tableState;
  if (!s || !s.frame) return null;
  return {version: s.frame.version, seat: s.frame.seat, view: s.frame.view,
          status: s.table && s.table.status, result: Boolean(s.result)};
}"""


def shot(page: Any, directory: Path, name: str) -> None:
    page.evaluate("() => window.scrollTo(0, 0)")  # the sticky header stays on top
    page.screenshot(path=str(directory / f"{name}.png"), full_page=True)


def sign_up(page: Any, email: str, name: str, *, verified: bool = True) -> None:
    """Create an account in the page; ``verified``: then open the link mailed to it and
    press Confirm, as its owner would (the welcome grant follows; bet tables open)."""
    page.goto("/#/sign-in")
    page.click("#tab-sign-up")
    page.fill("#email", email)
    page.fill("#password", PASSWORD)
    page.fill("#display-name", name)
    page.click("#auth-submit")
    page.wait_for_selector("#lobby-title")
    if verified:
        page.goto(f"/#/verify?token={running().mailed_token(email)}")
        page.click("#verify-confirm")
        page.click("#verify-next")
        page.wait_for_selector("#lobby-title")


def sign_in(page: Any, email: str = ADMIN_EMAIL, password: str = ADMIN_PASSWORD) -> None:
    page.goto("/#/sign-in")
    page.fill("#email", email)
    page.fill("#password", password)
    page.click("#auth-submit")
    page.wait_for_selector("#lobby-title")


def create_table(
    page: Any,
    game: str,
    bet: int,
    timer: int | None = None,
    ruleset: str = "kalaro",
    options: dict[str, Any] | None = None,
) -> str:
    """Create a table from the dashboard's form; returns its id (the page is at it).
    ``options``: house rules, set in the form's House rules fields (the Mahjong points
    table aside: a checkbox, a number, a choice, or empty for None)."""
    page.goto("/#/")
    page.select_option("#create-game", game)
    page.select_option("#create-ruleset", ruleset)
    page.fill("#create-bet", str(bet))
    if timer is not None:
        page.fill("#create-timer", str(timer))
    if options:
        page.click("details.advanced summary")
        for name, value in options.items():
            field = f"#house-rules [name='{name}']"
            if isinstance(value, bool):
                page.set_checked(field, value)
            elif isinstance(value, str):
                page.select_option(field, value)
            else:
                page.fill(field, "" if value is None else str(value))
    page.click("#create-submit")
    page.wait_for_function("() => /^#\\/tables\\/[0-9a-f]+$/.test(location.hash)")
    page.wait_for_selector("#table-status")
    return str(page.evaluate("() => location.hash.split('/').pop()"))


def sit_and_ready(page: Any, table_id: str) -> None:
    page.goto(f"/#/tables/{table_id}")
    page.click("#sit")
    page.wait_for_selector("#ready")
    page.click("#ready")
    page.wait_for_selector("#ready[aria-pressed='true']")


def view_of(page: Any) -> dict[str, Any] | None:
    state: dict[str, Any] | None = page.evaluate(READ_VIEW)
    return state


def wait_newer(page: Any, version: int, timeout: float = 10000) -> None:
    """Wait until the page shows a view newer than ``version`` (or the result)."""
    page.wait_for_function(
        """v => { const s = window.kalaro.tableState;
                  return s && ((s.frame && s.frame.version > v) || s.result); }""",
        arg=version,
        timeout=timeout,
    )
