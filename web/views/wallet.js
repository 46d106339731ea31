// Wallet: balance, holds, history, and asking an admin for credits.

import * as api from "../api.js";
import { credits, field, h, mount, signed, toast } from "../dom.js";
import { formatDate, isoDate } from "../format.js";
import { replayHref, short } from "./history.js";

const POLL_MS = 4000;
// Approved credits are granted by the wallet a moment later ("applied"): to the player
// both are "approved"; "applied" is when the credits are in.
const STATUS = { pending: "pending", approved: "approved", applied: "credited", declined: "declined", withdrawn: "withdrawn" };
const KINDS = { welcome: "Welcome grant", grant: "Grant", adjust: "Adjustment", credit_request: "Credit request", settlement: "Hand" };

export function render(root, app) {
  const stats = h("div.stats#wallet-stats");
  const historyBody = h("tbody#history");
  const more = h("button.ghost#history-more", { type: "button", hidden: true }, "Show older");
  const requests = h("ul.requests#my-requests");
  let before = null;

  function drawStats(b) {
    mount(stats,
      stat("Available", b.available, "available"),
      stat("Balance", b.balance, "balance"),
      stat("Held for hands in play", b.held, "held"));
  }

  async function loadHistory(reset = true) {
    try {
      const page = await api.history(20, reset ? undefined : before);
      if (reset) historyBody.replaceChildren();
      for (const e of page.entries) {
        historyBody.append(h("tr", {},
          h("td", { title: e.memo }, h("time", { datetime: isoDate(e.created_at) }, formatDate(e.created_at))),
          h("td", {}, what(e)),
          h("td.hide-phone", {}, e.memo),
          h(`td.num.amount${e.amount > 0 ? ".plus" : e.amount < 0 ? ".minus" : ""}`, {}, signed(e.amount))));
      }
      if (reset && !page.entries.length) historyBody.append(h("tr", {}, h("td", { colspan: 4 }, "Nothing yet.")));
      before = page.next_before;
      more.hidden = !before;
    } catch (err) {
      toast(err.message, "error");
    }
  }

  async function loadRequests() {
    try {
      const { approvals: list } = await api.myApprovals("credits");
      mount(requests, list.length ? list.map((r) => h("li", { dataset: { status: r.status, approvalId: r.approval_id } },
        h("span.amount", {}, credits(r.amount)),
        h(`span.badge.${r.status}`, {}, STATUS[r.status] || r.status),
        h("span.muted.small", {}, h("time", { datetime: isoDate(r.created_at) }, formatDate(r.created_at))),
        r.reason ? h("span.small", {}, `— ${r.reason}`) : null,
        r.status === "pending" ? h("button.ghost.small.withdraw", { type: "button", onclick: () => withdraw(r), "aria-label": `Withdraw the request for ${credits(r.amount)} credits` }, "Withdraw") : null)) : h("li.muted", {}, "No requests yet."));
    } catch (err) {
      toast(err.message, "error");
    }
  }

  async function withdraw(r) {
    try {
      await api.withdrawApproval(r.approval_id);
      toast("Request withdrawn.");
      loadRequests();
    } catch (err) {
      toast(err.message, "error");
    }
  }

  more.addEventListener("click", () => loadHistory(false));

  const amount = h("input#credit-amount", { type: "number", min: 1, max: 1000000, step: 1, required: true, value: "500" });
  const note = h("input#credit-note", { type: "text", maxlength: 500, placeholder: "Optional note for the admin" });
  const submit = h("button.primary#credit-submit", { type: "submit" }, "Request credits");
  const form = h("form.request-form#credit-form", {
    onsubmit: async (e) => {
      e.preventDefault();
      const n = Number(amount.value);
      if (!Number.isInteger(n) || n <= 0) {
        toast("Enter a whole number of credits.", "error");
        return;
      }
      submit.disabled = true;
      try {
        await api.requestCredits(n, note.value.trim());
        note.value = "";
        toast("Request sent. An admin will review it.");
        loadRequests();
      } catch (err) {
        toast(err.message, "error");
      } finally {
        submit.disabled = false;
      }
    },
  }, h("div.grid2", {}, field("Credits", amount), field("Note", note)), submit);

  mount(root,
    h("section.wallet", { "aria-labelledby": "wallet-title" },
      h("h1#wallet-title", {}, "Wallet"),
      h("p.muted", {}, "Fun credits only — they have no cash value."),
      stats,
      h("div.columns", {},
        h("section.panel", { "aria-labelledby": "req-title" }, h("h2#req-title", {}, "Request credits"), form, h("h3", {}, "Your requests"), requests),
        h("section.panel", { "aria-labelledby": "hist-title" }, h("h2#hist-title", {}, "History"),
          h("p.small", {}, h("a#wallet-my-hands", { href: "#/hands" }, "My hands: replay and verify your finished hands")),
          h("div.table-scroll", { tabindex: "0", role: "group", "aria-label": "History" }, h("table.history", {},
            h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "When"), h("th", { scope: "col" }, "What"), h("th.hide-phone", { scope: "col" }, "Note"), h("th", { scope: "col" }, "Credits"))),
            historyBody)),
          more))));

  // While the wallet is open, decisions and settlements show up by themselves.
  let shown = null;
  const off = app.onBalance((b) => {
    drawStats(b);
    if (shown !== null && b.balance !== shown) {
      loadHistory();
      loadRequests();
    }
    shown = b.balance;
  });
  if (app.balance) drawStats(app.balance);
  app.refreshBalance();
  loadHistory();
  loadRequests();
  const timer = setInterval(() => app.refreshBalance(), POLL_MS);
  return () => {
    off();
    clearInterval(timer);
  };
}

// A hand's entry ("hand h_62ec… at table 23ff…") links to its replay; the ledger does
// not know the game, so the replay page finds it.
const HAND_MEMO = /^hand (\S+) at table (\S+)$/;

function what(e) {
  const m = e.kind === "settlement" ? HAND_MEMO.exec(e.memo) : null;
  if (!m) return KINDS[e.kind] || e.kind;
  return h("a.hand-link", { href: replayHref("any", m[1]), "aria-label": `Replay hand ${short(m[1])} at table ${short(m[2])}` }, "Hand ▸");
}

function stat(label, value, key) {
  return h(`div.stat.stat-${key}`, {}, h("span.stat-label", {}, label), h("strong.stat-value", { id: `wallet-${key}` }, credits(value)));
}
