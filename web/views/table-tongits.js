// Tongits on the felt: opponents, stock and discards, everyone's melds, your hand and
// the moves the server lists as legal for you now.

import { cardBack, cardButton, cardValue, cardView, sortCards } from "../cards.js";
import { h } from "./table-dom.js";
import { countdown } from "./clock.js";
import { humanize } from "./extras.js";
import { first, matching, ofType } from "./legal.js";

const KNOWN_ACTIONS = ["draw", "take_discard", "meld", "expose_secret_set", "lay_off", "discard", "call_draw", "fight", "fold", "time_out", "back"];
const ENDINGS = { tongits: "Tongits", stock_out: "Stock out", draw: "Draw" };

export function concealed(view) {
  return view.hand || [];
}

/** One sentence for screen readers when it becomes your move. */
export function prompt(view, seat, name) {
  if (seat === null || seat === undefined) return "";
  const legal = view.legal || [];
  if (first(legal, "fight")) return `${name(view.draw_call.caller)} called Draw. Fight or fold?`;
  if (view.phase === "start" && legal.length) return "Your turn: draw, or take the discard.";
  if (view.phase === "play" && legal.length) return "Meld, lay off, then discard.";
  return "";
}

function meldBox(meld, ctx) {
  const { view, selection } = ctx;
  const fit = ofType(view.legal, "lay_off").find((a) => a.meld_id === meld.id && sameSel(a.cards, selection));
  const cards = meld.face_down && !meld.cards.length
    ? Array.from({ length: meld.size }, () => cardBack({ small: true }))
    : sortCards(meld.cards, meld.kind === "run" ? "suit" : "rank").map((c) => cardView(c, { small: true }));
  const label = `${meld.kind === "run" ? "Run" : "Set"} of ${ctx.name(meld.owner)}${meld.face_down ? " (face down)" : ""}`;
  // Named by its text and its cards' names ("Set of Ana: 6 of spades, …"), not by an
  // aria-label that leaves out the cards one sees (WCAG 2.5.3, label in name).
  return h(`button.meld${fit ? ".can-lay" : ""}`, {
    type: "button",
    disabled: !fit || ctx.busy,
    title: fit ? "Lay off here" : label,
    dataset: { meld: String(meld.id), owner: String(meld.owner) },
    onclick: () => fit && ctx.act(fit),
  }, h("span.sr-only", {}, fit ? `Lay off the selected cards on ${label}: ` : `${label}: `), cards);
}

function sameSel(cards, selection) {
  if (!selection.length || cards.length !== selection.length) return false;
  const a = [...cards].sort();
  const b = [...selection].sort();
  return a.every((c, i) => c === b[i]);
}

function playerArea(ctx, s, { bottom = false } = {}) {
  const { view } = ctx;
  const melds = view.melds.filter((m) => m.owner === s);
  const size = view.hand_sizes[s];
  const turn = view.to_act.includes(s);
  const status = [];
  if (view.dealer === s) status.push(h("span.chip.dealer", { title: "Dealer" }, "D"));
  status.push(h(`span.chip${view.opened[s] ? ".opened" : ""}`, {}, view.opened[s] ? "Opened" : "Not opened"));
  if (view.draw_call) {
    const answer = view.draw_call.answers[s];
    if (answer && answer !== "pending") status.push(h(`span.chip.answer-${answer}`, {}, answer === "caller" ? "Called Draw" : answer));
  }
  return h(`div.player-area${turn ? ".acting" : ""}${bottom ? ".me" : ""}`, { role: "group", dataset: { seat: String(s) }, "aria-label": `${ctx.name(s)}'s area` },
    h("div.player-head", {},
      h("span.player-name", {}, ctx.name(s)),
      status,
      bottom ? null : h("span.hand-count", { role: "img", "aria-label": `${size} cards in hand` },
        h("span.mini-fan", { "aria-hidden": "true" }, Array.from({ length: Math.min(size, 13) }, () => cardBack({ small: true }))),
        h("span.count", {}, `${size}`)),
      ctx.markers ? ctx.markers(s) : null,
      turn ? h("span.chip.turn", {}, "to play") : null,
      ctx.clockOf ? ctx.clockOf(s) : null),
    h("div.melds", { role: "group", "aria-label": `${ctx.name(s)}'s melds` },
      melds.length ? melds.map((m) => meldBox(m, ctx)) : h("span.muted.small", {}, "No melds yet")));
}

function center(ctx) {
  const { view } = ctx;
  const discards = view.discards || [];
  const top = discards[discards.length - 1];
  const takes = ofType(view.legal, "take_discard");
  const take = matching(view.legal, "take_discard", ctx.selection);
  const under = discards.slice(-6, -1);
  return h("div.center", {},
    h("div.pile.stock#stock", { role: "group", "aria-label": `Stock: ${view.stock_count} cards` },
      view.stock_count ? cardBack() : h("span.card.empty", { "aria-hidden": "true" }),
      h("span.pile-label", {}, "Stock ", h("strong#stock-count", {}, String(view.stock_count)))),
    h("div.pile.discards#discards", { role: "group", "aria-label": `Discard pile: ${discards.length} cards` },
      h("div.under", { "aria-hidden": "true" }, under.map((c) => cardView(c, { small: true }))),
      top
        ? h(`button.top-discard${take ? ".can-take" : ""}`, {
          type: "button",
          id: "top-discard",
          disabled: !take || ctx.busy,
          onclick: () => take && ctx.act(take),
        }, h("span.sr-only", {}, take ? "Take the discard with your selected cards: " : "Top discard: "), cardView(top))
        : h("span.card.empty", { "aria-hidden": "true" }),
      h("span.pile-label", {}, takes.length && !take ? "Select cards that meld with it" : "Discards")));
}

function drawCallPanel(ctx) {
  const { view, frame } = ctx;
  const call = view.draw_call;
  if (!call || view.phase !== "answers") return null;
  const fight = first(view.legal, "fight");
  const fold = first(view.legal, "fold");
  return h("div.prompt#fight-prompt", { role: "alertdialog", "aria-labelledby": "fight-title" },
    h("h2#fight-title", {}, `${ctx.name(call.caller)} called Draw!`),
    h("ul.answers", {}, call.answers.map((a, s) => h("li", {}, `${ctx.name(s)}: `, h("strong", {}, a)))),
    fight || fold
      ? h("div.prompt-actions", {},
        h("button.primary#fight", { type: "button", disabled: !fight || ctx.busy, onclick: () => ctx.act(fight), dataset: { action: "fight" } }, "Fight"),
        h("button#fold", { type: "button", disabled: !fold || ctx.busy, onclick: () => ctx.act(fold), dataset: { action: "fold" } }, "Fold"),
        frame.deadline_ms ? countdown(frame.deadline_ms, { big: true }) : null)
      : h("p.muted", {}, "Waiting for the answers…", frame.deadline_ms ? [" ", countdown(frame.deadline_ms)] : null));
}

function myHand(ctx) {
  const { view, selection } = ctx;
  const cards = sortCards(view.hand || [], ctx.sort);
  const points = view.options?.deadwood === "hand" ? (view.hand || []).reduce((n, c) => n + cardValue(c), 0) : null;
  return h("div.my-hand", {},
    h("div.hand-head", {},
      h("h2.hand-title", {}, "Your hand ", h("span.muted.small", {}, `${cards.length} cards${points !== null ? ` · ${points} points` : ""}`)),
      h("div.hand-tools", {},
        selection.length ? h("button.ghost.small#clear-selection", { type: "button", onclick: () => ctx.setSelection([]) }, `Clear (${selection.length})`) : null,
        h("button.ghost.small#sort", { type: "button", onclick: () => ctx.setSort(ctx.sort === "suit" ? "rank" : "suit") }, ctx.sort === "suit" ? "Sort by rank" : "Sort by suit"))),
    h("div.hand.cards#hand", { role: "group", "aria-label": "Your cards: arrow keys move, Space selects" },
      cards.map((c, i) => cardButton(c, { selected: selection.includes(c), onToggle: (name) => ctx.toggle(name), index: i }))));
}

function hint(ctx) {
  const { view, seat } = ctx;
  if (seat === null || seat === undefined) return "You are watching: nobody's cards are shown until the hand ends.";
  const legal = view.legal || [];
  if (view.phase === "over") return "The hand is over.";
  if (view.away?.[seat]) return "You are away: the server plays your turns until you tap I'm back (or make a move).";
  if (view.phase === "answers") return first(legal, "fight") ? "Fight or fold?" : "Waiting for answers to the Draw call…";
  if (!legal.length) return `Waiting for ${ctx.name(view.turn)}…`;
  if (view.phase === "start") {
    return ofType(legal, "take_discard").length
      ? "Your turn: Draw, or select cards that meld with the top discard and Take it."
      : "Your turn: Draw from the stock.";
  }
  return "Select cards to Meld or Lay off, then select one card and Discard.";
}

/** Why each move is not available now (null: it is). Shown as the button's title and,
 * for the moves that hang on what you selected, in the tray's "why" line. */
export function reasons(ctx) {
  const { view, selection, seat } = ctx;
  const legal = view.legal || [];
  const n = selection.length;
  const mine = legal.length > 0;
  const waiting = view.phase === "answers" ? "the Draw call is being answered" : `it is ${ctx.name(view.turn)}'s turn`;
  const notNow = ctx.busy ? "sending your move…" : !mine ? `Not your move: ${waiting}` : null;
  const play = view.phase === "play";
  const out = {};
  const set = (id, cond, text, sel = false) => { out[id] = cond ? { text, sel } : null; };
  set("draw", !first(legal, "draw"), notNow || (play ? "You already drew this turn" : "You cannot draw now"));
  const takes = ofType(legal, "take_discard");
  set("take", !matching(legal, "take_discard", selection),
    notNow || (!takes.length ? (play ? "You already drew this turn" : "The top discard melds with nothing in your hand")
      : n ? `These ${n} card${n > 1 ? "s do" : " does"} not meld with the top discard` : "Select the cards that meld with the top discard"), Boolean(takes.length && n));
  const melds = ofType(legal, "meld");
  set("meld", !matching(legal, "meld", selection),
    notNow || (!play ? "Draw or take the discard first" : n < 3 ? "Select 3 or more cards of a set or run"
      : melds.length || n >= 3 ? `These ${n} cards are not a set or run` : "No meld in your hand"), play && n > 0);
  const layoffs = ofType(legal, "lay_off").filter((a) => sameSel(a.cards, selection));
  set("lay-off", layoffs.length !== 1,
    notNow || (!play ? "Draw or take the discard first" : layoffs.length > 1 ? "Tap one of the melds below to lay off on"
      : n ? `These ${n === 1 ? "card fits" : "cards fit"} no meld on the table` : "Select cards that fit a meld on the table"), play && n > 0);
  const discard = n === 1 ? legal.find((a) => a.type === "discard" && a.card === selection[0]) : null;
  set("discard", !discard, notNow || (!play ? "Draw or take the discard first" : n === 0 ? "Select one card to discard" : n > 1 ? `Select just one card to discard (${n} selected)` : "You cannot discard that card now"), play && n > 0);
  set("call-draw", !first(legal, "call_draw"), notNow || (view.phase === "start" ? "Call Draw needs an exposed meld of yours, at the start of your turn" : "Call Draw only at the start of your turn"));
  set("secret", !matching(legal, "expose_secret_set", selection), notNow || (!play ? "Draw or take the discard first" : "Select four cards of one rank"), play && n > 0);
  return out;
}

function actionBar(ctx) {
  const { view, selection } = ctx;
  const legal = view.legal || [];
  const why = reasons(ctx);
  const draw = first(legal, "draw");
  const call = first(legal, "call_draw");
  const take = matching(legal, "take_discard", selection);
  const meld = matching(legal, "meld", selection);
  const secret = matching(legal, "expose_secret_set", selection);
  const layoffs = ofType(legal, "lay_off").filter((a) => sameSel(a.cards, selection));
  const discard = selection.length === 1 ? legal.find((a) => a.type === "discard" && a.card === selection[0]) : null;
  const btn = (id, label, action, { primary = false } = {}) => {
    const reason = action && !ctx.busy ? null : why[id]?.text || (ctx.busy ? "sending your move…" : null);
    return h(`button${primary ? ".primary" : ""}`, {
      type: "button",
      id,
      dataset: { action: id, why: reason || undefined },
      disabled: !action || ctx.busy,
      title: reason || undefined,
      onclick: () => action && ctx.act(action),
    }, label);
  };
  const meldName = (a) => {
    const m = view.melds.find((x) => x.id === a.meld_id);
    return m ? `${ctx.name(m.owner)}'s ${m.kind}` : `meld ${a.meld_id}`;
  };
  return h("div.action-bar#actions", { role: "group", "aria-label": "Your moves" },
    btn("draw", "Draw", draw, { primary: true }),
    btn("take", "Take discard", take, { primary: Boolean(take) }),
    btn("meld", "Meld", meld, { primary: Boolean(meld) }),
    view.options?.secret_sets ? btn("secret", "Secret set", secret) : null,
    btn("lay-off", "Lay off", layoffs.length === 1 ? layoffs[0] : null),
    // Several melds take the selection: one button per meld, here in the tray.
    layoffs.length > 1 ? layoffs.map((a) => h("button.lay-choice", {
      type: "button", dataset: { key: `lay-${a.meld_id}`, meldTarget: String(a.meld_id) }, disabled: ctx.busy, onclick: () => ctx.act(a),
    }, `On ${meldName(a)}`)) : null,
    btn("discard", "Discard", discard, { primary: Boolean(discard) }),
    btn("call-draw", "Call Draw", call),
    // A move this client does not know yet still gets a button (sent as listed).
    legal.filter((a) => !KNOWN_ACTIONS.includes(a.type)).map((a, i) =>
      h("button", { type: "button", id: `extra-action-${i}`, disabled: ctx.busy, onclick: () => ctx.act(a) }, humanize(a.type))));
}

/** The reasons that hang on the selection, in one visible line under the moves. */
function whyLine(ctx) {
  const why = reasons(ctx);
  const n = ctx.selection.length;
  // The move the selection is most likely meant for: one card is a discard (or a lay-off),
  // two or more a meld (or taking the discard, or a lay-off).
  const order = n === 1 ? ["discard", "lay-off"] : ["meld", "take", "lay-off"];
  if (order.some((id) => why[id] === null)) return h("p.why#why", { "aria-live": "polite" }, ""); // a move is ready
  const first = order.map((id) => why[id]).find((r) => r && r.sel);
  return h("p.why#why", { "aria-live": "polite" }, first ? first.text : "");
}

/** The board: opponents, stock and discards, and your own melds. */
export function renderHand(ctx) {
  const { view, seat } = ctx;
  const seated = seat !== null && seat !== undefined;
  const others = seated ? [(seat + 1) % 3, (seat + 2) % 3] : [0, 1, 2];
  return h("div.board.tongits", { dataset: { phase: view.phase, version: String(ctx.frame.version) } },
    h("div.opponents", {}, others.map((s) => playerArea(ctx, s))),
    center(ctx),
    seated ? playerArea(ctx, seat, { bottom: true }) : null,
    view.result ? h("p.muted", {}, `Hand over: ${ENDINGS[view.result.ending] || view.result.ending}.`) : null);
}

/** The tray (fixed at the bottom of a phone): the Draw call prompt, the hint, your hand,
 * your clock, your moves and why a move is grey. */
export function renderTray(ctx) {
  const { view, seat } = ctx;
  const seated = seat !== null && seat !== undefined;
  const top = (view.discards || [])[(view.discards || []).length - 1];
  return [
    drawCallPanel(ctx),
    h("p.turn-hint#hint", { "aria-live": "polite" }, hint(ctx),
      top && ofType(view.legal, "take_discard").length ? h("span.hint-card", {}, h("span.sr-only", {}, " Top discard:"), " ", cardView(top, { small: true })) : null),
    seated ? myHand(ctx) : null,
    seated ? ctx.turnStatus : null,
    seated ? actionBar(ctx) : null,
    seated ? whyLine(ctx) : null,
  ];
}

const RULESET_NAMES = { kalaro: "KaLaro", classic: "Classic" };

/** A Tongits table's rules — deadwood, ties, switches, payments and its clocks — as a
 *  disclosure (null for other games). `open` keeps it open across redraws. */
export function rulesPanel(table, { open = false } = {}) {
  const o = table.options || {};
  if (table.game !== "tongits" || !o.ruleset) return null;
  const rules = [
    o.deadwood === "outside_melds" ? "Deadwood: only the cards outside your melds count" : "Deadwood: every card left in your hand counts",
    `A Draw tie goes to the ${o.draw_tie === "fighter" ? "fighter" : "caller"}`,
    o.stock_out_tie === "last_drawer" ? "Stock out tie: the last drawer wins" : "Stock out tie: the winners split",
    o.sapaw_blocks_call ? "A lay-off on your melds (sapaw) blocks your next Draw call" : null,
    o.secret_sets ? "Secret sets: a four-card set may be exposed face down" : null,
    `Payments: table ${o.payments === "table_b" ? "B" : "A"}`,
  ].filter(Boolean);
  const clocks = [
    o.turn_seconds ? `Turn clock ${o.turn_seconds} s (on time-out we draw and discard for you)` : "No turn clock",
    `Fight/Fold ${o.fight_seconds} s (on time-out: fold)`,
    o.turn_seconds && o.away_after_timeouts ? `marked away after ${o.away_after_timeouts} time-out${o.away_after_timeouts > 1 ? "s" : ""} in a row` : null,
  ].filter(Boolean);
  return h("details.rules", { open, dataset: { tableId: table.table_id } },
    h("summary", {}, "Rules", h("span.ruleset", {}, `: ${RULESET_NAMES[o.ruleset] || o.ruleset}`)),
    h("div.rules-body", {},
      h("ul.rule-list", {}, rules.map((r) => h("li", {}, r))),
      h("p.small.clock-rules", {}, `${clocks.join("; ")}.`)));
}
