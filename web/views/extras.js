// Fields a newer server may add (the joker/pinoy Mahjong rulesets: a joker tile, a win
// category, why Win is not offered, a points table) are shown generically, so the
// client renders them before it knows them by name.

import { h } from "../dom.js";
import { tileView } from "../tiles.js";
import { cardView } from "../cards.js";

const TILE = /^([1-9][mps]|[1-7]z|[1-8]f)$/;
const CARD = /^(A|[2-9]|10|J|Q|K)[SHDC]$/;

export function humanize(key) {
  const text = String(key).replace(/_/g, " ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function valueNode(value, game) {
  if (value === null || value === undefined) return h("span.muted", {}, "—");
  if (typeof value === "string") {
    if (game === "mahjong" && TILE.test(value)) return tileView(value, { small: true });
    if (game === "tongits" && CARD.test(value)) return cardView(value, { small: true });
    return h("span", {}, value);
  }
  if (typeof value === "number" || typeof value === "boolean") return h("span", {}, value === true ? "yes" : value === false ? "no" : String(value));
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v === "string" && (TILE.test(v) || CARD.test(v)))) {
      return h("span.tile-row", {}, value.map((v) => valueNode(v, game)));
    }
    return h("span", {}, value.map((v) => (typeof v === "object" ? JSON.stringify(v) : String(v))).join(", "));
  }
  // A small table for flat objects (e.g. a points table per category).
  const entries = Object.entries(value);
  if (entries.every(([, v]) => typeof v !== "object" || v === null)) {
    return h("table.mini", {}, h("tbody", {}, entries.map(([k, v]) => h("tr", {}, h("th", { scope: "row" }, humanize(k)), h("td", {}, String(v))))));
  }
  return h("code", {}, JSON.stringify(value));
}

/** A definition list of the keys of `obj` that are not in `known` (null if none). */
export function extras(obj, known, game, { className = "extras" } = {}) {
  if (!obj || typeof obj !== "object") return null;
  // Unset values (null, false, empty lists) say nothing worth a line.
  const keys = Object.keys(obj).filter((k) => !known.includes(k) && obj[k] !== null && obj[k] !== undefined
    && obj[k] !== false && !(Array.isArray(obj[k]) && !obj[k].length));
  if (!keys.length) return null;
  return h(`dl.${className}`, {}, keys.map((k) => [h("dt", {}, humanize(k)), h("dd", { dataset: { extra: k } }, valueNode(obj[k], game))]));
}
