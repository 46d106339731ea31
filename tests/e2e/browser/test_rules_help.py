"""Rules help in the browser, at 375x812 and on desktop: How to play has a Ka Wu Xing
section and the payout table of every ruleset (the engines' own numbers, via the
generated rules-data.js), and a host sets house rules in a typed form instead of JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kalaro.games.rulesdata import rules_data
from tests.e2e.browser.conftest import PHONE, WIDE
from tests.e2e.browser.pages import shot, sign_in

pytestmark = pytest.mark.browser
playwright = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
expect = playwright.expect

DATA = rules_data()


def _no_sideways_scroll(page: Any) -> None:
    width = page.evaluate("() => document.scrollingElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"the page scrolls sideways ({width}px)"


@pytest.mark.parametrize(("size", "tag"), [(PHONE, "phone"), (WIDE, "wide")])
def test_how_to_play_has_ka_wu_xing_and_every_payout_table(
    new_page: Any, screenshots: Path, size: dict[str, int], tag: str
) -> None:
    page = new_page(size)
    sign_in(page)
    page.goto("/#/how-to-play")
    expect(page.locator("#how-kawuxing")).to_have_text("Ka Wu Xing (3 players)")
    section = page.locator("article.how")
    expect(section).to_contain_text("only after a visible kong")
    expect(section).to_contain_text("Joker Eye")
    # The holds come from the engines: classic Tongits is 17x (Table B's worst case).
    expect(section).to_contain_text("17× (Classic)")
    for details in page.locator("details.payout-ruleset").all():
        if details.get_attribute("open") is None:
            details.locator("summary").click()
    for game, entry in DATA.items():
        for name, ruleset in entry["rulesets"].items():
            table = page.locator(f"#payout-{game}-{name}")
            expect(table).to_be_visible()
            rows = ruleset["payouts"]["rows"]
            expect(table.locator("tbody tr")).to_have_count(len(rows))
            # every row reads as the engine's data says
            first, last = rows[0], rows[-1]
            expect(table.locator("tbody tr").first).to_contain_text(first[-1])
            expect(table.locator("tbody tr").last).to_contain_text(last[0])
            block = page.locator(f'.payout-block[data-game="{game}"][data-ruleset="{name}"]')
            expect(block.locator(".hold")).to_contain_text(f"{ruleset['hold']}× the bet")
    expect(page.locator("#payout-kawuxing-kawuxing-kongs tbody tr")).to_have_count(3)
    _no_sideways_scroll(page)
    shot(page, screenshots, f"rules-help-how-to-play-{tag}")


def _open_house_rules(page: Any, game: str, ruleset: str) -> Any:
    page.goto("/#/")
    page.select_option("#create-game", game)
    page.select_option("#create-ruleset", ruleset)
    page.click("details.advanced summary")
    form = page.locator("#house-rules")
    expect(form).to_contain_text(f"Filled in with the {DATA[game]['rulesets'][ruleset]['label']}")
    return form


def _created_options(page: Any) -> dict[str, Any]:
    page.wait_for_function("() => /^#\\/tables\\/[0-9a-f]+$/.test(location.hash)")
    page.wait_for_function("() => window.kalaro.tableState && window.kalaro.tableState.table")
    options: dict[str, Any] = page.evaluate("() => window.kalaro.tableState.table.options")
    return options


@pytest.mark.parametrize(("size", "tag"), [(PHONE, "phone"), (WIDE, "wide")])
def test_house_rules_are_a_typed_form(
    new_page: Any, screenshots: Path, size: dict[str, int], tag: str
) -> None:
    page = new_page(size)
    sign_in(page)
    form = _open_house_rules(page, "tongits", "classic")
    expect(page.locator("#create-options")).to_have_count(0)  # no JSON box any more
    # Each field is typed and filled in with the ruleset's values.
    expect(form.locator("#house-secret_sets")).to_be_checked()
    expect(form.locator("#house-deadwood")).to_have_value("outside_melds")
    expect(form.locator("#house-away_after_timeouts")).to_have_attribute("max", "10")
    expect(form.locator("[name='fight_seconds']")).to_have_count(0)  # the timer field above
    # Switching the game swaps the fields.
    page.select_option("#create-game", "kawuxing")
    expect(form.locator("#house-cap")).to_have_value("8")
    expect(form.locator("#house-kong_on_kong")).not_to_be_checked()
    page.select_option("#create-game", "tongits")
    page.select_option("#create-ruleset", "classic")
    expect(form.locator("#house-secret_sets")).to_be_checked()
    # A value out of bounds is refused in the page (the input's own bounds), and
    # nothing is created.
    form.locator("#house-away_after_timeouts").fill("11")
    page.click("#create-submit")
    expect(form.locator("#house-away_after_timeouts:invalid")).to_have_count(1)
    page.wait_for_timeout(300)
    assert page.evaluate("() => location.hash") in ("#/", "")
    shot(page, screenshots, f"rules-help-house-rules-error-{tag}")
    # Change a few: the table gets exactly those, on top of the ruleset.
    form.locator("#house-away_after_timeouts").fill("3")
    form.locator("#house-payments").select_option("table_a")
    form.locator("#house-sapaw_blocks_call").uncheck()
    _no_sideways_scroll(page)
    page.click("#create-submit")
    options = _created_options(page)
    assert options["ruleset"] == "classic"
    assert (options["payments"], options["away_after_timeouts"]) == ("table_a", 3)
    assert options["sapaw_blocks_call"] is False
    assert options["secret_sets"] is True and options["deadwood"] == "outside_melds"


def test_mahjong_points_and_switches_in_the_form(new_page: Any, screenshots: Path) -> None:
    page = new_page(PHONE)
    sign_in(page)
    form = _open_house_rules(page, "mahjong", "joker")
    expect(form.locator("#house-jokers")).to_be_checked()
    expect(form.locator("#house-robbing_the_kang")).not_to_be_checked()
    form.locator("#house-robbing_the_kang").check()
    form.locator("details.house-points-table summary").click()
    entry = form.locator("input[data-entry='Win by Draw Regular']")
    expect(entry).to_have_value("2")
    entry.fill("3")
    form.locator("details.house-payouts summary").click()
    expect(form.locator("#payout-mahjong-joker")).to_be_visible()
    shot(page, screenshots, "rules-help-house-rules-mahjong-phone")
    page.set_viewport_size(WIDE)
    shot(page, screenshots, "rules-help-house-rules-mahjong-wide")
    page.click("#create-submit")
    options = _created_options(page)
    assert options["ruleset"] == "joker" and options["robbing_the_kang"] is True
    assert options["points"]["Win by Draw Regular"] == 3
    assert options["points"]["Win by Discard Regular"] == 2  # untouched entries stay
