// Mahjong tiles from the server's notation: 1m-9m characters (萬), 1p-9p dots,
// 1s-9s bamboo, 1z-7z East South West North White Green Red, 1f-8f flowers.

import { h } from "./views/table-dom.js";

const HONOURS = {
  "1z": { glyph: "東", name: "East wind", cls: "wind" },
  "2z": { glyph: "南", name: "South wind", cls: "wind" },
  "3z": { glyph: "西", name: "West wind", cls: "wind" },
  "4z": { glyph: "北", name: "North wind", cls: "wind" },
  "5z": { glyph: "", name: "White dragon", cls: "white" },
  "6z": { glyph: "發", name: "Green dragon", cls: "green" },
  "7z": { glyph: "中", name: "Red dragon", cls: "red" },
};
const SUIT_NAME = { m: "characters", p: "dots", s: "bamboo", f: "flower" };
const NUMERALS = ["", "一", "二", "三", "四", "五", "六", "七", "八", "九"];
const ORDER = ["m", "p", "s", "z", "f"];

export function tileLabel(name) {
  if (HONOURS[name]) return HONOURS[name].name;
  const n = name[0];
  const suit = name[1];
  if (suit === "f") return `Flower ${n}`;
  return `${n} ${SUIT_NAME[suit] || suit}`;
}

export function sortTiles(tiles) {
  const key = (t) => ORDER.indexOf(t[1]) * 10 + Number(t[0]);
  return [...tiles].sort((a, b) => key(a) - key(b));
}

function pattern(n, kind) {
  // n dots or n bamboo sticks, laid out on a small grid.
  const marks = [];
  for (let i = 0; i < n; i += 1) marks.push(h(`span.mark.${kind}${kind === "dot" && n === 1 ? ".big" : ""}`));
  return h(`span.pattern.n${n}`, { "aria-hidden": "true" }, marks);
}

function face(name) {
  const honour = HONOURS[name];
  if (honour) {
    return [h(`span.glyph.${honour.cls}`, { "aria-hidden": "true" }, honour.glyph)];
  }
  const n = Number(name[0]);
  const suit = name[1];
  if (suit === "m") {
    return [
      h("span.num", { "aria-hidden": "true" }, String(n)),
      h("span.wan", { "aria-hidden": "true" }, h("span.numeral", {}, NUMERALS[n]), h("span.wan-char", {}, "萬")),
    ];
  }
  if (suit === "f") {
    return [h("span.num", { "aria-hidden": "true" }, String(n)), h("span.glyph.flower", { "aria-hidden": "true" }, "花")];
  }
  return [h("span.num", { "aria-hidden": "true" }, String(n)), pattern(n, suit === "p" ? "dot" : "stick")];
}

function classes(name) {
  const suit = name[1];
  return `tile suit-${suit} t-${name}`;
}

/** A tile to look at (melds, discards, flowers, revealed hands). */
export function tileView(name, { small = false, extra = "" } = {}) {
  return h(
    "span",
    {
      class: `${classes(name)}${small ? " small" : ""} ${extra}`,
      role: "img",
      "aria-label": tileLabel(name),
      dataset: { tile: name },
    },
    face(name),
  );
}

/** A tile in your hand: a toggle button, named by its screen-reader-only text (an
 * aria-label without the visible "3" and 萬 would fail WCAG 2.5.3, label in name);
 * `note` adds to it, e.g. "(joker)". */
export function tileButton(name, { selected = false, onToggle, index = 0, extra = "", note = "" } = {}) {
  return h(
    "button",
    {
      type: "button",
      class: `${classes(name)}${selected ? " selected" : ""} ${extra}`,
      "aria-pressed": selected ? "true" : "false",
      dataset: { tile: name, index: String(index) },
      onclick: () => onToggle?.(name, index),
    },
    face(name),
    h("span.sr-only.name", {}, note ? `${tileLabel(name)} ${note}` : tileLabel(name)),
  );
}

export function tileBack({ small = false } = {}) {
  return h(`span.tile.back${small ? ".small" : ""}`, { "aria-hidden": "true" });
}
