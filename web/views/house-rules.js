// House rules as a form: one typed field per option of the chosen ruleset (booleans as
// checkboxes, bounded numbers, enums as selects, Mahjong's points table), filled with the
// ruleset's values. `options()` gives only what the host changed, as the create-table
// request wants it (the server checks everything again).

import { h, mount } from "../dom.js";
import { RULES_DATA } from "./rules-data.js";
import { payoutTable } from "./rules-payouts.js";

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function numberInput(f, value, extra = {}) {
  return h("input", {
    type: "number", name: f.name, min: f.min, max: f.max, step: 1, inputmode: "numeric",
    value: value === null || value === undefined ? "" : String(value),
    placeholder: f.nullable ? `empty: ${f.nullable}` : null,
    "aria-describedby": extra.describedby,
    dataset: extra.dataset,
  });
}

/** A whole number in [min, max] from an input, null when empty and allowed. */
function readNumber(input, f, label) {
  const text = input.value.trim();
  if (!text) {
    if (f.nullable) return null;
    throw new Error(`${label}: enter a number from ${f.min} to ${f.max}.`);
  }
  const n = Number(text);
  if (!Number.isInteger(n) || n < f.min || n > f.max) {
    throw new Error(`${label}: enter a whole number from ${f.min} to ${f.max}${f.nullable ? ` (or leave it empty: ${f.nullable})` : ""}.`);
  }
  return n;
}

function fieldRow(f, preset) {
  const id = `house-${f.name}`;
  const hintId = `${id}-hint`;
  const hint = h("small.hint", { id: hintId }, f.help);
  if (f.kind === "bool") {
    const input = h("input", { type: "checkbox", id, name: f.name, checked: Boolean(preset), "aria-describedby": hintId });
    return { node: h("div.house-field.house-bool", {}, h("label.check", {}, input, ` ${f.label}`), hint), read: () => input.checked };
  }
  if (f.kind === "enum") {
    const input = h("select", { id, name: f.name, "aria-describedby": hintId },
      f.choices.map(([v, label]) => h("option", { value: v, selected: v === preset }, label)));
    return { node: h("label.field.house-field", { for: id }, h("span.label", {}, f.label), input, hint), read: () => input.value };
  }
  if (f.kind === "int") {
    const input = numberInput(f, preset, { describedby: hintId });
    input.id = id;
    return { node: h("label.field.house-field", { for: id }, h("span.label", {}, f.label), input, hint), read: () => readNumber(input, f, f.label) };
  }
  // points: an on/off switch (off = the plain payments) and one number per entry
  const on = h("input", { type: "checkbox", id, name: f.name, checked: preset !== null, "aria-describedby": hintId });
  const values = preset || f.defaults;
  const inputs = Object.keys(f.defaults).map((entry) => [entry, numberInput({ ...f, nullable: null }, values[entry], { dataset: { entry } })]);
  const table = h("table.house-points", {}, h("tbody", {}, inputs.map(([entry, input]) => {
    input.setAttribute("aria-label", `${entry} (units × bet)`);
    return h("tr", {}, h("th", { scope: "row" }, entry), h("td", {}, input));
  })));
  const body = h("details.house-points-table", {}, h("summary", {}, "Points per entry"), table);
  const sync = () => { body.hidden = !on.checked; };
  on.addEventListener("change", sync);
  sync();
  return {
    node: h("div.house-field.house-points", {}, h("label.check", {}, on, ` ${f.label}`), hint, body),
    read: () => {
      if (!on.checked) return null;
      const out = {};
      for (const [entry, input] of inputs) out[entry] = readNumber(input, { ...f, nullable: null }, entry);
      return out;
    },
  };
}

/**
 * The house-rules form for the `game` and `ruleset` <select>s it follows. `skip()` names
 * options edited elsewhere in the page (the dashboard's timer field).
 * Returns an element with `.options()` (throws an Error with a message on a bad value).
 */
export function houseRulesForm({ game, ruleset, skip = () => [] }) {
  const root = h("div.house-rules#house-rules");
  let rows = [];
  let current = null;

  function render() {
    const data = RULES_DATA[game.value];
    const rs = data?.rulesets[ruleset.value];
    if (!rs) { mount(root); rows = []; current = null; return; }
    current = { game: game.value, ruleset: ruleset.value, preset: rs.options };
    const left = new Set(skip());
    rows = data.fields.filter((f) => !left.has(f.name)).map((f) => ({ f, ...fieldRow(f, rs.options[f.name]) }));
    mount(root,
      h("p.small.muted", {}, `Filled in with the ${rs.label} ruleset. Change what your table plays differently.`),
      h("div.house-grid", {}, rows.map((r) => r.node)),
      h("details.house-payouts", {}, h("summary", {}, `Payouts of ${rs.label}`), payoutTable(game.value, ruleset.value)));
  }
  // The dashboard refills the ruleset list on a game change before we read it.
  const later = () => setTimeout(render, 0);
  game.addEventListener("change", later);
  ruleset.addEventListener("change", later);
  render();
  later(); // the page may fill the ruleset list right after building us

  root.options = () => {
    if (!current || current.game !== game.value || current.ruleset !== ruleset.value) render();
    const out = {};
    for (const { f, read } of rows) {
      const value = read();
      const preset = current.preset[f.name];
      if (f.kind === "points") {
        if (value === null) { if (preset !== null) out[f.name] = null; continue; }
        const base = preset || f.defaults;
        const changed = Object.fromEntries(Object.entries(value).filter(([k, v]) => v !== base[k]));
        if (preset === null || Object.keys(changed).length) out[f.name] = changed;
        continue;
      }
      if (!same(value, preset)) out[f.name] = value;
    }
    return out;
  };
  return root;
}
