// Tiny DOM helpers. Every piece of text goes in through textContent (or an attribute),
// never through innerHTML, so names and chat typed by players can never become markup.

import { formatDate } from "./format.js";

/**
 * h("button.primary#deal", {onclick, disabled: true, "aria-label": "Deal"}, "Deal", child…)
 * Attributes: `on*` functions become listeners, `class`, `dataset`, booleans toggle
 * presence, anything else is set with setAttribute. Children may be strings, numbers,
 * nodes, arrays, or null/false (skipped).
 */
export function h(tag, attrs = {}, ...children) {
  const [name, ...rest] = tag.split(/(?=[.#])/);
  const el = document.createElement(name || "div");
  for (const part of rest) {
    if (part.startsWith(".")) el.classList.add(part.slice(1));
    else if (part.startsWith("#")) el.id = part.slice(1);
  }
  if (attrs && (typeof attrs !== "object" || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = {};
  }
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === "class") {
      for (const c of String(value).split(/\s+/)) if (c) el.classList.add(c);
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (key === "value" && "value" in el) {
      el.value = value;
    } else if (key === "checked" || key === "selected") {
      el[key] = Boolean(value);
    } else if (value === true) {
      el.setAttribute(key, "");
    } else {
      el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replace everything inside `el` with `children`. */
export function mount(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** Format credits with thousands separators. */
export function credits(n) {
  return Number(n || 0).toLocaleString("en-US");
}

export function signed(n) {
  if (n > 0) return `+${credits(n)}`;
  if (n < 0) return `−${credits(-n)}`;
  return "0";
}

/** Every date the client shows, in the one format of format.js ("1 Dec 2026, 19:05"). */
export function when(iso) {
  return formatDate(iso);
}

/** Polite announcements for screen readers (turn changes, prompts). */
export function announce(text) {
  const live = document.getElementById("live");
  if (!live) return;
  live.textContent = "";
  // A fresh text node after a tick makes screen readers read repeated messages too.
  setTimeout(() => { live.textContent = text; }, 30);
}

let toastTimer = 0;
/** A short message at the bottom of the screen; `kind` is "info" or "error". */
export function toast(text, kind = "info") {
  const box = document.getElementById("toast");
  if (!box) return;
  box.textContent = text;
  box.className = `toast show ${kind}`;
  box.setAttribute("role", kind === "error" ? "alert" : "status");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.className = "toast"; }, kind === "error" ? 6000 : 3500);
}

/** Read an <form>'s named fields as an object of strings. */
export function formValues(form) {
  return Object.fromEntries(new FormData(form).entries());
}

/** A labelled field: <label>Text <input …></label> with an optional hint. */
export function field(label, input, hint) {
  return h("label.field", {}, h("span.label", {}, label), input, hint ? h("small.hint", {}, hint) : null);
}
