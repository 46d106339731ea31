"""The ranked pages of the web client on a phone (375×812), issue 34: Quick play in the
lobby (join, the waiting time, leave, and to the table when seated, by the `seated`
frame or the queue's answer), the leaderboard, ratings on the profile and the admins'
fair-play page. Each is used with the keyboard, checked by axe-core (no serious or
critical WCAG 2.2 AA violation) and never scrolls sideways.

The ranked service's answers are played in the browser (Playwright's request routing)
with the shapes of ``kalaro.proto.ranked``, so these pages are tested whether or not the
service runs in the stack; test_ranked_queue_browser.py plays the whole path against it.
Everything else (accounts, tables, the socket) is the real stack.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import nats
import pytest

from kalaro.bus import request
from kalaro.proto import endpoints
from kalaro.proto.lobby import OpenRankedTable
from tests.e2e.browser.axe import assert_accessible
from tests.e2e.browser.conftest import PHONE
from tests.e2e.browser.pages import PASSWORD, create_table, shot, sign_in, sign_up
from tests.e2e.browser.test_history import no_sideways_scroll
from tests.e2e.stack import Stack
from tests.e2e.tables import signed_up

expect = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed").expect

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _json(route: Any, body: Any, status: int = 200) -> None:
    route.fulfill(status=status, content_type="application/json", body=json.dumps(body))


class Queue:
    """The ranked queue as GET/POST/DELETE /api/queue answer (kalaro.proto.ranked)."""

    def __init__(self) -> None:
        self.status: dict[str, Any] = {"status": "idle"}
        self.joins: list[dict[str, Any]] = []

    def handle(self, route: Any) -> None:
        request = route.request
        if request.method == "POST":
            body = json.loads(request.post_data or "{}")
            self.joins.append(body)
            self.status = {"status": "waiting", "game": body["game"], "bet": body["bet"]}
            self.status["waited_s"] = 0.0
        elif request.method == "DELETE":
            self.status = {"status": "idle"}
        _json(route, self.status)


def test_quick_play_joins_waits_leaves_and_goes_to_the_table_when_seated(
    new_page: Any, screenshots: Path
) -> None:
    unique = uuid.uuid4().hex[:8]
    host = new_page(PHONE)
    sign_in(host)
    table_id = create_table(host, "tongits", 0)  # where the "queue" seats the player

    page = new_page(PHONE)
    queue = Queue()
    page.route(re.compile(r".*/api/queue$"), queue.handle)
    sign_up(page, f"quick-{unique}@example.com", "Quick")
    panel = page.locator("#quick-play")
    expect(panel.locator("h2")).to_have_text("Quick play (ranked)")

    # Game and stake with the keyboard, then join.
    page.locator("#queue-game").focus()
    page.keyboard.press("ArrowDown")  # Mahjong
    page.select_option("#queue-bet", "50")
    page.locator("#queue-join").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#queue-status")).to_have_text("Looking for Mahjong players at 50 credits…")
    assert queue.joins == [{"game": "mahjong", "bet": 50}]
    expect(page.locator("#queue-waited")).to_have_text(re.compile(r"^Waiting 0:0[0-9]$"))
    expect(page.locator("#queue-join")).to_be_hidden()
    expect(page.locator("#queue-game")).to_be_disabled()
    page.wait_for_timeout(2100)
    expect(page.locator("#queue-waited")).not_to_have_text("Waiting 0:00")  # it ticks
    no_sideways_scroll(page)
    shot(page, screenshots, "70-quick-play-waiting-phone")
    assert_accessible(page, "quick play, waiting (phone)")

    page.locator("#queue-leave").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#queue-status")).to_have_text("You left the queue.")
    expect(page.locator("#queue-join")).to_be_visible()
    expect(page.locator("#queue-join")).to_be_focused()

    # Joined again; the queue says seated (its next poll): the page goes to the table.
    page.click("#queue-join")
    expect(page.locator("#queue-status")).to_contain_text("Looking for")
    queue.status = {"status": "seated", "table_id": table_id, "game": "mahjong", "bet": 50}
    page.wait_for_function(f"() => location.hash === '#/tables/{table_id}'", timeout=10000)

    # The `seated` socket frame takes a player to the table from any page.
    page.goto("/#/leaderboard")
    page.wait_for_selector("#leaderboard-body[aria-busy='false']")
    page.evaluate(
        "(id) => window.kalaro.socket.emit('seated', "
        "{type: 'seated', table_id: id, game: 'tongits'})",
        table_id,
    )
    page.wait_for_function(f"() => location.hash === '#/tables/{table_id}'")
    expect(page.locator("#toast")).to_contain_text("ranked Tongits table")


def test_a_refused_join_says_why(new_page: Any) -> None:
    page = new_page(PHONE)
    page.route(
        re.compile(r".*/api/queue$"),
        lambda route: (
            _json(route, {"status": "idle"})
            if route.request.method == "GET"
            else _json(
                route,
                {
                    "error": {
                        "code": "insufficient_funds",
                        "message": "you need 80 credits available",
                    }
                },
                409,
            )
        ),
    )
    sign_up(page, f"poor-{uuid.uuid4().hex[:8]}@example.com", "Poor")
    page.click("#queue-join")
    expect(page.locator("#queue-error")).to_have_text(
        "you need 80 credits available Request credits in your Wallet."
    )
    expect(page.locator("#queue-join")).to_be_enabled()


def _row(rank: int, user_id: str, name: str, rating: int, tier: str, hands: int) -> Any:
    keys = ("rank", "user_id", "display_name", "rating", "tier", "hands")
    return dict(zip(keys, (rank, user_id, name, rating, tier, hands), strict=True))


BOARD = {
    "game": "tongits",
    "period": "all",
    "top": [
        _row(1, "u1", "Liza", 2210, "Master", 340),
        _row(2, "u2", "Jun", 1890, "Platinum", 120),
        _row(3, "u3", "Mara", 1500, "Silver", 41),
    ],
    "me": _row(140, "me", "Me", 1040, "Bronze", 6),
}


def test_the_leaderboard_shows_the_top_and_my_place(new_page: Any, screenshots: Path) -> None:
    asked: list[str] = []

    def board(route: Any) -> None:
        asked.append(route.request.url.split("?", 1)[1])
        if "period=week" in route.request.url:
            _json(route, {"game": "tongits", "period": "week", "top": [], "me": None})
        else:
            _json(route, BOARD)

    page = new_page(PHONE)
    page.route(re.compile(r".*/api/leaderboard\?.*"), board)
    sign_up(page, f"board-{uuid.uuid4().hex[:8]}@example.com", "Boarder")
    page.locator("nav a[data-nav='leaderboard']").focus()
    page.keyboard.press("Enter")
    rows = page.locator("#leaderboard tbody tr")
    expect(rows).to_have_count(4)  # the top 3, then my own row apart
    assert rows.nth(0).locator("td, th").all_inner_texts() == [
        "1",
        "Liza",
        "2,210",
        "Master",
        "340",
    ]
    expect(page.locator("#leaderboard tbody.my-row tr")).to_contain_text("Me (you)")
    expect(page.locator("#my-place")).to_have_text(
        "Your place: 140 of the Tongits players rated, at 1,040 (Bronze)."
    )
    expect(page.locator("nav a[data-nav='leaderboard']")).to_have_attribute("aria-current", "page")
    assert asked == ["game=tongits&period=all"]
    no_sideways_scroll(page)
    shot(page, screenshots, "71-leaderboard-phone")
    assert_accessible(page, "leaderboard (phone)")

    page.locator("input[name='board-period'][value='week']").focus()
    page.keyboard.press("Space")
    expect(page.locator("#leaderboard-empty")).to_have_text("Nobody is on this board yet.")
    expect(page.locator("#my-place")).to_contain_text("not on this board yet")
    assert asked[-1] == "game=tongits&period=week"
    page.locator("input[name='board-game'][value='mahjong']").check()
    page.wait_for_function("() => document.querySelector('#leaderboard-body').ariaBusy === 'false'")
    assert asked[-1] == "game=mahjong&period=week"


def test_my_ratings_on_the_profile(new_page: Any, screenshots: Path) -> None:
    keys = ("game", "rating", "mu", "sigma", "tier", "hands", "last_change")
    games = [
        dict(zip(keys, ("tongits", 1123, 29.1, 4.2, "Bronze", 12, 14), strict=True)),
        dict(zip(keys, ("mahjong", 988, 24.0, 7.9, "Bronze", 3, -9), strict=True)),
        dict(zip(keys, ("kawuxing", 1000, 25.0, 8.333, "Bronze", 0, 0), strict=True)),
    ]
    page = new_page(PHONE)
    page.route(
        re.compile(r".*/api/ratings/.*"),
        lambda route: _json(
            route, {"user_id": route.request.url.rsplit("/", 1)[1], "games": games}
        ),
    )
    sign_up(page, f"rated-{uuid.uuid4().hex[:8]}@example.com", "Rated")
    page.goto("/#/profile")
    table = page.locator("#profile-ratings")
    expect(table).to_be_visible()
    cells = table.locator("tr[data-game='tongits'] th, tr[data-game='tongits'] td")
    assert cells.all_inner_texts() == ["Tongits", "1,123\nBronze", "±168", "12", "+14"]
    expect(table.locator("tr[data-game='mahjong'] td.last-change")).to_have_text("−9")
    expect(table.locator("tr[data-game='kawuxing'] td.last-change")).to_have_text("—")
    no_sideways_scroll(page)
    shot(page, screenshots, "72-profile-ratings-phone")
    assert_accessible(page, "profile with ratings (phone)")


REPORT = {
    "findings": [
        {"kind": "sit_together", "accounts": ["u-aa", "u-bb"], "score": 7.5,
         "detail": "22 hands together out of 25; chance would give 3", "hand_ids": ["h_1", "h_2"]},
        {"kind": "shared_address", "accounts": ["u-cc", "u-dd"], "score": 1.0,
         "detail": "both signed in from 203.0.113.7", "hand_ids": []},
    ],
    "hands_read": 812,
    "audit": [{"user_id": "u-zz", "action": "warn", "reason": "chat abuse", "admin_id": "adm",
               "at_ms": 1_796_000_000_000}],
    "note": "",
}  # fmt: skip


def test_fair_play_for_admins_warns_bars_and_freezes_with_a_reason(
    new_page: Any, screenshots: Path
) -> None:
    acted: list[tuple[str, dict[str, Any]]] = []

    def act(route: Any) -> None:
        body = json.loads(route.request.post_data or "{}")
        user_id, action = route.request.url.rsplit("/", 2)[1:]
        acted.append((f"{user_id}/{action}", body))
        standing = {
            "user_id": user_id,
            "frozen": action == "freeze",
            "barred": action == "bar-ranked",
            "warnings": 0,
        }
        audit = {
            "user_id": user_id,
            "action": action,
            "reason": body["reason"],
            "admin_id": "adm",
            "at_ms": 1,
        }
        _json(route, {"standing": standing, "audit": audit})

    page = new_page(PHONE)
    page.route(re.compile(r".*/api/admin/fair-play(\?.*)?$"), lambda route: _json(route, REPORT))
    page.route(re.compile(r".*/api/admin/players/[^/]+/[a-z-]+$"), act)
    sign_in(page)  # the stack's admin
    page.goto("/#/admin")
    page.locator("#fair-play-link").focus()
    page.keyboard.press("Enter")
    findings = page.locator("#findings > li")
    expect(findings).to_have_count(2)
    expect(findings.nth(0)).to_contain_text("Sit together far more often than chance")
    expect(findings.nth(0).locator("details a").first).to_have_attribute(
        "href", "#/hands/tongits/h_1"
    )
    expect(page.locator("#audit")).to_contain_text("chat abuse")
    no_sideways_scroll(page)
    shot(page, screenshots, "73-fair-play-phone")
    assert_accessible(page, "fair play (phone)")

    # Pick an account from a finding; a reason is required.
    page.locator("button.act-on[aria-label='Act on account u-bb']").click()
    expect(page.locator("#act-reason")).to_be_focused()
    assert page.input_value("#act-user") == "u-bb"
    page.click("button.act[data-action='bar-ranked']")
    expect(page.locator("#toast")).to_have_text("Give the account and a reason.")
    assert acted == []
    page.keyboard.type("sat together 22 of 25 hands with u-aa")
    page.click("button.act[data-action='bar-ranked']")
    expect(page.locator("#act-outcome")).to_contain_text("Bar from ranked: done for u-bb")
    expect(page.locator("#act-outcome")).to_contain_text("barred from ranked")
    page.fill("#act-reason", "shared address, same person")
    page.click("button.act[data-action='freeze']")
    expect(page.locator("#act-outcome")).to_contain_text("Freeze account: done for u-bb")
    page.fill("#act-reason", "first notice")
    page.click("button.act[data-action='warn']")
    expect(page.locator("#act-outcome")).to_contain_text("Warn: done")
    assert acted == [
        ("u-bb/bar-ranked", {"reason": "sat together 22 of 25 hands with u-aa"}),
        ("u-bb/freeze", {"reason": "shared address, same person"}),
        ("u-bb/warn", {"reason": "first notice"}),
    ]


def test_fair_play_is_for_admins_only(new_page: Any) -> None:
    page = new_page(PHONE)
    sign_up(page, f"nosy-{uuid.uuid4().hex[:8]}@example.com", "Nosy")
    page.goto("/#/admin/fair-play")
    expect(page.locator("#app")).to_contain_text("This page is for admins.")


def _ranked_table(stack: Stack, unique: str) -> tuple[str, list[str]]:
    """Three new players and a ranked table the lobby opened for them (as the ranked
    service will, on ``lobby.ranked.open``): its id and the players' emails."""

    async def open_one() -> tuple[str, list[str]]:
        players = [await signed_up(stack, f"Rp{i}", unique) for i in range(3)]
        ids = tuple([(await p.me()).user_id for p in players])
        for client in players:
            await client.close()
        bus = await nats.connect(stack.nats.url)
        try:
            match = OpenRankedTable(game="tongits", bet=10, players=ids, match_id=unique)
            opened = await request(bus, endpoints.LOBBY_OPEN_RANKED, match, timeout=10)
        finally:
            await bus.close()
        return opened.table_id, [f"rp{i}-{unique}@example.com" for i in range(3)]

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, open_one()).result(timeout=120)


def test_a_ranked_table_for_its_player_and_for_a_watcher(
    new_page: Any, stack: Stack, screenshots: Path
) -> None:
    unique = uuid.uuid4().hex[:8]
    table_id, emails = _ranked_table(stack, unique)
    page = new_page(PHONE)
    sign_in(page, emails[0], PASSWORD)
    card = page.locator(f"#table-list li[data-table-id='{table_id}']")
    expect(card).to_contain_text("ranked")
    expect(card.locator("button", has_text="Sit")).to_have_count(0)  # the queue seats it
    page.goto(f"/#/tables/{table_id}")
    expect(page.locator("h1")).to_contain_text("ranked")
    expect(page.locator("#waiting")).to_have_text(
        re.compile(r"^Waiting for 3 players to tap Ready, by [\d:]{8} or the ranked table closes")
    )
    page.locator("#ready").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#ready")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#deal")).to_have_count(0)  # nobody deals a ranked table
    no_sideways_scroll(page)
    shot(page, screenshots, "77-ranked-table-waiting-phone")
    assert_accessible(page, "a ranked table, waiting (phone)")

    watcher = new_page(PHONE)
    sign_up(watcher, f"rw-{unique}@example.com", "Watcher")
    watcher.goto(f"/#/tables/{table_id}")
    expect(watcher.locator("#watching")).to_have_text("Watching, 3 moves behind")
    expect(watcher.locator("#sit")).to_have_count(0)
    assert_accessible(watcher, "a ranked table, watched (phone)")


def test_a_host_sets_and_clears_a_minimum_rating(new_page: Any, screenshots: Path) -> None:
    page = new_page(PHONE)
    sign_in(page)  # the stack's admin hosts
    page.select_option("#create-game", "tongits")
    page.fill("#create-bet", "0")
    page.fill("#create-min-rating", "1200")
    page.click("#create-submit")
    page.wait_for_selector("#table-status")
    fact = page.locator(".facts .min-rating")
    expect(fact).to_have_text("Rating 1,200+")
    page.locator("#min-rating").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#dialog-input")).to_have_value("1200")
    page.fill("#dialog-input", "1500")
    page.click("#dialog-confirm")
    expect(fact).to_have_text("Rating 1,500+")
    expect(page.locator("#min-rating")).to_have_text("Min rating 1,500")
    # The empty table's "Sit here" / "Add a bot" buttons are named with their text.
    assert_accessible(page, "a host's table with a minimum rating (phone)")
    shot(page, screenshots, "78-min-rating-host-phone")
    page.click("#min-rating")
    page.fill("#dialog-input", "0")
    page.click("#dialog-confirm")
    expect(fact).to_have_count(0)
    table_id = page.evaluate("() => location.hash.split('/').pop()")
    page.goto("/#/")
    card = page.locator(f"#table-list li[data-table-id='{table_id}']")
    expect(card).to_be_visible()
    expect(card.locator(".min-rating")).to_have_count(0)
