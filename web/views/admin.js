// Admin: pending credit and host requests (approve / reject with a reason), and grants.

import * as api from "../api.js";
import { credits, field, h, mount, toast, when } from "../dom.js";

export function render(root, app) {
  if (!api.hasRole("admin")) {
    mount(root, h("section.panel", {}, h("h1", {}, "Admin"), h("p", {}, "This page is for admins.")));
    return null;
  }
  const creditList = h("ul.requests.admin#credit-requests");
  const hostList = h("ul.requests.admin#host-requests");

  function decisionRow(r, kind, onDecide) {
    const reason = h("input", { type: "text", maxlength: 500, placeholder: "Reason (optional)", "aria-label": `Reason for ${r.display_name || r.user_id}` });
    const decide = (approve) => async (e) => {
      const row = e.target.closest("li");
      for (const b of row.querySelectorAll("button")) b.disabled = true;
      try {
        await onDecide(r.request_id, approve, reason.value.trim());
        toast(approve ? "Approved." : "Rejected.");
        row.remove();
        load();
        app.refreshBalance();
      } catch (err) {
        toast(err.message, "error");
        for (const b of row.querySelectorAll("button")) b.disabled = false;
      }
    };
    // Credit requests carry only the user id; host requests also the display name.
    const who = r.display_name ? `${r.display_name} (${r.user_id})` : `user ${r.user_id}`;
    return h("li.request", { dataset: { requestId: r.request_id, kind } },
      h("div.request-info", {},
        kind === "credit" ? h("strong.amount", {}, `${credits(r.amount)} credits`) : h("strong", {}, "Host access"),
        h("span", {}, ` for ${who}`),
        h("span.muted.small", {}, ` · ${when(r.created_at)}`),
        r.note ? h("p.note", {}, `“${r.note}”`) : null),
      h("div.request-actions", {},
        reason,
        h("button.primary.approve", { type: "button", onclick: decide(true), "aria-label": `Approve ${kind} request of ${who}` }, "Approve"),
        h("button.danger.reject", { type: "button", onclick: decide(false), "aria-label": `Reject ${kind} request of ${who}` }, "Reject")));
  }

  let shown = "";
  async function load() {
    try {
      const [c, hr] = await Promise.all([api.adminCreditRequests(), api.adminHostRequests()]);
      // Polling re-draws only on change, so a reason being typed is never wiped.
      const key = JSON.stringify([c, hr]);
      if (key === shown) return;
      shown = key;
      mount(creditList, c.requests.length ? c.requests.map((r) => decisionRow(r, "credit", api.decideCreditRequest)) : h("li.muted", {}, "No pending credit requests."));
      mount(hostList, hr.requests.length ? hr.requests.map((r) => decisionRow(r, "host", api.decideHostRequest)) : h("li.muted", {}, "No pending host requests."));
    } catch (err) {
      toast(err.message, "error");
    }
  }

  const userId = h("input#grant-user", { type: "text", required: true, maxlength: 64, placeholder: "user id" });
  const amount = h("input#grant-amount", { type: "number", required: true, min: -1000000, max: 1000000, step: 1 });
  const reason = h("input#grant-reason", { type: "text", required: true, maxlength: 500 });
  const kind = h("select#grant-kind", {}, h("option", { value: "grant" }, "Grant (adds credits)"), h("option", { value: "adjust" }, "Adjustment (either sign)"));
  const submit = h("button.primary#grant-submit", { type: "submit" }, "Apply");
  // One key per intended grant: pressing Apply again after an error (a timeout, a lost
  // answer) sends the same key, so the grant can never apply twice. Editing the form
  // or a success starts a new one.
  let requestKey = api.randomHex(16);
  const grantForm = h("form#grant-form", {
    oninput: () => { requestKey = api.randomHex(16); },
    onsubmit: async (e) => {
      e.preventDefault();
      if (!reason.value.trim()) {
        toast("A reason is required.", "error");
        return;
      }
      submit.disabled = true;
      try {
        const out = await api.grant(userId.value.trim(), Number(amount.value), reason.value.trim(), kind.value, requestKey);
        const done = out.repeated ? "That was already applied" : "Done";
        toast(`${done}. Their balance is now ${credits(out.balance.balance)}.`);
        amount.value = "";
        reason.value = "";
        requestKey = api.randomHex(16);
      } catch (err) {
        toast(err.message, "error");
      } finally {
        submit.disabled = false;
      }
    },
  }, h("div.grid2", {}, field("Player's user id", userId, "Shown on their requests."), field("Credits", amount), field("Kind", kind), field("Reason", reason)), submit);

  mount(root,
    h("section.admin", { "aria-labelledby": "admin-title" },
      h("div.section-head", {}, h("h1#admin-title", {}, "Admin"), h("button.ghost", { type: "button", onclick: () => load() }, "↻ Refresh")),
      h("div.columns", {},
        h("section.panel", { "aria-labelledby": "cr-title" }, h("h2#cr-title", {}, "Credit requests"), creditList),
        h("section.panel", { "aria-labelledby": "hr-title" }, h("h2#hr-title", {}, "Host requests"), hostList)),
      h("section.panel", { "aria-labelledby": "grant-title" }, h("h2#grant-title", {}, "Grant or adjust credits"), grantForm)));
  load();
  const timer = setInterval(load, 15000);
  return () => clearInterval(timer);
}
