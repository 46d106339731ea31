// Admin: fair play (#/admin/fair-play). What GET /api/admin/fair-play finds for one game
// (pairs that sit together far more often than chance, credit flowing mostly one way,
// accounts sharing an address or device), each with its accounts and links to the
// hands; and the actions on an account — warn, bar from ranked, freeze — each with a
// reason, which the server audits (the latest actions are listed).
//
// One store: `state` changes only through `reduce`; `view(state)` draws the report; the
// action form is drawn once (what an admin types is never redrawn away).

import * as api from "../api.js";
import { field, h, mount, toast, when } from "../dom.js";
import { GAMES } from "./history.js";
import { profileHref } from "./profile.js";

const KINDS = {
  sit_together: "Sit together far more often than chance",
  one_way_credit: "Credit flows mostly one way",
  shared_address: "Same address (last 24 h)",
  shared_device: "Same device (last 24 h)",
};
export const ACTIONS = [
  ["warn", "Warn"],
  ["bar-ranked", "Bar from ranked"],
  ["freeze", "Freeze account"],
  ["unbar-ranked", "Lift ranked bar"],
  ["unfreeze", "Unfreeze"],
];
const ACTION_NAMES = Object.fromEntries(ACTIONS);

export const initialState = () => ({ game: "tongits", report: null, loading: true, error: "" });

export function reduce(state, action) {
  switch (action.type) {
    case "game":
      return { ...state, game: action.game, loading: true, error: "" };
    case "loaded":
      return action.game === state.game ? { ...state, report: action.report, loading: false, error: "" } : state;
    case "failed":
      return { ...state, loading: false, error: action.message };
    default:
      return state;
  }
}

function finding(f, game, pick) {
  return h("li.finding", { dataset: { kind: f.kind } },
    h("h3", {}, KINDS[f.kind] || f.kind, " ", h("span.muted.small", {}, `score ${Number(f.score).toFixed(2)}`)),
    f.detail ? h("p", {}, f.detail) : null,
    h("ul.finding-accounts", { "aria-label": "Accounts" }, f.accounts.map((id) => h("li", {},
      h("a.player-link", { href: profileHref(id) }, h("code", {}, id)),
      " ",
      h("button.ghost.small.act-on", { type: "button", onclick: () => pick(id), "aria-label": `Act on account ${id}` }, "Act on…")))),
    f.hand_ids.length ? h("details.finding-hands", {},
      h("summary", {}, `${f.hand_ids.length} hand${f.hand_ids.length === 1 ? "" : "s"}`),
      h("ul", {}, f.hand_ids.slice(0, 50).map((id) => h("li", {},
        h("a", { href: `#/hands/${encodeURIComponent(game)}/${encodeURIComponent(id)}` }, h("code", {}, id)))))) : null);
}

/** The report as the state says; `pick(userId)` fills the action form. */
export function view(state, pick) {
  if (state.error) return h("p.panel#fair-play-error", { role: "alert" }, `Could not load the report: ${state.error}`);
  const report = state.report;
  if (!report) return h("p.muted", {}, "Loading…");
  return h("div", {},
    h("p.panel.small#fair-play-summary", {},
      `${report.hands_read} ${GAMES[state.game] || state.game} hands read.`,
      report.note ? ` ${report.note}` : ""),
    h("section.panel", { "aria-labelledby": "findings-title" },
      h("h2#findings-title", {}, "Signals"),
      report.findings.length
        ? h("ul.findings#findings", {}, report.findings.map((f) => finding(f, state.game, pick)))
        : h("p.muted#findings-empty", {}, "Nothing stands out.")),
    h("section.panel", { "aria-labelledby": "audit-title" },
      h("h2#audit-title", {}, "Latest actions"),
      report.audit.length
        ? h("ul.audit#audit", {}, report.audit.map((a) => h("li", {},
          h("strong", {}, ACTION_NAMES[a.action] || a.action), " ", h("code", {}, a.user_id),
          h("span.muted.small", {}, ` · ${when(a.at_ms)} · by `, h("code", {}, a.admin_id)),
          h("p.note", {}, `“${a.reason}”`))))
        : h("p.muted", {}, "No actions yet.")));
}

export function render(root) {
  if (!api.hasRole("admin")) {
    mount(root, h("section.panel", {}, h("h1", {}, "Fair play"), h("p", {}, "This page is for admins.")));
    return null;
  }
  let state = initialState();
  const body = h("div#fair-play-body", { "aria-busy": "true" });

  const account = h("input#act-user", { type: "text", required: true, maxlength: 128, autocomplete: "off" });
  const reason = h("input#act-reason", { type: "text", required: true, maxlength: 500 });
  const outcome = h("p#act-outcome", { role: "status" });
  // Bar and freeze in red; warn and the two that lift a sanction plain.
  const buttons = ACTIONS.map(([action, label]) => h(`button${["bar-ranked", "freeze"].includes(action) ? ".danger" : ""}.act`, {
    type: "button", dataset: { action }, onclick: () => act(action, label),
  }, label));
  const form = h("form.act-form#act-form", { onsubmit: (e) => e.preventDefault() },
    h("div.grid2", {}, field("Account (user id)", account), field("Reason (required, audited)", reason)),
    h("div.control-row", { role: "group", "aria-label": "Action" }, buttons),
    outcome);

  function pick(userId) {
    account.value = userId;
    reason.focus();
  }

  async function act(action, label) {
    const who = account.value.trim();
    const why = reason.value.trim();
    if (!who || !why) {
      toast("Give the account and a reason.", "error");
      (!who ? account : reason).focus();
      return;
    }
    for (const b of buttons) b.disabled = true;
    try {
      const done = await api.adminAct(who, action, why);
      const s = done.standing;
      outcome.textContent = `${label}: done for ${who}. Now ${s.frozen ? "frozen" : "not frozen"}, ${s.barred ? "barred from ranked" : "may play ranked"}, ${s.warnings} warning${s.warnings === 1 ? "" : "s"}.`;
      if (reason.value.trim() === why) reason.value = ""; // not what was typed since
      load();
    } catch (err) {
      outcome.textContent = "";
      toast(err.message, "error");
    } finally {
      for (const b of buttons) b.disabled = false;
    }
  }

  function draw() {
    body.setAttribute("aria-busy", String(state.loading));
    mount(body, view(state, pick));
  }

  async function load() {
    const { game } = state;
    try {
      state = reduce(state, { type: "loaded", game, report: await api.fairPlay(game) });
    } catch (err) {
      state = reduce(state, { type: "failed", message: err.message });
    }
    draw();
  }

  const gamePick = h("select#fair-play-game", {
    onchange: (e) => { state = reduce(state, { type: "game", game: e.target.value }); draw(); load(); },
  }, Object.entries(GAMES).map(([value, label]) => h("option", { value }, label)));

  mount(root,
    h("section.admin.fair-play", { "aria-labelledby": "fair-play-title" },
      h("div.section-head", {},
        h("h1#fair-play-title", {}, "Fair play"),
        h("a.ghost.button-link", { href: "#/admin" }, "Back to Admin")),
      h("div.panel", {}, field("Game", gamePick)),
      h("section.panel", { "aria-labelledby": "act-title" },
        h("h2#act-title", {}, "Act on an account"),
        h("p.muted.small", {}, "Warn, bar from ranked play or freeze (a frozen account cannot sit or queue). Pick an account below or type its id."),
        form),
      body));
  draw();
  load();
  return null;
}
