"""Hosting in the browser: a private table's invite link (copy, share, seen again), the
host sits without a code, a removed player is told and stays out until allowed back,
and ending the table tells everyone and takes them to the lobby."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.browser.conftest import PHONE, WIDE
from tests.e2e.browser.pages import shot, sign_up
from tests.e2e.stack import Stack
from tests.e2e.test_accounts import admin_token, bearer

expect = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed").expect

pytestmark = pytest.mark.browser

# navigator.share exists on phones, not in headless desktop Chromium: a stand-in that
# records what would have been shared.
FAKE_SHARE = "navigator.share = async (data) => { window.__shared = data; };"


def _make_host(page: Any, stack: Stack, unique: str, name: str) -> None:
    """Sign up in the page, ask for host access, have an admin approve it (over HTTP)."""
    sign_up(page, f"{name.lower()}-{unique}@example.com", name)
    page.fill("#host-note", f"hosting test {unique}")
    page.click("#host-request")
    expect(page.locator(".hosting")).to_contain_text("Request sent")
    with httpx.Client(base_url=stack.base_url, timeout=15) as http:
        admin = bearer(admin_token(http))
        pending = http.get("/api/admin/approvals?kind=host_access", headers=admin).json()[
            "approvals"
        ]
        mine = [r for r in pending if r["note"] == f"hosting test {unique}"]
        assert len(mine) == 1, pending
        decided = http.post(
            f"/api/admin/approvals/{mine[0]['approval_id']}/decision",
            json={"approve": True},
            headers=admin,
        )
        assert decided.status_code == 200, decided.text
    page.click("a[data-nav='tables']")  # the dashboard refreshes the roles
    page.wait_for_selector("#create-table")


def _notice(page: Any, kind: str) -> None:
    notice = page.locator(f"#table-notice[data-kind='{kind}']")
    expect(notice).to_be_visible()
    page.wait_for_selector("#lobby-title")  # and back at the lobby
    assert page.evaluate("() => location.hash") in ("#/", "")


def test_invite_link_remove_allow_back_and_end(
    new_page: Any, stack: Stack, unique: str, screenshots: Path
) -> None:
    host = new_page(WIDE)
    host.context.grant_permissions(["clipboard-read", "clipboard-write"])
    host.add_init_script(FAKE_SHARE)
    _make_host(host, stack, unique, "Hostess")

    host.select_option("#create-game", "tongits")
    host.fill("#create-bet", "0")
    host.check("#create-private")
    host.click("#create-submit")
    link = host.locator("#invite-link").input_value()
    match = re.search(r"#/join/([0-9a-f]+)\?code=(\S+)$", link)
    assert match, link
    table_id = match.group(1)
    host.click("#invite-copy")
    expect(host.locator("#invite-status")).to_contain_text("copied")
    assert host.evaluate("() => navigator.clipboard.readText()") == link
    host.click("#invite-share")
    assert host.evaluate("() => window.__shared.url") == link
    shot(host, screenshots, "18-invite-link-wide")
    host.click("#invite-done")
    host.wait_for_selector("#table-status")

    # Not "shown only now": the host opens the link again from the lobby, and sits at
    # their own private table without being asked for its code.
    host.goto("/#/")
    card = host.locator(f'li.table-card[data-table-id="{table_id}"]')
    card.locator("button.invite-open").click()
    expect(host.locator("#invite-link")).to_have_value(link)
    host.set_viewport_size(PHONE)
    shot(host, screenshots, "18-invite-link-phone")
    host.click("#invite-done")
    host.set_viewport_size(WIDE)
    card.get_by_role("button", name=re.compile("^Sit at")).click()
    host.wait_for_selector("#table-status")
    expect(host.locator("#dialog-input")).to_have_count(0)
    expect(host.locator('#seats li[data-seat="0"]')).to_contain_text("Hostess")

    # The guest opens the link: no code to type, to open the table or to sit.
    guest = new_page(PHONE)
    sign_up(guest, f"guest-{unique}@example.com", "Guesty")
    guest.goto(link.split(stack.base_url, 1)[-1])
    guest.wait_for_selector("#table-status")
    assert guest.evaluate("() => location.hash") == f"#/tables/{table_id}"  # code not kept there
    guest.click("#sit")
    guest.wait_for_selector("#ready")
    expect(guest.locator("#dialog-input")).to_have_count(0)

    # A spectator with the link watches.
    watcher = new_page(PHONE)
    sign_up(watcher, f"watcher-{unique}@example.com", "Watcher")
    watcher.goto(link.split(stack.base_url, 1)[-1])
    watcher.wait_for_selector("#watching")

    # The host removes the guest: the guest is told and taken to the lobby.
    host.locator('#seats li[data-seat="1"] button.remove').click()
    host.click("#dialog-confirm")
    expect(host.locator('#seats li[data-seat="1"]')).not_to_contain_text("Guesty")
    _notice(guest, "removed")
    expect(guest.locator("#table-notice")).to_contain_text("removed you")
    shot(guest, screenshots, "18-removed-notice-phone")
    expect(watcher.locator("#table-notice")).to_have_count(0)  # not about the watcher

    # They cannot sit again...
    guest.goto(f"/#/tables/{table_id}")
    guest.click("#sit")
    expect(guest.locator("#toast.error")).to_contain_text("removed you")
    expect(guest.locator("#ready")).to_have_count(0)

    # ...until the host allows them back (from the table's card in the lobby).
    host.goto("/#/")
    removed = host.locator(f'li.table-card[data-table-id="{table_id}"] .removed-players')
    expect(removed).to_contain_text("Guesty")
    shot(host, screenshots, "18-allow-back-wide")
    removed.get_by_role("button", name="Allow Guesty back").click()
    expect(removed).to_have_count(0)
    guest.click("#sit")
    guest.wait_for_selector("#ready")

    # Ending the table tells everyone (seated and watching) and takes them to the lobby.
    host.goto(f"/#/tables/{table_id}")
    host.wait_for_selector("#end-table")
    watcher.reload()
    watcher.wait_for_selector("#watching")
    host.click("#end-table")
    host.click("#dialog-confirm")
    for page in (guest, watcher, host):
        _notice(page, "ended")
    expect(guest.locator("#table-notice")).to_contain_text("host ended")
    shot(guest, screenshots, "18-table-ended-phone")
    shot(host, screenshots, "18-table-ended-wide")


CASES = """async () => {
  const { tableNotice } = await import("/views/table-notices.js");
  const seat = (u) => ({ user_id: u, display_name: u });
  const t = (v, extra) => ({ table_id: "t1", host_id: "host", version: v, status: "waiting",
                             seats: [seat("host"), seat("me"), null], removed: [], ...extra });
  const gone = { seats: [seat("host"), null, null],
                 removed: [{ user_id: "me", display_name: "me" }] };
  const kind = (n) => n && `${n.kind}:${n.leave}`;
  return {
    removed: kind(tableNotice(t(1), t(2, gone), "me")),
    removedOther: kind(tableNotice(t(1), t(2, gone), "someone")),
    leftAlone: kind(tableNotice(t(1), t(2, { seats: [seat("host"), null, null] }), "me")),
    stale: kind(tableNotice(t(2), t(2, gone), "me")),
    ended: kind(tableNotice(t(1), t(2, { status: "ended" }), "me")),
    endedHost: kind(tableNotice(t(1), t(2, { status: "ended" }), "host")),
    endedAgain: kind(tableNotice(t(2, { status: "ended" }), t(3, { status: "ended" }), "me")),
    cancelled: kind(tableNotice(t(1), t(2, { status: "cancelled" }), "me")),
    firstSight: kind(tableNotice(null, t(2, { status: "ended" }), "me")),
    otherTable: kind(tableNotice(t(1), { ...t(2, { status: "ended" }), table_id: "t2" }, "me")),
  };
}"""


def test_table_notice_rules(new_page: Any) -> None:
    """The pure rule behind the notices: only news about you, only once, only newer."""
    page = new_page(PHONE)
    page.goto("/#/how-to-play")
    got = page.evaluate(CASES)
    assert got == {
        "removed": "removed:true",
        "removedOther": None,
        "leftAlone": None,  # left by themselves: nothing to tell
        "stale": None,
        "ended": "ended:true",
        "endedHost": "ended:true",
        "endedAgain": None,
        "cancelled": "cancelled:false",
        "firstSight": None,
        "otherTable": None,
    }
