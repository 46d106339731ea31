"""Browser tier: headless Chromium (Debian's ``chromium``) driven by Playwright.

Playwright's pip wheel brings its driver; the browser is the system's Chromium, so no
browser download is ever needed. Without Chromium or Playwright every browser test is
skipped with the reason printed. Screenshots go to ``test-artifacts/screenshots/``.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.stack import Stack

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
SCREENSHOTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "screenshots"
WIDE = {"width": 1280, "height": 800}
PHONE = {"width": 375, "height": 812}


def _chromium() -> str | None:
    for name in ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    reason = None
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        reason = "Playwright is not installed (pip install playwright)"
    if reason is None and _chromium() is None:
        reason = "Chromium is not installed (apt-get install chromium)"
    if reason is None:
        return
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium for one test module. Playwright's sync API runs its own event loop in
    this thread while it is open, so it must be closed again before any asyncio test
    (pytest-asyncio) runs: module scope ends it with the last browser test."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def new_page(browser: Any, stack: Stack) -> Iterator[Any]:
    """``new_page(viewport)``: a fresh browser context (its own session) at the site."""
    contexts: list[Any] = []
    errors: list[str] = []

    def make(viewport: dict[str, int] | None = None) -> Any:
        context = browser.new_context(viewport=viewport or WIDE, base_url=stack.base_url)
        context.set_default_timeout(15000)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        return page

    yield make
    for context in contexts:
        context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
