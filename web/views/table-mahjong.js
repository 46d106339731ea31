// Tile games on the felt — Filipino 16-tile Mahjong (4 seats) and Ka Wu Xing (3 seats,
// kongs, Show Hand): seats with melds, flowers and discards, the wall, your concealed
// tiles (the drawn one set apart), your moves, and the private claim prompt when a
// discard can be called. Mahjong's joker and pinoy rulesets: the joker tile in the
// middle, jokers marked (and first) in your hand, why Mahjong is not offered, and the
// table's rules with its points table (`rulesPanel`, also shown in the lobby).

import { h } from "./table-dom.js";
import { countdown } from "./clock.js";
import { sortTiles, tileBack, tileButton, tileLabel, tileView } from "../tiles.js";
import { extras, humanize } from "./extras.js";
import { first, ofType } from "./legal.js";

const WINDS = ["東", "南", "西", "北"];
const WIND_NAMES = ["East", "South", "West", "North"];
const KNOWN_VIEW = ["seat", "options", "dealer", "turn", "phase", "wall_count", "players", "drawn", "call", "legal", "result", "waits", "joker", "win_blocked", "win_blocked_reason", "away", "clock", "to_act"];
const KNOWN_ACTIONS = ["draw", "discard", "show_hand", "declare_kang", "declare_kong", "declare_win", "claim", "pass", "time_out", "back"];
const CLAIM_LABEL = { mahjong: "Mahjong!", win: "Win!", kang: "Kang", kong: "Kong", pong: "Pong", chow: "Chow" };
const KANGS = ["declare_kang", "declare_kong"];
// Where each seat sits, counted from the viewer, for 4 and 3 players.
const PLACES = { 4: ["bottom", "right", "top", "left"], 3: ["bottom", "right", "left"] };

export function concealed(view) {
  const me = view.seat === null || view.seat === undefined ? null : view.players[view.seat];
  return me?.hand || [];
}

export function prompt(view, seat, name) {
  if (seat === null || seat === undefined) return "";
  const legal = view.legal || [];
  const claims = ofType(legal, "claim");
  if (claims.length && view.call) {
    const kinds = [...new Set(claims.map((c) => CLAIM_LABEL[c.kind] || c.kind))].join(", ");
    const blocked = view.win_blocked_reason ? ` ${view.win_blocked_reason}` : "";
    return `${name(view.call.discarder)} discarded ${tileLabel(view.call.tile)}. You may ${kinds}, or pass.${blocked}`;
  }
  if (first(legal, "declare_win")) return `Your hand is complete: ${view.options?.ruleset === "kawuxing" ? "Win" : "Mahjong"}!`;
  if (first(legal, "draw")) return "Your turn: draw a tile.";
  if (first(legal, "discard")) return "Choose a tile to discard.";
  return "";
}

function windOf(view, s) {
  const n = view.players.length;
  return (s - view.dealer + n) % n;
}

function meldRow(meld) {
  // A concealed kong may be hidden from others (tiles null): show its backs.
  if (!meld.tiles) {
    const n = meld.kind === "kong" || meld.kind === "kang" ? 4 : 3;
    return h(`span.mj-meld.${meld.kind}.concealed`, { role: "img", "aria-label": `${humanize(meld.kind)} (face down)` },
      Array.from({ length: n }, () => tileBack({ small: true })));
  }
  const claimedAt = meld.claimed ? meld.tiles.indexOf(meld.claimed) : -1; // mark one copy only
  const tiles = meld.tiles.map((t, i) => tileView(t, { small: true, extra: i === claimedAt ? "claimed" : "" }));
  return h(`span.mj-meld.${meld.kind}${meld.concealed ? ".concealed" : ""}`, {
    role: "group",
    "aria-label": `${humanize(meld.kind)}${meld.concealed ? " (concealed)" : ""}: ${meld.tiles.map(tileLabel).join(", ")}`,
  }, tiles);
}

function seatArea(ctx, s, where) {
  const { view } = ctx;
  const p = view.players[s];
  const flowers = p.flowers || [];
  const winds = view.players.length === 4;
  const wind = windOf(view, s);
  const acting = view.phase === "calls" ? view.call?.discarder === s : view.turn === s && view.phase !== "over";
  const lastDiscard = view.call && view.call.discarder === s ? p.discards.length - 1 : -1;
  // Another seat's tiles are visible only when that player showed the hand (Ka Wu Xing).
  const open = s !== ctx.seat && p.hand;
  return h(`div.mj-seat.${where}${acting ? ".acting" : ""}`, { role: "group", dataset: { seat: String(s) }, "aria-label": `${ctx.name(s)}${winds ? `, ${WIND_NAMES[wind]} seat` : ""}` },
    h("div.player-head", {},
      winds ? h("span.wind", { title: `${WIND_NAMES[wind]} wind` }, WINDS[wind]) : null,
      h("span.player-name", {}, ctx.name(s)),
      view.dealer === s ? h("span.chip.dealer", { title: "Dealer" }, "D") : null,
      p.shown ? h("span.chip.turn", {}, "Hand shown") : null,
      ctx.seat === s ? null : h("span.hand-count", { role: "img", "aria-label": `${p.hand_size} concealed tiles` },
        open ? null : h("span.mini-wall", { "aria-hidden": "true" }, Array.from({ length: Math.min(p.hand_size, 17) }, () => tileBack({ small: true }))),
        h("span.count", {}, String(p.hand_size))),
      ctx.markers ? ctx.markers(s) : null,
      acting ? h("span.chip.turn", {}, "to play") : null,
      ctx.clockOf ? ctx.clockOf(s) : null),
    open ? h("div.mj-exposed.shown-hand", { role: "group", "aria-label": `${ctx.name(s)}'s shown hand` },
      h("span.small", { "aria-hidden": "true" }, "Shown hand:"),
      sortTiles(p.hand).map((t) => tileView(t, { small: true }))) : null,
    p.melds.length || flowers.length
      ? h("div.mj-exposed", {},
        p.melds.map(meldRow),
        flowers.length ? h("span.flowers", { role: "group", "aria-label": `Flowers: ${flowers.map(tileLabel).join(", ")}` }, flowers.map((f) => tileView(f, { small: true }))) : null)
      : null,
    h("div.mj-discards", { role: "group", "aria-label": `${ctx.name(s)}'s discards` },
      p.discards.map((t, i) => tileView(t, { small: true, extra: `${i === lastDiscard ? "last" : ""} ${jokerClass(t, view.joker)}` }))));
}

function center(ctx) {
  const { view, frame } = ctx;
  return h("div.mj-center", {},
    view.joker ? jokerBox(view.joker) : null,
    h("div.wall#wall", { role: "group", "aria-label": `Wall: ${view.wall_count} tiles left` }, h("span.wall-icon", { "aria-hidden": "true" }, tileBack()), h("span", {}, "Wall "), h("strong#wall-count", {}, String(view.wall_count))),
    view.call ? h("div.call-tile#call-tile", {}, h("span.small", {}, `${ctx.name(view.call.discarder)} discarded`), tileView(view.call.tile),
      frame.deadline_ms ? countdown(frame.deadline_ms) : null)
      : lastOut(ctx),
    view.waits?.length ? h("div.waits", { role: "group", "aria-label": "Tiles that would complete your hand" }, h("span.small", {}, "Waiting on"),
      view.waits.map((w) => h("span.wait", { title: w.self_draw_only ? "self-draw only" : "" }, tileView(w.tile, { small: true }), w.self_draw_only ? h("small", {}, "self-draw") : null))) : null,
    extras(view, KNOWN_VIEW, "mahjong"));
}

/** The newest discard still on the table, in the middle of the board (on a phone the
 * discarder's row may be out of sight). */
function lastOut(ctx) {
  const last = ctx.lastDiscard;
  const pile = last && ctx.view.players[last.seat]?.discards;
  if (!pile || pile[pile.length - 1] !== last.tile) return null;
  return h("div.call-tile.last-discard#last-discard", {},
    h("span.small", {}, `${last.seat === ctx.seat ? "You" : ctx.name(last.seat)} discarded`), tileView(last.tile));
}

function claimPrompt(ctx) {
  const { view, frame } = ctx;
  const claims = ofType(view.legal, "claim");
  const pass = first(view.legal, "pass");
  if (!claims.length && !pass) return null;
  const tile = view.call?.tile;
  return h("div.prompt#claim-prompt", { role: "alertdialog", "aria-labelledby": "claim-title" },
    h("h2#claim-title", {}, view.call ? `${ctx.name(view.call.discarder)} discarded ` : "Claim the discard", tile ? tileView(tile, { small: true }) : null),
    h("div.prompt-actions", {},
      claims.map((c, i) => h(`button.claim${c.kind === "mahjong" ? ".primary" : ""}`, {
        type: "button",
        id: `claim-${c.kind}-${i}`,
        dataset: { action: `claim-${c.kind}`, claim: c.kind },
        disabled: ctx.busy,
        onclick: () => ctx.act(c),
      }, h("span", {}, CLAIM_LABEL[c.kind] || humanize(c.kind)),
      // The name is the visible word and then the tiles (WCAG 2.5.3, label in name).
      c.tiles.length ? h("span.sr-only", {}, ` with ${c.tiles.map(tileLabel).join(" and ")}`) : null,
      c.tiles.length ? h("span.tile-row", { "aria-hidden": "true" }, sortTiles([...c.tiles, tile]).map((t) => tileView(t, { small: true }))) : null)),
      pass ? h("button#pass", { type: "button", dataset: { action: "pass" }, disabled: ctx.busy, onclick: () => ctx.act(pass) }, "Pass") : null,
      frame.deadline_ms ? countdown(frame.deadline_ms, { big: true }) : null));
}

function myHand(ctx) {
  const { view, selection } = ctx;
  const hand = [...(view.players[view.seat].hand || [])];
  // The drawn tile is part of the hand; show it set apart, as at a real table.
  let drawn = null;
  if (view.drawn) {
    const i = hand.lastIndexOf(view.drawn);
    if (i >= 0) {
      hand.splice(i, 1);
      drawn = view.drawn;
    }
  }
  const tiles = jokersFirst(hand, view.joker);
  if (drawn) tiles.push(drawn);
  const sel = selection[0];
  // Which copy the player tapped (tiles of a kind are interchangeable; this only keeps
  // the highlight on the tile that was tapped).
  const picked = ctx.picked ?? -1;
  const marked = sel === undefined ? -1 : tiles[picked] === sel ? picked : tiles.indexOf(sel);
  const buttons = tiles.map((t, i) => {
    const notes = [t === view.joker ? "joker" : "", drawn && i === tiles.length - 1 ? "just drawn" : ""].filter(Boolean);
    const b = tileButton(t, {
      selected: i === marked,
      index: i,
      extra: `${drawn && i === tiles.length - 1 ? "drawn" : ""} ${jokerClass(t, view.joker)}`,
      note: notes.length ? `(${notes.join(", ")})` : "",
      onToggle: () => ctx.setSelection(i === marked ? [] : [t], i),
    });
    // Keyed by kind and copy, so a draw or a discard keeps the other tiles' elements.
    b.dataset.key = drawn && i === tiles.length - 1 ? "drawn" : `${t}#${tiles.slice(0, i).filter((x) => x === t).length}`;
    return b;
  });
  if (drawn) buttons.splice(buttons.length - 1, 0, h("span.drawn-gap", { "aria-hidden": "true" }));
  return h("div.my-hand", {},
    h("div.hand-head", {}, h("h2.hand-title", {}, "Your tiles ", h("span.muted.small", {}, `${tiles.length} tiles`))),
    h("div.hand.tiles#hand", { role: "group", "aria-label": "Your tiles: arrow keys move, Space selects" }, buttons));
}

/** Why each move is not available now (null: it is); see table-tongits.js. */
export function reasons(ctx) {
  const { view, selection } = ctx;
  const legal = view.legal || [];
  const kawuxing = ctx.table.game === "kawuxing";
  const n = selection.length;
  const claimWindow = view.phase === "calls";
  const notNow = ctx.busy ? "sending your move…"
    : claimWindow ? "Wait: the discard can be claimed now"
      : !legal.length ? `Not your move: it is ${ctx.name(view.turn)}'s turn` : null;
  const drew = !first(legal, "draw");
  const out = {};
  const set = (id, cond, text, sel = false) => { out[id] = cond ? { text, sel } : null; };
  set("draw", !first(legal, "draw"), notNow || "You already drew this turn");
  const discard = n === 1 ? legal.find((a) => a.type === "discard" && a.tile === selection[0]) : null;
  set("discard", !discard, notNow || (!ofType(legal, "discard").length ? (drew ? "You cannot discard now" : "Draw a tile first") : n === 0 ? "Tap a tile to discard first" : "You cannot discard that tile now"), n > 0 || Boolean(ofType(legal, "discard").length));
  const shows = ofType(legal, "show_hand");
  set("show-hand", !(n === 1 && shows.some((a) => a.tile === selection[0])), notNow || (!shows.length ? "Your hand is not waiting: no Show Hand" : `Select one of ${shows.map((a) => tileLabel(a.tile)).join(", ")} first`), shows.length > 0 && n > 0);
  set("kang", !legal.some((a) => KANGS.includes(a.type)), notNow || `No ${kawuxing ? "kong" : "kang"}: you hold no four of a kind`);
  set("mahjong", !first(legal, "declare_win"), notNow || view.win_blocked_reason || "Your hand is not complete");
  return out;
}

function actionBar(ctx) {
  const { view, selection } = ctx;
  const legal = view.legal || [];
  const why = reasons(ctx);
  const draw = first(legal, "draw");
  const win = first(legal, "declare_win");
  const discard = selection.length === 1 ? legal.find((a) => a.type === "discard" && a.tile === selection[0]) : null;
  // Ka Wu Xing: Show Hand is a discard that leaves the hand waiting; offered per tile.
  const shows = ofType(legal, "show_hand");
  const show = selection.length === 1 ? shows.find((a) => a.tile === selection[0]) || null : null;
  const kangs = legal.filter((a) => KANGS.includes(a.type));
  const kong = ctx.table.game === "kawuxing" ? "Kong" : "Kang";
  const unknown = legal.filter((a) => !KNOWN_ACTIONS.includes(a.type));
  const btn = (id, label, action, primary = false, aria = undefined) => {
    const reason = action && !ctx.busy ? null : why[id]?.text || (ctx.busy ? "sending your move…" : null);
    return h(`button${primary ? ".primary" : ""}`, {
      type: "button", id, dataset: { action: id, why: reason || undefined }, disabled: !action || ctx.busy, title: reason || undefined, "aria-label": aria, onclick: () => action && ctx.act(action),
    }, label);
  };
  return h("div.action-bar#actions", { role: "group", "aria-label": "Your moves" },
    btn("draw", "Draw", draw, true),
    btn("discard", "Discard", discard, Boolean(discard)),
    ctx.table.game === "kawuxing"
      ? btn("show-hand", "Show Hand", show, false, show
        ? `Show Hand: discard ${tileLabel(show.tile)} and lay your waiting hand open (win and loss doubled)`
        : shows.length ? `Show Hand: select one of ${shows.map((a) => tileLabel(a.tile)).join(", ")} first` : "Show Hand (your hand is not waiting)")
      : null,
    kangs.length
      ? kangs.map((k) => h("button", { type: "button", dataset: { action: "kang", tile: k.tile, key: `kang-${k.type}-${k.tile}` }, disabled: ctx.busy, onclick: () => ctx.act(k) }, `${kong} `, h("span.sr-only", {}, `of ${tileLabel(k.tile)}`), h("span", { "aria-hidden": "true" }, tileView(k.tile, { small: true }))))
      : btn("kang", kong, null),
    btn("mahjong", ctx.table.game === "kawuxing" ? "Win!" : "Mahjong!", win, Boolean(win)),
    view.win_blocked_reason ? h("p.win-blocked#win-blocked", { dataset: { code: view.win_blocked } }, view.win_blocked_reason) : null,
    unknown.map((a, i) => h("button", { type: "button", id: `extra-action-${i}`, disabled: ctx.busy, onclick: () => ctx.act(a) }, humanize(a.type))),
    shows.length ? showChoices(ctx, shows) : null);
}

/** The reasons that hang on the selection, in one visible line under the moves. */
function whyLine(ctx) {
  const why = reasons(ctx);
  const texts = ["discard", "show-hand"].map((id) => why[id]).filter((r) => r && r.sel).map((r) => r.text);
  return h("p.why#why", { "aria-live": "polite" }, [...new Set(texts)].join(" · "));
}

/** Ka Wu Xing: the discards that allow Show Hand; tapping one selects it in the hand. */
function showChoices(ctx, shows) {
  return h("div.waits#show-tiles", { role: "group", "aria-label": "Discards that leave your hand waiting: Show Hand possible" },
    h("span.small", {}, "Show Hand with"),
    shows.map((a) => h("button.show-pick", {
      type: "button",
      dataset: { tile: a.tile },
      disabled: ctx.busy,
      onclick: () => ctx.setSelection([a.tile]),
    }, h("span.sr-only", {}, `Select ${tileLabel(a.tile)} for Show Hand`), h("span", { "aria-hidden": "true" }, tileView(a.tile, { small: true })))));
}

function hint(ctx) {
  const { view, seat } = ctx;
  if (seat === null || seat === undefined) return "You are watching: concealed tiles stay hidden until the hand ends.";
  const legal = view.legal || [];
  if (view.phase === "over") return "The hand is over.";
  if (view.away?.[seat]) return "You are away: the server plays your turns until you tap I'm back (or make a move).";
  if (ofType(legal, "claim").length) return "You can claim this discard — choose, or pass.";
  if (first(legal, "pass")) return "Pass or wait for the call window to close.";
  if (view.phase === "calls") return "Waiting for claims on the discard…";
  if (first(legal, "draw")) return "Your turn: Draw a tile from the wall.";
  const kawuxing = ctx.table.game === "kawuxing";
  if (kawuxing && view.players[seat]?.shown && first(legal, "declare_win")) return "Your draw completes your shown hand — tap Win! (or Discard it to let it go).";
  if (first(legal, "declare_win")) return `Your hand is complete — tap ${kawuxing ? "Win" : "Mahjong"}!`;
  if (first(legal, "show_hand")) return "Tap a tile, then Discard — or Show Hand: your waiting hand is laid open and your win and loss double.";
  if (first(legal, "discard")) return "Tap a tile, then Discard.";
  return `Waiting for ${ctx.name(view.turn)}…`;
}

/** The board: every seat (yours with its melds and discards) and the wall. */
export function renderHand(ctx) {
  const { view, seat } = ctx;
  const seated = seat !== null && seat !== undefined;
  const n = view.players.length;
  const base = seated ? seat : 0;
  const places = PLACES[n] || PLACES[4];
  const areas = places.map((where, k) => seatArea(ctx, (base + k) % n, where));
  return h(`div.board.mahjong.seats-${n}`, { dataset: { phase: view.phase, version: String(ctx.frame.version) } },
    h("div.mj-grid", {}, areas, center(ctx)));
}

/** The tray (fixed at the bottom of a phone): the claim prompt, the hint, your tiles,
 * your clock, your moves and why a move is grey. */
export function renderTray(ctx) {
  const { seat } = ctx;
  const seated = seat !== null && seat !== undefined;
  return [
    claimPrompt(ctx),
    h("p.turn-hint#hint", { "aria-live": "polite" }, hint(ctx)),
    seated ? myHand(ctx) : null,
    seated ? ctx.turnStatus : null,
    seated ? actionBar(ctx) : null,
    seated ? whyLine(ctx) : null,
  ];
}

// --- Mahjong's joker and pinoy rulesets ------------------------------------------------

function jokerClass(tile, joker) {
  return joker && tile === joker ? "joker" : "";
}

/** Jokers first (as the joker ruleset's seed shows them), then the rest in suit order. */
export function jokersFirst(tiles, joker) {
  const sorted = sortTiles(tiles);
  return joker ? [...sorted.filter((t) => t === joker), ...sorted.filter((t) => t !== joker)] : sorted;
}

function jokerBox(joker) {
  return h("div.joker-box#joker", { role: "note", "aria-label": `Joker: ${tileLabel(joker)}. The other three ${tileLabel(joker)} tiles are wild this hand.` },
    h("span.joker-title", { "aria-hidden": "true" }, "Joker"),
    tileView(joker, { extra: "joker" }),
    h("span.small", { "aria-hidden": "true" }, "the other three are wild"));
}

const RULESET_NAMES = { kalaro: "KaLaro", joker: "Joker", pinoy: "Pinoy" };
// The options a Mahjong table may switch on, in words (the values come from the server).
const SWITCHES = [
  ["jokers", "Jokers: a tile is revealed after the deal; the other three of its kind are wild"],
  ["seven_pairs", "Seven Pairs (7 pairs + 1 set, concealed)"],
  ["eskalera", "Eskalera (1-2-3, 4-5-6, 7-8-9 of one suit)"],
  ["secret_kangs", "Secret kangs: concealed kangs stay face down until the end"],
  ["passed_win_blocks", "Pass a winning tile and you cannot win on a discard until your next draw"],
  ["robbing_the_kang", "Robbing the kang"],
  ["special_hands", "Special hands (ambisyon) pay extra"],
];
const SPECIAL_HANDS = ["All Pongs", "Pure One Suit", "All Honours", "Big Three Dragons", "Small Three Dragons", "Concealed Hand"];

/** A Mahjong table's rules — ruleset, switches, timers and the points table — as a
 *  disclosure (null for other games). `open` keeps it open across redraws. */
export function rulesPanel(table, { open = false } = {}) {
  const o = table.options || {};
  if (table.game === "kawuxing" && o.ruleset) return kawuxingRules(table, o, open);
  if (table.game !== "mahjong" || !o.ruleset) return null;
  const on = SWITCHES.filter(([key]) => o[key]).map(([, text]) => h("li", {}, text));
  const timers = [`Claim window ${o.call_seconds} s`, o.turn_seconds ? `turn timer ${o.turn_seconds} s (auto-play on time-out)` : "no turn timer"];
  if (o.turn_seconds && o.away_after_timeouts) timers.push(`marked away after ${o.away_after_timeouts} time-out${o.away_after_timeouts > 1 ? "s" : ""} in a row`);
  const entries = Object.entries(o.points || {}).filter(([name]) => o.special_hands || !SPECIAL_HANDS.includes(name));
  const isCategory = ([name]) => /^(Win by|Bisaklat)/.test(name);
  return h("details.rules", { open, dataset: { tableId: table.table_id } },
    h("summary", {}, "Rules", h("span.ruleset", {}, `: ${RULESET_NAMES[o.ruleset] || o.ruleset}`)),
    h("div.rules-body", {},
      on.length ? h("ul.rule-list", {}, on) : h("p.small", {}, "5 sets + a pair; no jokers."),
      h("p.small", {}, `${timers.join("; ")}. A loser pays at most ${table.bet ? table.max_loss / table.bet : o.cap_units}× the bet.`),
      o.points
        ? [h("p.small", {}, "Points × bet: a win by Discard is paid by the discarder, a win by Draw or a Bisaklat by every loser."),
          h("div.points-tables", {},
            pointsTable("Win categories", entries.filter(isCategory)),
            pointsTable("Extras", entries.filter((e) => !isCategory(e))))]
        : h("p.small", {}, "Payments: win on a discard — the discarder 2, the others 1; self-draw — 2 each; +1 per kang of the winner.")));
}

function pointsTable(title, entries) {
  return h("table.points", {},
    h("caption", {}, title),
    h("tbody", {}, entries.map(([name, units]) => h("tr", { dataset: { entry: name } }, h("th", { scope: "row" }, name), h("td.num", {}, String(units))))));
}

/** Ka Wu Xing has one ruleset: its house rules and clocks. */
function kawuxingRules(table, o, open) {
  const lines = [
    `Claim window ${o.call_seconds} s`,
    o.turn_seconds ? `turn timer ${o.turn_seconds} s (auto-play on time-out)` : "no turn timer",
    o.turn_seconds && o.away_after_timeouts ? `marked away after ${o.away_after_timeouts} time-out${o.away_after_timeouts > 1 ? "s" : ""} in a row` : null,
  ].filter(Boolean);
  return h("details.rules", { open, dataset: { tableId: table.table_id } },
    h("summary", {}, "Rules", h("span.ruleset", {}, ": Ka Wu Xing")),
    h("div.rules-body", {},
      h("p.small", {}, `${lines.join("; ")}.`),
      h("p.small", {}, `Score cap ${o.cap ? `×${o.cap}` : "none"}${o.kong_on_kong ? "; kong on kong doubles" : ""}${o.loss_limit ? `; a loser pays at most ${o.loss_limit}` : ""}.`)));
}
