// Each ruleset's payout table and hold, drawn from rules-data.js (generated from the
// engines' scoring tables, so what is shown is what the server pays).

import { h } from "../dom.js";
import { RULES_DATA } from "./rules-data.js";

function grid(spec, id) {
  return h("table.payout", { id, dataset: { rows: String(spec.rows.length) } },
    h("caption", {}, spec.caption),
    spec.head ? h("thead", {}, h("tr", {}, spec.head.map((c) => h("th", { scope: "col" }, c)))) : null,
    h("tbody", {}, spec.rows.map(([name, ...cells]) => h("tr", {},
      h("th", { scope: "row" }, name),
      cells.map((c) => h("td", {}, c))))));
}

/** The payout table(s), notes and hold of one ruleset of `game`. */
export function payoutTable(game, ruleset) {
  const data = RULES_DATA[game]?.rulesets[ruleset];
  if (!data) return null;
  const p = data.payouts;
  const id = `payout-${game}-${ruleset}`;
  // It scrolls sideways on a phone: focusable, so a keyboard can scroll it too.
  return h("div.payout-block", { dataset: { game, ruleset }, tabindex: "0", role: "group", "aria-label": `Payouts: ${data.label || ruleset}` },
    grid(p, id),
    p.kongs ? grid(p.kongs, `${id}-kongs`) : null,
    (p.notes || []).map((n) => h("p.small", {}, n)),
    h("p.small.hold", {}, `To sit you need ${data.hold}× the bet available: the most one player can lose in a hand with these rules.`));
}

/** Every ruleset of `game`, each in its own disclosure (the first open). */
export function payoutSection(game, { open = false } = {}) {
  const entry = RULES_DATA[game];
  return h("div.payouts", {},
    Object.entries(entry.rulesets).map(([name, r], i) => h("details.payout-ruleset", { open: open || i === 0, dataset: { ruleset: name } },
      h("summary", {}, `Payouts: ${r.label}`),
      payoutTable(game, name))));
}

/** "4× (KaLaro), 17× (Classic)": the holds of a game's rulesets. */
export function holds(game) {
  return Object.values(RULES_DATA[game].rulesets).map((r) => `${r.hold}×${Object.keys(RULES_DATA[game].rulesets).length > 1 ? ` (${r.label})` : ""}`).join(", ");
}
