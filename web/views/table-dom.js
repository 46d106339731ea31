// The table's DOM layer: `h` (dom.js's, with listeners that can be swapped later) and
// `patch`, which makes a live region look like a freshly rendered one while keeping
// every element that is still there. The table is rendered from its state in full on
// every change (nothing can be forgotten), and patching keeps focus, the selection, open
// disclosures and the scroll position where they were: no focus is ever put back.

import { h as baseH } from "../dom.js";

/** Like dom.js's `h`, but `on*` listeners go through `el.__on`, so `patch` can give a
 * kept element the listeners of its fresh twin (their closures see the new state). */
export function h(tag, attrs, ...children) {
  if (!attrs || typeof attrs !== "object" || attrs instanceof Node || Array.isArray(attrs)) {
    return baseH(tag, {}, ...(attrs === undefined ? [] : [attrs]), ...children);
  }
  const plain = {};
  const on = {};
  for (const [key, value] of Object.entries(attrs)) {
    if (key.startsWith("on") && typeof value === "function") on[key.slice(2).toLowerCase()] = value;
    else plain[key] = value;
  }
  const el = baseH(tag, plain, ...children);
  for (const [type, fn] of Object.entries(on)) listen(el, type, fn);
  return el;
}

function listen(el, type, fn) {
  if (!el.__on) el.__on = {};
  if (!(type in el.__on)) el.addEventListener(type, (event) => el.__on[type]?.(event));
  el.__on[type] = fn;
}

/** What makes two elements "the same" across renders. */
function keyOf(node) {
  if (node.nodeType !== 1) return null;
  const d = node.dataset;
  if (d.key) return `k:${d.key}`;
  if (node.id) return `#${node.id}`;
  if (d.card) return `c:${d.card}`;
  if (d.tile && d.index) return `t:${d.tile}:${d.index}`;
  if (d.meld) return `m:${d.meld}`;
  if (d.seat) return `s:${d.seat}:${node.className.split(" ")[0]}`;
  return null;
}

// Attributes the user changes (a disclosure's open state): kept as they are.
const USER_OWNED = new Set(["open"]);

function morphAttributes(old, fresh) {
  for (const { name } of [...old.attributes]) {
    if (!fresh.hasAttribute(name) && !USER_OWNED.has(name)) old.removeAttribute(name);
  }
  for (const { name, value } of [...fresh.attributes]) {
    if (USER_OWNED.has(name) && old.tagName === "DETAILS") continue;
    if (old.getAttribute(name) !== value) old.setAttribute(name, value);
  }
  if (fresh.__on) for (const [type, fn] of Object.entries(fresh.__on)) listen(old, type, fn);
  if (old.__on) for (const type of Object.keys(old.__on)) if (!fresh.__on || !(type in fresh.__on)) old.__on[type] = null;
}

function same(a, b) {
  return a.nodeType === b.nodeType && a.nodeName === b.nodeName && keyOf(a) === keyOf(b);
}

function morph(old, fresh) {
  if (old.nodeType === 3 || old.nodeType === 8) {
    if (old.data !== fresh.data) old.data = fresh.data;
    return old;
  }
  morphAttributes(old, fresh);
  patchChildren(old, [...fresh.childNodes]);
  return old;
}

/** Make `parent`'s children match `fresh` (nodes rendered just now), reusing what matches:
 * keyed elements by key, the rest by position among unkeyed nodes of the same tag. */
export function patchChildren(parent, fresh) {
  const olds = [...parent.childNodes];
  const keyed = new Map();
  for (const node of olds) {
    const key = keyOf(node);
    if (key !== null && !keyed.has(key)) keyed.set(key, node);
  }
  const used = new Set();
  let cursor = 0;
  const result = [];
  for (const node of fresh) {
    const key = keyOf(node);
    let match = null;
    if (key !== null) {
      const cand = keyed.get(key);
      if (cand && !used.has(cand) && same(cand, node)) match = cand;
    } else {
      while (cursor < olds.length && (used.has(olds[cursor]) || keyOf(olds[cursor]) !== null)) cursor += 1;
      if (cursor < olds.length && same(olds[cursor], node)) match = olds[cursor];
      if (match) cursor += 1;
    }
    if (match) {
      used.add(match);
      result.push(morph(match, node));
    } else {
      result.push(node);
    }
  }
  for (const node of olds) if (!used.has(node)) node.remove();
  // Put them in order, moving only what is out of place (a moved node loses focus).
  let at = parent.firstChild;
  for (const node of result) {
    if (node === at) {
      at = at.nextSibling;
    } else {
      parent.insertBefore(node, at);
    }
  }
}

/** Patch `region` to hold `children` (anything `h` accepts as children). */
export function patch(region, ...children) {
  const holder = baseH("div", {}, ...children);
  patchChildren(region, [...holder.childNodes]);
  return region;
}
