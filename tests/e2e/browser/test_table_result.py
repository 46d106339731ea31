"""The result panel and tiles, rendered by the page's own modules in the browser.

- A winning tile hand is grouped into its sets and pair (``web/views/table-sets.js``:
  the result carries no decomposition, so the page finds one; checked here on known
  hands, with jokers and Seven Pairs, and on hands that do not split).
- Neighbouring melds in the result stand apart (a visible gap between groups).
- The White Dragon in your own hand has a face of a sane size (it was a 6 px bar).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser.conftest import PHONE, WIDE

pytestmark = pytest.mark.browser


def tiles(text: str) -> list[str]:
    return text.split(" ")


DECOMPOSE = """async (cases) => {
  const { decompose } = await import('/views/table-sets.js');
  return cases.map(([tiles, joker]) => {
    const groups = decompose(tiles, { joker });
    return groups && groups.map((g) => g.kind + ':' + g.tiles.join(' '));
  });
}"""


def test_a_winning_hand_splits_into_sets_and_a_pair(new_page: Any) -> None:
    page = new_page(WIDE)
    page.goto("/")
    page.wait_for_selector("body")
    mahjong17 = tiles("1m 2m 3m 4m 5m 6m 7p 7p 7p 2s 3s 4s 5z 5z 5z 9s 9s")
    kawuxing14 = tiles("2p 3p 4p 4p 5p 6p 1s 1s 1s 6z 6z 6z 7z 7z")
    seven_pairs = tiles("1m 1m 3p 3p 4s 4s 6s 6s 1z 1z 5z 5z 9m 9m")
    with_joker = tiles("1m 2m 8p 4m 5m 6m 7p 7p 7p 2s 3s 4s 5z 5z 5z 9s 9s")  # 8p is wild
    no_split = tiles("1m 4m 7m 2p 5p 8p 3s 6s 9s 1z 2z 3z 4z 5z")
    out = page.evaluate(
        DECOMPOSE,
        [
            [mahjong17, None],
            [kawuxing14, None],
            [seven_pairs, None],
            [with_joker, "8p"],
            [no_split, None],
        ],
    )
    assert out[0] == [
        "chow:1m 2m 3m",
        "chow:4m 5m 6m",
        "pong:7p 7p 7p",
        "chow:2s 3s 4s",
        "pong:5z 5z 5z",
        "pair:9s 9s",
    ]
    assert out[1] is not None and len(out[1]) == 5 and out[1][-1] == "pair:7z 7z"
    assert sorted(k.split(":")[0] for k in out[1]) == ["chow", "chow", "pair", "pong", "pong"]
    assert out[2] is not None and len(out[2]) == 7 and all(g.startswith("pair:") for g in out[2])
    assert out[3] is not None and "chow:1m 2m 8p" in out[3], out[3]  # the joker fills 3m
    assert out[4] is None


RENDER = """async ({ frame, game }) => {
  const { renderResult } = await import('/views/result.js');
  const box = document.createElement('section');
  box.className = 'result-box';
  box.id = 'result-test';
  const name = (u, s) => 'P' + (s + 1);
  box.append(renderResult(frame, { game, name, me: 'u0', onClose: () => {} }));
  document.querySelector('main').replaceChildren(box);
  // From the last card/tile of one group to the first of the next (on the same line).
  const gaps = (sel) => {
    const els = [...box.querySelectorAll(sel)];
    const out = [];
    for (let i = 1; i < els.length; i += 1) {
      const a = els[i - 1].lastElementChild.getBoundingClientRect();
      const b = els[i].firstElementChild.getBoundingClientRect();
      if (Math.abs(a.top - b.top) < 2) out.push(b.left - a.right);
    }
    return out;
  };
  return {
    groups: [...box.querySelectorAll('tr[data-seat="1"] .group.concealed')].map((g) =>
      g.dataset.kind + ':' + [...g.querySelectorAll('.tile')].map((t) => t.dataset.tile).join(' ')),
    exposed: box.querySelectorAll('tr[data-seat="1"] .group.exposed').length,
    tileGaps: gaps('tr[data-seat="1"] .group'),
    meldGaps: gaps('tr[data-seat="0"] .meld-mini'),
  };
}"""


def mahjong_frame() -> dict[str, Any]:
    concealed = tiles("1m 2m 3m 4m 5m 6m 2s 3s 4s 9s 9s")
    pong = {"kind": "pong", "tiles": ["7p", "7p", "7p"]}
    kang = {"kind": "kang", "tiles": ["5z", "5z", "5z", "5z"]}
    hands = [
        {
            "seat": 0,
            "hand": tiles("1p 2p 5p 8p 9p 1s 1s 3z 3z 4z 6z 7z 7z 8m 9m 9m"),
            "melds": [],
            "flowers": ["2f"],
        },
        {"seat": 1, "hand": concealed, "melds": [pong, kang], "flowers": []},
        {
            "seat": 2,
            "hand": ["2z"] * 3 + tiles("1m 1m 2p 3p 4p 5s 6s 8s 8s 9p"),
            "melds": [],
            "flowers": [],
        },
        {
            "seat": 3,
            "hand": tiles("3m 3m 4p 4p 5p 6p 7s 7s 8s 2z 2z 1z 1z 1z 4z 4z"),
            "melds": [],
            "flowers": [],
        },
    ]
    result = {
        "ending": "discard", "winner": 1, "discarder": 0, "winning_tile": "9s",
        "payments": [-2, 4, -1, -1], "hands": hands, "dealer": 0, "next_dealer": 1,
        "charges": [
            {"payer": 0, "items": [{"name": "discarder", "units": 2}], "total": 2, "units": 2}
        ],
    }  # fmt: skip
    return {
        "table_id": "t", "hand_id": "h", "result": result, "payments": [-2, 4, -1, -1],
        "players": ["u0", "u1", "u2", "u3"], "seed_commitment": "00", "server_seed": "11",
        "entropy": ["", "", "", ""],
    }  # fmt: skip


def tongits_frame() -> dict[str, Any]:
    melds = [
        {"id": 1, "owner": 0, "kind": "set", "cards": ["7S", "7H", "7D"]},
        {"id": 2, "owner": 0, "kind": "run", "cards": ["3C", "4C", "5C"]},
        {"id": 3, "owner": 0, "kind": "run", "cards": ["9H", "10H", "JH"]},
    ]
    result = {
        "ending": "tongits", "winners": [0], "payments": [2, -1, -1], "deadwood": [0, 20, 30],
        "burned": [False, False, False], "hands": [[], ["2S", "KD"], ["QS", "QH"]], "melds": melds,
        "next_dealer": 0, "draw_call": None,
    }  # fmt: skip
    return {
        "table_id": "t", "hand_id": "h", "result": result, "payments": [2, -1, -1],
        "players": ["u0", "u1", "u2"], "seed_commitment": "00", "server_seed": "11",
        "entropy": ["", "", ""],
    }  # fmt: skip


@pytest.mark.parametrize(("viewport", "tag"), [(PHONE, "phone"), (WIDE, "wide")])
def test_result_groups_melds_and_sets_apart(
    new_page: Any, screenshots: Path, viewport: Any, tag: str
) -> None:
    page = new_page(viewport)
    page.goto("/")
    page.wait_for_selector("main")
    mj = page.evaluate(RENDER, {"frame": mahjong_frame(), "game": "mahjong"})
    # The winner's concealed tiles, grouped: chow, chow, chow, pair; and two exposed melds.
    assert mj["groups"] == ["chow:1m 2m 3m", "chow:4m 5m 6m", "chow:2s 3s 4s", "pair:9s 9s"]
    assert mj["exposed"] == 2
    assert mj["tileGaps"] and min(mj["tileGaps"]) >= 4, mj["tileGaps"]
    page.screenshot(path=str(screenshots / f"18-result-mahjong-grouped-{tag}.png"), full_page=True)
    tg = page.evaluate(RENDER, {"frame": tongits_frame(), "game": "tongits"})
    # Neighbouring melds stand apart: a clear gap between them, never an overlap.
    assert tg["meldGaps"] and min(tg["meldGaps"]) >= 4, tg["meldGaps"]
    page.screenshot(path=str(screenshots / f"18-result-tongits-melds-{tag}.png"), full_page=True)


WHITE = """async () => {
  const { tileButton, tileView } = await import('/tiles.js');
  const tray = document.createElement('section');
  tray.className = 'tray playing';
  tray.innerHTML = '<div class="my-hand"><div class="hand tiles" id="hand-test"></div></div>';
  document.querySelector('main').replaceChildren(tray);
  const hand = tray.querySelector('#hand-test');
  hand.append(tileButton('5z'), tileButton('6z'), tileView('5z', { small: true }));
  const size = (el) => { const r = el.getBoundingClientRect(); return [r.width, r.height]; };
  const [button, green, small] = [...hand.children];
  return { face: size(button.querySelector('.glyph')), tile: size(button),
           green: size(green), small: size(small.querySelector('.glyph')) };
}"""


@pytest.mark.parametrize(("viewport", "tag"), [(PHONE, "phone"), (WIDE, "wide")])
def test_the_white_dragon_in_your_hand_has_a_face(
    new_page: Any, screenshots: Path, viewport: Any, tag: str
) -> None:
    page = new_page(viewport)
    page.goto("/")
    page.wait_for_selector("main")
    out = page.evaluate(WHITE)
    face_w, face_h = out["face"]
    tile_w, tile_h = out["tile"]
    # A framed blank face about half the tile, not a 6 px bar.
    assert face_w >= 0.4 * tile_w and face_h >= 0.4 * tile_h, out
    assert out["tile"] == out["green"], out  # the same size as any other tile
    assert out["small"][0] >= 10, out
    page.screenshot(path=str(screenshots / f"18-white-dragon-{tag}.png"))


ANIMATION = """async () => {
  const { tileButton, tileView } = await import('/tiles.js');
  const main = document.querySelector('main');
  main.innerHTML = '<div class="hand tiles"></div><div class="mj-discards"></div>';
  main.firstChild.append(tileButton('1m'));
  main.lastChild.append(tileView('2m', { small: true }));
  const name = (el) => getComputedStyle(el).animationName;
  return [name(main.firstChild.firstChild), name(main.lastChild.firstChild)];
}"""


def test_moves_animate_unless_the_player_asks_for_less_motion(new_page: Any) -> None:
    page = new_page(PHONE)
    page.goto("/")
    page.wait_for_selector("main")
    page.emulate_media(reduced_motion="no-preference")
    assert page.evaluate(ANIMATION) == ["tk-draw", "tk-discard"]
    page.emulate_media(reduced_motion="reduce")
    assert page.evaluate(ANIMATION) == ["none", "none"]
