// Playing cards for Tongits, from the server's notation: rank then suit, "AS" "10H" "KC".

import { h } from "./views/table-dom.js";

const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
const SUIT_SYMBOL = { S: "♠", H: "♥", D: "♦", C: "♣" };
const SUIT_NAME = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
const RANK_NAME = { A: "Ace", J: "Jack", Q: "Queen", K: "King" };
// Suits alternate black/red in a sorted hand so neighbouring runs are easy to tell apart.
const SUIT_ORDER = { S: 0, H: 1, C: 2, D: 3 };

export function parseCard(name) {
  const suit = name.slice(-1);
  const rank = name.slice(0, -1);
  return { rank, suit, symbol: SUIT_SYMBOL[suit] || "?", red: suit === "H" || suit === "D" };
}

export function cardLabel(name) {
  const { rank, suit } = parseCard(name);
  return `${RANK_NAME[rank] || rank} of ${SUIT_NAME[suit] || suit}`;
}

export function cardValue(name) {
  const { rank } = parseCard(name);
  const i = RANKS.indexOf(rank);
  return i < 0 ? 0 : Math.min(i + 1, 10);
}

/** Sort by suit then rank ("suit") or by rank then suit ("rank"). */
export function sortCards(cards, by = "suit") {
  const key = (c) => {
    const { rank, suit } = parseCard(c);
    const r = RANKS.indexOf(rank);
    const s = SUIT_ORDER[suit] ?? 9;
    return by === "rank" ? r * 10 + s : s * 100 + r;
  };
  return [...cards].sort((a, b) => key(a) - key(b));
}

function face(name) {
  const { rank, symbol } = parseCard(name);
  return [
    h("span.corner", { "aria-hidden": "true" }, h("span.rank", {}, rank), h("span.suit", {}, symbol)),
    h("span.pip", { "aria-hidden": "true" }, symbol),
  ];
}

/** A card to look at (melds, discards, revealed hands). */
export function cardView(name, { small = false, extra = "" } = {}) {
  const { red } = parseCard(name);
  return h(
    `span.card${red ? ".red" : ".black"}${small ? ".small" : ""}`,
    { role: "img", "aria-label": cardLabel(name), class: extra, dataset: { card: name } },
    face(name),
  );
}

/** A card in your hand: a toggle button (Space/Enter selects, arrows move focus). Its
 * name is its text ("Ace of spades", for screen readers only), not an aria-label: a
 * label that leaves out the visible "A" fails WCAG 2.5.3 (label in name). */
export function cardButton(name, { selected = false, onToggle, index = 0 } = {}) {
  const { red } = parseCard(name);
  return h(
    `button.card${red ? ".red" : ".black"}${selected ? ".selected" : ""}`,
    {
      type: "button",
      "aria-pressed": selected ? "true" : "false",
      dataset: { card: name, index: String(index) },
      onclick: () => onToggle?.(name),
    },
    face(name),
    h("span.sr-only.name", {}, cardLabel(name)),
  );
}

/** The back of a card (opponents' hands, the stock). */
export function cardBack({ small = false, label } = {}) {
  return h(`span.card.back${small ? ".small" : ""}`, label ? { role: "img", "aria-label": label } : { "aria-hidden": "true" });
}
