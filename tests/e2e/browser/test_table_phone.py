"""The table on a phone: a whole practice hand of each game at 375×812 and 812×375.

Through every update of the hand, your hand and your moves (the tray) stay inside the
screen (in landscape, in a column beside the board, never over it), the page never
moves (``window.scrollY`` is the same after each update as before the move), every move
is made by tapping in the tray (never a scroll), every grey move button says why, and
the move log fills up. While the hand is on, the header is one line (the site's bar
folds away) and the middle of the board (the stock or wall, and the top discard) is on
the screen, above the tray in portrait and beside it in landscape; axe-core finds no
serious or critical WCAG 2.2 AA violation, during the hand nor on its result. Also: the
mute toggle is remembered across a reload, and Meld with three unrelated cards says that
they are not a set or run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser.axe import assert_accessible
from tests.e2e.browser.conftest import PHONE
from tests.e2e.browser.pages import sign_up, view_of

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
expect = sync_api.expect
PlaywrightTimeout = sync_api.TimeoutError

LANDSCAPE = {"width": 812, "height": 375}
HAND_SECONDS = 240

# Where the tray's parts are, against the screen (the viewport).
LAYOUT = """() => {
  const box = (sel) => { const el = document.querySelector(sel);
    if (!el) return null; const r = el.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
  const disabled = [...document.querySelectorAll('#actions button:disabled')]
    .map((b) => ({id: b.id || b.textContent, title: b.title, why: b.dataset.why || ''}));
  return {h: window.innerHeight, w: window.innerWidth, y: window.scrollY,
          tray: box('#tray'), hand: box('#hand'), actions: box('#actions'),
          felt: box('#felt'), head: box('.table-head'),
          topbar: getComputedStyle(document.querySelector('#topbar')).display,
          // The middle of the board: the stock (wall) and the top discard, where shown.
          middle: ['#stock', '#top-discard', '#wall', '#call-tile', '#last-discard']
            .map((sel) => [sel, box(sel)]).filter(([, r]) => r),
          last: box('#hand button:last-child'), disabled,
          log: document.querySelectorAll('#move-log li.log-entry').length,
          over: (() => { const s = window.kalaro.tableState; const v = s?.frame?.view;
                         const on = ['playing', 'dealing'].includes(s?.table?.status);
                         return Boolean(s?.result || !on || v?.result || v?.phase === 'over');
                       })()};
}"""


def check_layout(page: Any, where: str) -> dict[str, Any] | None:
    """Your hand and your moves are inside the screen; every grey move says why.

    None when the hand ended as we looked (its last view or the result frame landed
    between reading the state and measuring: the tray then shows the result)."""
    lay: dict[str, Any] = page.evaluate(LAYOUT)
    if lay["over"] and any(lay[part] is None for part in ("hand", "actions", "last")):
        return None
    for part in ("hand", "actions", "last"):
        r = lay[part]
        assert r is not None, f"{where}: no {part}"
        off = f"{where}: {part} {r} is off the {lay['w']}x{lay['h']} screen"
        assert r["top"] >= 0 and r["bottom"] <= lay["h"] + 0.5, off
        assert r["left"] >= -0.5 and r["right"] <= lay["w"] + 0.5, off
    for b in lay["disabled"]:
        assert b["title"], f"{where}: grey {b['id']} does not say why"
    # One line of header: the table's head alone, no taller than its back button row.
    assert lay["topbar"] == "none", f"{where}: the site's bar is shown during a hand"
    assert lay["head"]["bottom"] - lay["head"]["top"] <= 48, f"{where}: header {lay['head']}"
    names = {sel for sel, _ in lay["middle"]}
    assert {"#stock", "#wall"} & names, f"{where}: no stock or wall on the board"
    for sel, r in lay["middle"]:
        hidden = f"{where}: {sel} {r} is not in sight above the tray {lay['tray']}"
        assert r["top"] >= -0.5, hidden
        if lay["w"] > lay["h"]:
            assert r["bottom"] <= lay["h"] + 0.5 and r["right"] <= lay["tray"]["left"] + 0.5, hidden
        else:
            assert r["bottom"] <= lay["tray"]["top"] + 0.5, hidden
    if lay["w"] > lay["h"]:
        # Landscape: the tray is a column beside the board, never over it.
        felt, tray = lay["felt"], lay["tray"]
        covered = f"{where}: the tray {tray} covers the board {felt}"
        assert felt["right"] <= tray["left"] + 0.5, covered
    return lay


def newer(page: Any, version: int, timeout: float = 15000) -> None:
    page.wait_for_function(
        """v => { const s = window.kalaro.tableState;
                  return s && ((s.frame && s.frame.version > v) || s.result); }""",
        arg=version,
        timeout=timeout,
    )


def tap_cards(page: Any, cards: list[str]) -> None:
    for card in cards:
        page.click(f'#tray #hand button[data-card="{card}"]')


def unrelated(hand: list[str], melds: list[list[str]]) -> list[str] | None:
    """Three cards of three ranks that are no legal meld (not a set, not a run)."""

    def rank(c: str) -> str:
        return c[:-1]

    order = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
    legal = [sorted(m) for m in melds]
    for a in hand:
        for b in hand:
            for c in hand:
                trio = [a, b, c]
                ranks = {rank(x) for x in trio}
                if len(ranks) < 3 or sorted(trio) in legal:
                    continue
                idx = sorted(order.index(rank(x)) for x in trio)
                if len({x[-1] for x in trio}) == 1 and idx[2] - idx[0] == 2:
                    continue  # a run
                return trio
    return None


def tongits_move(page: Any, view: dict[str, Any], seen: dict[str, Any]) -> None:
    legal = view["legal"]
    types = {a["type"] for a in legal}
    if "back" in types:
        page.click("#im-back")
    elif "fold" in types:
        # The Fight/Fold window has its own short timer: it may close (the server folds
        # for us) between reading the view and tapping.
        try:
            page.click("#fold", timeout=4000)
        except PlaywrightTimeout:
            now = view_of(page)
            assert now is not None and now["view"] != view, "Fold was offered but not tappable"
    elif "draw" in types:
        page.click("#tray #draw")
    elif view["phase"] == "play":
        melds = [a["cards"] for a in legal if a["type"] == "meld"]
        if not seen.get("reason"):
            trio = unrelated(view["hand"], melds)
            if trio:
                seen["reason"] = True
                tap_cards(page, trio)
                meld = page.locator("#tray #meld")
                expect(meld).to_be_disabled()
                expect(meld).to_have_attribute("title", "These 3 cards are not a set or run")
                expect(page.locator("#why")).to_contain_text("These 3 cards are not a set or run")
                page.screenshot(path=str(seen["dir"] / f"18-table-why-{seen['tag']}.png"))
                tap_cards(page, trio)  # tap again: unselected
                expect(page.locator("#tray #hand button[aria-pressed='true']")).to_have_count(0)
        if melds:
            tap_cards(page, melds[0])
            page.click("#tray #meld")
        else:
            card = [a["card"] for a in legal if a["type"] == "discard"][-1]
            tap_cards(page, [card])
            page.click("#tray #discard")
    else:
        take = next(a for a in legal if a["type"] == "take_discard")
        tap_cards(page, take["cards"])
        page.click("#tray #take")


def tile_move(page: Any, view: dict[str, Any], seen: dict[str, Any]) -> None:
    legal = view["legal"]
    types = {a["type"] for a in legal}
    wins = [a for a in legal if a["type"] == "claim" and a["kind"] in ("mahjong", "win")]
    if "back" in types:
        page.click("#im-back")
    elif wins:
        page.locator(f'#claim-prompt button[data-claim="{wins[0]["kind"]}"]').first.click()
    elif "pass" in types:
        # The claim window may close (its short timer) between reading and tapping.
        try:
            page.click("#tray #pass", timeout=4000)
        except PlaywrightTimeout:
            now = view_of(page)
            assert now is not None and now["view"] != view, "Pass was offered but not tappable"
    elif "declare_win" in types:
        page.click("#tray #mahjong")
    elif "draw" in types:
        page.click("#tray #draw")
    else:
        tile = [a["tile"] for a in legal if a["type"] == "discard"][-1]
        page.locator(f'#tray #hand button[data-tile="{tile}"]').last.click()
        page.click("#tray #discard")


def play_practice_hand(page: Any, game: str, tag: str, screenshots: Path) -> dict[str, Any]:
    page.click(f"button.practice[data-game='{game}']")
    page.wait_for_function("() => /^#\\/tables\\/[0-9a-f]+$/.test(location.hash)")
    page.click("#ready")
    page.wait_for_function("() => window.kalaro.tableState?.frame", timeout=20000)
    page.wait_for_selector("#tray #hand")
    # Scroll a little (where the page allows): updates must leave it exactly there.
    page.evaluate("() => window.scrollTo(0, 40)")
    seen: dict[str, Any] = {"dir": screenshots, "tag": f"{game}-{tag}"}
    moves = 0
    updates = 0
    end = time.monotonic() + HAND_SECONDS
    shot_taken = False
    while time.monotonic() < end:
        state = view_of(page)
        assert state is not None
        # "dealing": the deal's first views can land before the table's status says playing.
        if state["result"] or state["status"] not in ("playing", "dealing"):
            # Over: the table is back to waiting, and the result frame is on its way.
            page.wait_for_function("() => window.kalaro.tableState.result", timeout=15000)
            break
        if page.locator("#tray #hand").count() == 0:
            # The last view (say a drawn wall) can land a moment before the result frame
            # that replaces the hand; the hand must come back or the result must arrive.
            page.wait_for_function(
                "() => window.kalaro.tableState.result || document.querySelector('#tray #hand')",
                timeout=15000,
            )
            continue
        y = page.evaluate("() => window.scrollY")
        try:
            lay = check_layout(page, f"{game} {tag} v{state['version']}")
        except AssertionError:
            # What the screen showed, for whoever reads the failure.
            page.screenshot(path=str(screenshots / f"18-table-{game}-{tag}-layout-failed.png"))
            raise
        if lay is None:  # ended as we looked: the top of the loop waits for the result
            page.wait_for_timeout(100)
            continue
        legal = state["view"]["legal"]
        if legal and state["seat"] is not None:
            if not shot_taken and moves == 2:
                shot_taken = True
                page.screenshot(path=str(screenshots / f"18-table-{game}-{tag}.png"))
                assert_accessible(page, f"the {game} table, {tag}, during a hand")
            if game == "tongits":
                tongits_move(page, state["view"], seen)
            else:
                tile_move(page, state["view"], seen)
            moves += 1
        newer(page, state["version"], timeout=30000)
        updates += 1
        after = page.evaluate("() => window.scrollY")
        assert after == y == lay["y"], f"{game} {tag}: the page moved from {y} to {after}"
    else:
        raise AssertionError(f"{game} {tag}: the hand did not end in {HAND_SECONDS} s")
    assert moves >= 1, moves
    page.wait_for_selector("#result-panel")
    page.screenshot(path=str(screenshots / f"18-table-{game}-{tag}-result.png"))
    assert_accessible(page, f"the {game} table, {tag}, showing the result")
    # The move log told the story: draws, discards and the end.
    entries = page.locator("#move-log li.log-entry")
    assert entries.count() >= moves, (entries.count(), moves)
    kinds = set(entries.evaluate_all("els => els.map(e => e.dataset.kind)"))
    assert "win" in kinds and kinds & {"draw", "discard"}, kinds
    return {"moves": moves, "updates": updates, "seen": seen}


@pytest.mark.timeout(HAND_SECONDS + 60)  # a whole hand against bots, tapped move by move
@pytest.mark.parametrize("game", ["tongits", "mahjong", "kawuxing"])
@pytest.mark.parametrize(("viewport", "tag"), [(PHONE, "portrait"), (LANDSCAPE, "landscape")])
def test_a_whole_practice_hand_never_needs_a_scroll(
    new_page: Any, unique: str, screenshots: Path, game: str, viewport: Any, tag: str
) -> None:
    page = new_page(viewport)
    sign_up(page, f"tray-{game}-{tag}-{unique}@example.com", "Tray")
    out = play_practice_hand(page, game, tag, screenshots)
    if game == "tongits" and tag == "portrait":
        assert out["seen"].get("reason"), "never had three unrelated cards to try Meld with"
    # Your turn rang (muted or not, every cue is noted).
    sounds = page.evaluate("() => (window.kalaro.sounds || []).map(s => s.name)")
    assert "turn" in sounds, sounds


def test_mute_is_remembered_across_a_reload(new_page: Any, unique: str) -> None:
    page = new_page(PHONE)
    sign_up(page, f"mute-{unique}@example.com", "Quiet")
    page.click("button.practice[data-game='tongits']")
    page.wait_for_selector("#mute")
    expect(page.locator("#mute")).to_have_attribute("aria-pressed", "false")
    page.click("#mute")
    expect(page.locator("#mute")).to_have_attribute("aria-pressed", "true")
    page.reload()
    page.wait_for_selector("#table-status")
    expect(page.locator("#mute")).to_have_attribute("aria-pressed", "true")
    page.click("#ready")
    page.wait_for_function(
        "() => (window.kalaro.sounds || []).some(s => s.name === 'turn')", timeout=20000
    )
    # Muted: the turn cue is noted but not played.
    assert page.evaluate("() => window.kalaro.sounds.every(s => s.muted)")
    page.click("#mute")
    page.reload()
    page.wait_for_selector("#mute")
    expect(page.locator("#mute")).to_have_attribute("aria-pressed", "false")


# A Draw call answered by one bot, this seat to answer: the Fight/Fold prompt in the tray,
# over a real hand's view (its own cards and board), with the most action buttons.
DRAW_CALL = """() => {
  const s = window.kalaro.tableState;
  const f = structuredClone(s.frame);
  f.version += 1000;  // newer than anything the socket holds, so it is drawn
  f.events = [];
  f.view.phase = 'answers';
  f.view.draw_call = { caller: 1, answers: ['called', 'fight', null] };
  f.view.legal = [{ type: 'fight' }, { type: 'fold' }];
  window.kalaro.tableStore.dispatch({ type: 'view', frame: f });
  return f.version;
}"""


def test_a_draw_call_prompt_fits_the_landscape_tray(
    new_page: Any, unique: str, screenshots: Path
) -> None:
    page = new_page(LANDSCAPE)
    sign_up(page, f"fight-{unique}@example.com", "Fighter")
    page.click("button.practice[data-game='tongits']")
    page.wait_for_function("() => /^#\\/tables\\/[0-9a-f]+$/.test(location.hash)")
    page.click("#ready")
    # Our turn: the bots wait for us, so nothing real replaces the made-up view below.
    page.wait_for_function(
        "() => (window.kalaro.tableState?.frame?.view?.legal || []).length > 0", timeout=30000
    )
    page.evaluate(DRAW_CALL)
    page.wait_for_selector("#fight-prompt #fight")
    page.screenshot(path=str(screenshots / "18-table-tongits-landscape-draw-call.png"))
    lay = check_layout(page, "tongits landscape, answering a Draw call")
    assert lay is not None
    fight = page.locator("#fight-prompt #fight").bounding_box()
    assert fight is not None and fight["y"] + fight["height"] <= LANDSCAPE["height"], fight
