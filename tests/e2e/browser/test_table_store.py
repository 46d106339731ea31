"""The table's store (web/views/table-store.js), run in the browser on made-up frames.

Reducers of socket frames and intents are the only way the state changes; every table
record passes the table hook with the previous and the next table; a view frame's
events become move-log lines; cues (sounds) follow from (previous, next) state; and the
DOM patch keeps the elements (and the focus) that are still there.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser.conftest import PHONE

pytestmark = pytest.mark.browser

STORE = """async () => {
  const S = await import('/views/table-store.js');
  const seat = (id, name, bot = false) =>
    ({ user_id: id, display_name: name, is_bot: bot, ready: true });
  const seats = [seat('me', 'Ana'), seat('b1', 'Bot 1', true), seat('b2', 'Bot 2', true)];
  const table = (version, status) =>
    ({ table_id: 't1', version, status, game: 'tongits', host_id: 'me', seats });
  const store = S.createStore(S.initialState({ tableId: 't1', me: 'me' }));
  const hooked = [];
  store.onTable((prev, next) =>
    hooked.push([prev ? prev.version : null, next.version, next.status]));
  const cues = [];
  store.subscribe((next, prev) => cues.push(...S.cues(prev, next)));
  store.dispatch({ type: 'table', table: table(1, 'waiting') });
  store.dispatch({ type: 'subscribed', table: table(2, 'playing') });
  store.dispatch({ type: 'table', table: table(1, 'waiting') });  // older: ignored
  const other = { ...table(9, 'waiting'), table_id: 'other' };
  store.dispatch({ type: 'table', table: other });  // another table: ignored
  const hand = ['AS', '2S', '3S', 'KD'];
  const view = (version, legal, events) => ({
    type: 'view', table_id: 't1', hand_id: 'h1', version, seat: 0, events, deadline_ms: null,
    view: { phase: 'start', hand, legal, turn: 0, to_act: [0] } });
  const discarded = { type: 'card_discarded', seat: 2, card: 'KH' };
  store.dispatch({ type: 'view', frame: view(1, [], [discarded]) });
  store.dispatch({ type: 'toggle', item: 'AS' });
  store.dispatch({ type: 'toggle', item: 'KD' });
  const selected = store.state.selection;
  const drawn = { type: 'card_drawn', seat: 1, card: null, stock_left: 20 };
  store.dispatch({ type: 'view', frame: view(2, [{ type: 'draw' }], [drawn]) });
  const chat = { table_id: 't1', user_id: 'b1', display_name: 'Bot 1', text: 'hi', at: 'x' };
  store.dispatch({ type: 'chat', frame: chat });
  // An answer to our own request (it has a ref) is reported where it was made.
  store.dispatch({ type: 'error', frame: { code: 'x', message: 'answered', ref: 3 } });
  return { hooked, cues, selected, log: store.state.log.map((e) => [e.kind, e.text]),
           chat: store.state.chat.length, error: store.state.error, names: store.state.names,
           selection: store.state.selection };
}"""


def test_the_store_reduces_frames_and_passes_every_table_change_to_the_hook(
    new_page: Any,
) -> None:
    page = new_page(PHONE)
    page.goto("/")
    page.wait_for_selector("main")
    out = page.evaluate(STORE)
    # Two table changes reached the hook (the older record and another table's did not).
    assert out["hooked"] == [[None, 1, "waiting"], [1, 2, "playing"]]
    assert out["log"] == [
        ["discard", "Bot 2 discarded K♥"],
        ["draw", "Bot 1 drew from the stock"],
    ]
    assert out["selected"] == ["AS", "KD"]
    assert out["selection"] == ["AS", "KD"]  # still in the hand after the next view
    assert out["cues"] == ["turn"]  # the draw became legal: your turn
    assert out["chat"] == 1
    assert out["error"] is None
    assert out["names"]["b1"] == "Bot 1"


PATCH = """async () => {
  const { h, patch } = await import('/views/table-dom.js');
  const region = document.createElement('div');
  document.querySelector('main').replaceChildren(region);
  let clicked = '';
  const draw = (cards, label) => patch(region,
    h('div.hand#hand', {}, cards.map((c) => h('button', { type: 'button', dataset: { card: c },
      onclick: () => { clicked = label + ':' + c; } }, c))));
  draw(['AS', '2S', '3S'], 'first');
  const two = region.querySelector('[data-card="2S"]');
  two.focus();
  draw(['AS', '2S', '3S', '4S'], 'second');  // a card drawn: the others stay
  const same = region.querySelector('[data-card="2S"]') === two;
  const focused = document.activeElement === two;
  two.click();
  draw(['2S', '4S'], 'third');  // cards gone: the focused one stays put
  return { same, focused, clicked, after: document.activeElement === two,
           cards: [...region.querySelectorAll('button')].map((b) => b.dataset.card) };
}"""


def test_patching_keeps_elements_focus_and_fresh_listeners(new_page: Any) -> None:
    page = new_page(PHONE)
    page.goto("/")
    page.wait_for_selector("main")
    out = page.evaluate(PATCH)
    assert out["same"] and out["focused"] and out["after"]
    assert out["clicked"] == "second:2S"  # the kept button runs the newest listener
    assert out["cards"] == ["2S", "4S"]
