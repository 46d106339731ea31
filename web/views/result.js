// The end of a hand: who won and how, what each player paid or received, every hand
// revealed, and the seed that lets anyone re-derive the deal.

import { cardView, sortCards } from "../cards.js";
import { credits, signed, toast } from "../dom.js";
import { downloadTableRecord } from "../record.js";
import { h } from "./table-dom.js";
import { tileLabel, tileView } from "../tiles.js";
import { extras, humanize } from "./extras.js";
import { jokersFirst } from "./table-mahjong.js";
import { decompose } from "./table-sets.js";

const TONGITS_ENDINGS = { tongits: "Tongits!", stock_out: "Stock out", draw: "Draw (fight)" };
const KNOWN_TONGITS = ["ending", "winners", "payments", "deadwood", "burned", "hands", "melds", "next_dealer", "draw_call", "last_drawer", "owed"];
const KNOWN_MAHJONG = ["ending", "winner", "winners", "wins", "discarder", "winning_tile", "payments", "charges", "hands", "dealer", "next_dealer", "category", "specials", "robbed_kang", "joker"];
const CHARGE_ITEMS = { discarder: "discarded the winning tile", other_loser: "other player", self_draw: "self-draw (bunot)", kang: "kangs" };

function headline(frame, game, who) {
  const r = frame.result;
  if (game === "tongits") {
    if (!r.winners.length) return "Stock out — nobody opened, no credits move.";
    const names = r.winners.map(who).join(" and ");
    if (r.ending === "tongits") return `${names} wins by Tongits!`;
    if (r.ending === "stock_out") return `Stock out — ${names} ${r.winners.length > 1 ? "split the win" : "wins"} with the lowest deadwood.`;
    const caller = r.draw_call ? who(r.draw_call.caller) : "";
    return `Draw called by ${caller} — ${names} wins.`;
  }
  if (r.ending === "wall_out") return "Wall out — tabla. Nobody pays; the dealer keeps the deal.";
  if (Array.isArray(r.winners)) {
    // Ka Wu Xing: one or two winners.
    const names = r.winners.map(who).join(" and ");
    const how = { self_draw: "by self-draw", discard: `on ${who(r.discarder)}'s discard`, robbed_kong: "by robbing the kong" }[r.ending] || humanize(r.ending);
    return `${names} ${r.winners.length > 1 ? "win" : "wins"} ${how}${r.winning_tile ? ` (${tileLabel(r.winning_tile)})` : ""}!`;
  }
  const winner = who(r.winner);
  if (r.robbed_kang) return `${winner} wins — Mahjong robbing ${who(r.discarder)}'s kang${r.winning_tile ? ` (${tileLabel(r.winning_tile)})` : ""}!`;
  if (r.ending === "self_draw" && !r.winning_tile) return `${winner} wins — Bisaklat!`;
  if (r.ending === "self_draw") return `${winner} wins — Mahjong by self-draw (bunot)!`;
  return `${winner} wins — Mahjong on ${who(r.discarder)}'s discard${r.winning_tile ? ` (${tileLabel(r.winning_tile)})` : ""}!`;
}

function tongitsRows(frame, who, me) {
  const r = frame.result;
  return frame.players.map((userId, s) => {
    const melds = r.melds.filter((m) => m.owner === s);
    const won = r.winners.includes(s);
    return h(`tr${won ? ".winner" : ""}${userId === me ? ".me" : ""}`, { dataset: { seat: String(s) } },
      h("th", { scope: "row" }, who(s), won ? h("span.chip.win", {}, "Winner") : null, r.burned[s] ? h("span.chip.burned", {}, "Burned") : null,
        r.draw_call ? h("span.muted.small", {}, ` ${r.draw_call.answers[s]}`) : null),
      h("td.hand-cell", {},
        h("div.revealed", { role: "group", "aria-label": `${who(s)}'s hand` }, sortCards(r.hands[s]).map((c) => cardView(c, { small: true }))),
        melds.length ? h("div.revealed.melds", { role: "group", "aria-label": `${who(s)}'s melds` }, melds.map((m) => h("span.meld-mini.group", { role: "group", "aria-label": m.kind === "run" ? "Run" : "Set", dataset: { kind: m.kind } }, sortCards(m.cards, m.kind === "run" ? "suit" : "rank").map((c) => cardView(c, { small: true }))))) : null),
      h("td.num", {}, String(r.deadwood[s])),
      h(`td.num.amount${frame.payments[s] > 0 ? ".plus" : frame.payments[s] < 0 ? ".minus" : ""}`, {}, signed(frame.payments[s])));
  });
}

function mahjongRows(frame, who, me) {
  const r = frame.result;
  return frame.players.map((userId, s) => {
    const hand = r.hands.find((x) => x.seat === s) || { hand: [], melds: [], flowers: [] };
    const won = Array.isArray(r.winners) ? r.winners.includes(s) : r.winner === s;
    return h(`tr${won ? ".winner" : ""}${userId === me ? ".me" : ""}`, { dataset: { seat: String(s) } },
      h("th", { scope: "row" }, who(s), won ? h("span.chip.win", {}, "Winner") : null, r.dealer === s ? h("span.chip.dealer", {}, "D") : null),
      h("td.hand-cell", {},
        h("div.revealed.tile-groups", { role: "group", "aria-label": `${who(s)}'s tiles` },
          concealedTiles(hand.hand, { won, r }),
          hand.melds.map((m) => h("span.mj-meld.group.exposed", { dataset: { kind: m.kind }, title: `Exposed ${m.kind}` }, (m.tiles || []).map((t) => tileView(t, { small: true })))),
          (hand.flowers || []).length ? h("span.group.flowers", { title: "Flowers" }, hand.flowers.map((f) => tileView(f, { small: true }))) : null)),
      h("td.small", {}, bill(r.charges.filter((c) => c.payer === s)) || (won ? "receives" : "—")),
      h(`td.num.amount${frame.payments[s] > 0 ? ".plus" : frame.payments[s] < 0 ? ".minus" : ""}`, {}, signed(frame.payments[s])));
  });
}

/** A seat's concealed tiles: a winner's grouped into its sets and pair (when they
 * split), anyone else's as one row. */
function concealedTiles(tiles, { won, r }) {
  const mark = (t) => `${won && t === r.winning_tile ? "last" : ""} ${r.joker && t === r.joker ? "joker" : ""}`;
  const groups = won ? decompose(tiles, { joker: r.joker || null }) : null;
  if (!groups) {
    return h("span.group.concealed", {}, jokersFirst(tiles, r.joker).map((t) => tileView(t, { small: true, extra: mark(t) })));
  }
  let marked = false; // the winning tile is marked once
  return groups.map((g) => h("span.mj-meld.group.concealed", { dataset: { kind: g.kind }, title: g.kind === "pair" ? "Pair" : `Concealed ${g.kind}` },
    g.tiles.map((t) => {
      const last = won && !marked && t === r.winning_tile;
      if (last) marked = true;
      return tileView(t, { small: true, extra: `${last ? "last" : ""} ${r.joker && t === r.joker ? "joker" : ""}` });
    })));
}

/** What one loser pays, line by line (Mahjong items, or Ka Wu Xing charges). */
function bill(charges) {
  const parts = [];
  for (const c of charges) {
    if (c.items) {
      // Under a points table an item names its category or special hand (`detail`).
      parts.push(c.items.map((i) => `${CHARGE_ITEMS[i.name] || humanize(i.name)}${i.detail ? ` (${i.detail})` : ""} ${i.units}`).join(" + ")
        + (c.units < c.total ? ` (capped at ${c.units})` : ""));
    } else {
      parts.push(`${humanize(c.reason)} ${c.units}`);
    }
  }
  return parts.join(" + ");
}

/** Ka Wu Xing: each win's score items and multiplier. */
function wins(r, who) {
  if (!Array.isArray(r.wins) || !r.wins.length) return null;
  return h("ul.wins", {}, r.wins.map((w) => h("li", {},
    h("strong", {}, who(w.seat)), ": ",
    w.items.length ? w.items.map((i) => `${humanize(i.name)} ×${i.multiplier}`).join(", ") : "no score item",
    ` → ×${w.multiplier}`)));
}

/** Mahjong's joker/pinoy rulesets: the win's category, its special hands, the joker. */
function category(r) {
  if (!r.category && !r.joker) return null;
  return h("p.win-category#result-category", {},
    r.category ? h("strong.category", {}, r.category) : null,
    r.specials?.length ? h("span", {}, `Special hands: ${r.specials.join(", ")}`) : null,
    r.joker ? h("span.joker-note", {}, "Joker ", tileView(r.joker, { small: true, extra: "joker" })) : null);
}

async function sha256Hex(text) {
  // The commitment is sha256 of the seed's hex text or of its bytes; accept either.
  if (!crypto?.subtle) return [];
  const digest = async (bytes) => Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)), (b) => b.toString(16).padStart(2, "0")).join("");
  const out = [await digest(new TextEncoder().encode(text))];
  if (/^[0-9a-f]+$/i.test(text) && text.length % 2 === 0) {
    out.push(await digest(Uint8Array.from(text.match(/../g), (x) => parseInt(x, 16))));
  }
  return out;
}

// Seed -> verdict, so a redraw of the panel shows what was already checked.
const verified = new Map();

function fairness(frame) {
  const known = verified.get(frame.server_seed);
  const check = h(`span.verify#seed-check${known ? ".ok" : ""}`, {}, known ? "✓ matches the commitment shown before the deal" : "");
  if (known === undefined) {
    sha256Hex(frame.server_seed).then((hashes) => {
      if (!hashes.length) return;
      const ok = hashes.includes(frame.seed_commitment);
      verified.set(frame.server_seed, ok);
      const el = document.getElementById("seed-check") || check;
      el.textContent = ok ? "✓ matches the commitment shown before the deal" : "";
      el.classList.toggle("ok", ok);
    }).catch(() => {});
  }
  return h("details.fairness", {},
    h("summary", {}, "Fairness: the revealed seed"),
    h("dl", {},
      h("dt", {}, "Seed commitment (before the deal)"), h("dd", {}, h("code", {}, frame.seed_commitment)),
      h("dt", {}, "Server seed (revealed now)"), h("dd", {}, h("code#server-seed", {}, frame.server_seed), " ", check),
      h("dt", {}, "Players' entropy"), h("dd", {}, frame.entropy.map((e, i) => h("code", {}, e || `(seat ${i + 1}: none)`)))),
    h("p.muted.small", {}, "Anyone can re-derive this deal from the seed and the entropy (kalaro verify). ",
      h("button.link.small#download-record", { type: "button", onclick: () => downloadTableRecord(frame.table_id, frame.hand_id).catch((e) => toast(e.message, "error")) }, "Download the hand record")));
}

export function renderResult(frame, { game, name, me, onClose, actions = null }) {
  const who = (s) => (s === null || s === undefined ? "?" : name(frame.players[s], s));
  const mySeat = frame.players.indexOf(me);
  const mine = mySeat >= 0 ? frame.payments[mySeat] : null;
  const isTongits = game === "tongits";
  return h("div.result.panel#result-panel", { role: "region", "aria-labelledby": "result-title" },
    h("div.result-head", {},
      h("h2#result-title", {}, isTongits ? TONGITS_ENDINGS[frame.result.ending] || "Hand over" : "Hand over"),
      h("button.ghost.small", { type: "button", "aria-label": "Close the result", onclick: onClose }, "✕")),
    h("p.headline#result-headline", {}, headline(frame, game, who)),
    isTongits ? null : wins(frame.result, who),
    isTongits ? null : category(frame.result),
    mine !== null ? h(`p.my-amount${mine > 0 ? ".plus" : mine < 0 ? ".minus" : ""}`, {}, mine > 0 ? `You received ${credits(mine)} credits.` : mine < 0 ? `You paid ${credits(-mine)} credits.` : "No credits moved for you.") : null,
    h("div.table-scroll", { tabindex: "0", role: "group", "aria-label": "Every player's hand and credits" },
      h("table.results", {},
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Player"), h("th", { scope: "col" }, isTongits ? "Hand & melds" : "Tiles"), h("th", { scope: "col" }, isTongits ? "Deadwood" : "Pays"), h("th", { scope: "col" }, "Credits"))),
        h("tbody", {}, isTongits ? tongitsRows(frame, who, me) : mahjongRows(frame, who, me)))),
    extras(frame.result, isTongits ? KNOWN_TONGITS : KNOWN_MAHJONG, game),
    fairness(frame),
    mySeat >= 0 ? h("div.result-actions", {}, actions, h("span.muted.small", {}, "Tap Ready for the next hand, or leave the table.")) : null);
}
