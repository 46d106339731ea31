// My hands: every finished (or voided) hand I played, newest first, each opening its
// replay. Rows come from GET /api/hands, paged with `next_before`.

import { accessToken, call, refresh } from "../api.js";
import { h, mount, signed, toast } from "../dom.js";
import { formatDate, isoDate } from "../format.js";

export const GAMES = { tongits: "Tongits", mahjong: "Mahjong", kawuxing: "Ka Wu Xing" };
const PAGE = 20;

export const short = (id) => (id && id.length > 10 ? `${id.slice(0, 8)}…` : id || "");

/** Where a hand's replay lives (game "any": the replay finds the game itself). */
export const replayHref = (game, handId) => `#/hands/${encodeURIComponent(game)}/${encodeURIComponent(handId)}`;

function outcome(hand) {
  if (hand.ending === "voided") return ["Voided", "even"]; // cancelled mid-play: nobody paid
  if (hand.won) return ["Won", "won"];
  if (hand.ending === "stock_out" && hand.credits === 0) return ["No winner", "even"];
  if (hand.ending === "wall_out") return ["Wall out", "even"];
  return hand.credits < 0 ? ["Lost", "lost"] : ["Played", "even"];
}

export function render(root) {
  const body = h("tbody#hands-list");
  const more = h("button.ghost#hands-more", { type: "button", hidden: true }, "Show older");
  const empty = h("p.muted#hands-empty", { hidden: true }, "No finished hands yet. Play a hand and it shows up here.");
  let before = null;

  async function load(reset) {
    more.disabled = true;
    try {
      const query = new URLSearchParams({ limit: String(PAGE) });
      if (!reset && before !== null) query.set("before", String(before));
      const page = await call("GET", `/api/hands?${query}`);
      if (reset) body.replaceChildren();
      for (const hand of page.hands) body.append(row(hand));
      empty.hidden = !(reset && !page.hands.length);
      before = page.next_before;
      more.hidden = before === null || before === undefined;
    } catch (err) {
      toast(err.message, "error");
    } finally {
      more.disabled = false;
    }
  }

  more.addEventListener("click", () => load(false));
  const download = h("button.ghost#hands-download", { type: "button", "aria-describedby": "hands-download-note" }, "Download all my hands");
  download.addEventListener("click", () => downloadAll(download));
  mount(root,
    h("section.hands-page", { "aria-labelledby": "hands-title" },
      h("div.section-head", {},
        h("h1#hands-title", {}, "My hands"),
        h("div.head-actions", {}, download, h("a.ghost.button-link", { href: "#/wallet" }, "Wallet"))),
      h("p.muted", {}, "Every hand you finished, newest first. Open one to replay it step by step and check its fairness."),
      h("p.muted.small#hands-download-note", {}, "The download is one JSON file of every record; ", h("code", {}, "kalaro verify"), " checks any of them."),
      h("div.panel.hands-panel", {}, h("div.table-scroll", { tabindex: "0", role: "group", "aria-label": "My hands" },
        h("table.history.hands", {},
          h("thead", {}, h("tr", {},
            h("th", { scope: "col" }, "When"),
            h("th", { scope: "col" }, "Game"),
            h("th.hide-phone", { scope: "col" }, "Table"),
            h("th", { scope: "col" }, "Result"),
            h("th.num", { scope: "col" }, "Credits"),
            h("th.hide-phone", { scope: "col" }, "Replay"))),
          body)),
        empty,
        more)));
  load(true);
}

function row(hand) {
  const [label, kind] = outcome(hand);
  const href = replayHref(hand.game, hand.hand_id);
  return h("tr.hand-row", { dataset: { hand: hand.hand_id, game: hand.game } },
    // The date opens the replay too: on a phone the Replay column is hidden.
    h("td", {}, h("a.replay-date", { href, "aria-label": `Replay the ${GAMES[hand.game] || hand.game} hand of ${formatDate(hand.finished_ms)}` },
      h("time", { datetime: isoDate(hand.finished_ms) }, formatDate(hand.finished_ms)))),
    h("td", {}, GAMES[hand.game] || hand.game, hand.bet ? null : h("span.muted.small", {}, " practice")),
    h("td.hide-phone", { title: hand.table_id }, h("code", {}, short(hand.table_id))),
    h("td", {}, h(`span.outcome.${kind}`, {}, label)),
    h(`td.num.amount${hand.credits > 0 ? ".plus" : hand.credits < 0 ? ".minus" : ""}`, {}, signed(hand.credits)),
    h("td.hide-phone", {}, h("a.replay-link", { href, tabindex: "-1" }, "Replay")));
}

/** GET /api/hands/export with the session's token, saved as a file (a plain link
 * cannot send the token). The server streams it; the browser holds it once. */
async function downloadAll(button) {
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  toast("Preparing your hands…");
  try {
    const get = async (token) => fetch("/api/hands/export", {
      headers: { Accept: "application/json", Authorization: `Bearer ${token}` },
    });
    let response = await get(await accessToken());
    if (response.status === 401) response = await get((await refresh()).access_token);
    if (!response.ok) throw new Error(`The server answered ${response.status}. Try again later.`);
    const url = URL.createObjectURL(await response.blob());
    const link = h("a", { href: url, download: "kalaro-my-hands.json", hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    toast("Your hands are downloaded.");
  } catch (err) {
    toast(err.message || "The download failed. Try again later.", "error");
  } finally {
    button.disabled = false;
    button.removeAttribute("aria-busy");
  }
}
