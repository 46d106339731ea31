// Admin: requests to decide, every kind in one queue (approve / decline with a reason), finding
// players by email or name, a picked player's ledger, and grants to the picked player.

import * as api from "../api.js";
import { credits, field, h, mount, signed, toast, when } from "../dom.js";

const SEARCH_PAGE = 20;
const LEDGER_PAGE = 20;
const q = (params) => {
  const s = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== "")).toString();
  return s ? `?${s}` : "";
};
const searchUsers = (query, offset = 0) => api.call("GET", `/api/admin/users${q({ q: query, limit: SEARCH_PAGE, offset })}`);
const userLedger = (id, before) => api.call("GET", `/api/admin/users/${encodeURIComponent(id)}/ledger${q({ limit: LEDGER_PAGE, before })}`);
const userBalance = (id) => api.call("GET", `/api/admin/users/${encodeURIComponent(id)}/balance`);

export function render(root, app) {
  if (!api.hasRole("admin")) {
    mount(root, h("section.panel", {}, h("h1", {}, "Admin"), h("p", {}, "This page is for admins.")));
    return null;
  }
  // --- approvals: every request admins decide (host access, credits), one queue ------
  const KIND_LABEL = { host_access: "Host access", credits: "Credits" };
  const approvalList = h("ul.requests.admin#approvals", { "aria-live": "polite" });
  const kindFilter = h("select#approval-kind", { "aria-label": "Show requests of kind", onchange: () => load() },
    h("option", { value: "" }, "All kinds"),
    h("option", { value: "credits" }, "Credits"),
    h("option", { value: "host_access" }, "Host access"));

  function decisionRow(r) {
    const reason = h("input", { type: "text", maxlength: 500, placeholder: "Reason (optional)", "aria-label": `Reason for ${r.display_name || r.user_id}` });
    const decide = (approve) => async (e) => {
      const row = e.target.closest("li");
      for (const b of row.querySelectorAll("button")) b.disabled = true;
      try {
        const done = await api.decideApproval(r.approval_id, approve, reason.value.trim());
        // Approved credits the wallet could not grant yet are granted when it is back.
        toast(!approve ? "Declined." : done.status === "approved" ? "Approved; the credits follow shortly." : "Approved.");
        row.remove();
        load();
        app.refreshBalance();
      } catch (err) {
        toast(err.message, "error");
        for (const b of row.querySelectorAll("button")) b.disabled = false;
      }
    };
    const who = r.display_name ? `${r.display_name} (${r.user_id})` : `user ${r.user_id}`;
    const what = r.kind === "credits" ? `${credits(r.amount)} credits` : KIND_LABEL[r.kind] || r.kind;
    return h("li.request", { dataset: { approvalId: r.approval_id, kind: r.kind } },
      h("div.request-info", {},
        h("span.badge.kind", {}, KIND_LABEL[r.kind] || r.kind),
        " ",
        r.kind === "credits" ? h("strong.amount", {}, what) : h("strong", {}, what),
        h("span", {}, ` for ${who}`),
        h("span.muted.small", {}, ` · ${when(r.created_at)}`),
        r.note ? h("p.note", {}, `“${r.note}”`) : null),
      h("div.request-actions", {},
        h("button.ghost.small.pick", { type: "button", onclick: () => pick({ user_id: r.user_id, display_name: r.display_name || "" }), "aria-label": `Show ${who}` }, "Player"),
        reason,
        h("button.primary.approve", { type: "button", onclick: decide(true), "aria-label": `Approve ${what} for ${who}` }, "Approve"),
        h("button.danger.decline", { type: "button", onclick: decide(false), "aria-label": `Decline ${what} for ${who}` }, "Decline")));
  }

  let shown = "";
  async function load() {
    try {
      const kind = kindFilter.value || undefined;
      const { approvals } = await api.adminApprovals(kind);
      // Polling re-draws only on change, so a reason being typed is never wiped.
      const key = JSON.stringify([kind, approvals]);
      if (key === shown) return;
      shown = key;
      mount(approvalList, approvals.length ? approvals.map(decisionRow) : h("li.muted", {}, "Nothing waits for a decision."));
    } catch (err) {
      toast(err.message, "error");
    }
  }

  // --- find a player -----------------------------------------------------------------
  const searchInput = h("input#user-search", {
    type: "search", maxlength: 100, required: true, autocomplete: "off", enterkeyhint: "search",
    placeholder: "Email or name", "aria-label": "Find a player by email or name",
  });
  const results = h("ul.user-results#user-results", { "aria-label": "Players found", "aria-live": "polite" });
  const more = h("button.ghost#user-more", { type: "button", hidden: true }, "More results");
  let searched = { query: "", next: null, seq: 0 };

  async function search(query, offset = 0) {
    const seq = ++searched.seq;
    try {
      const page = await searchUsers(query, offset);
      if (seq !== searched.seq) return; // a newer search went out meanwhile
      searched = { query, next: page.next_offset, seq };
      const rows = page.users.map(userRow);
      if (offset === 0) mount(results, rows.length ? rows : h("li.muted", {}, `No player matches “${query}”.`));
      else results.append(...rows);
      more.hidden = page.next_offset === null;
    } catch (err) {
      if (seq === searched.seq) toast(err.message, "error");
    }
  }

  function userRow(u) {
    const roles = u.roles.filter((r) => r !== "player");
    return h("li.user-row", { dataset: { userId: u.user_id } },
      h("button.user-pick", { type: "button", onclick: () => pick(u), "aria-label": `Pick ${u.display_name} (${u.email})` },
        h("strong", {}, u.display_name),
        h("span.muted.small.email", {}, u.email),
        roles.length ? h("span.roles.small", {}, roles.join(", ")) : null));
  }

  let typing = 0;
  const searchForm = h("form.user-search#user-search-form", {
    role: "search",
    onsubmit: (e) => {
      e.preventDefault();
      clearTimeout(typing);
      const query = searchInput.value.trim();
      if (!query) {
        toast("Type part of an email or name.", "error");
        return;
      }
      search(query);
    },
    oninput: () => {
      clearTimeout(typing);
      const query = searchInput.value.trim();
      if (query.length >= 2) typing = setTimeout(() => search(query), 300);
    },
  }, searchInput, h("button.primary#user-search-submit", { type: "submit" }, "Search"));
  more.addEventListener("click", () => { if (searched.next !== null) search(searched.query, searched.next); });

  // --- the picked player: balance, ledger, grant -------------------------------------
  const detail = h("section.panel.user-detail#user-detail", { "aria-labelledby": "detail-title", hidden: true });
  let picked = null;

  function pick(user) {
    picked = user;
    drawDetail();
    detail.hidden = false;
    detail.scrollIntoView({ block: "start", behavior: "smooth" });
  }

  const ledgerBody = h("tbody#user-ledger");
  const olderBtn = h("button.ghost#user-ledger-older", { type: "button", hidden: true }, "Older entries");
  const balanceText = h("p.user-balance#user-balance", {}, "…");
  let ledgerBefore = null;

  async function loadLedger(reset) {
    const who = picked;
    try {
      const page = await userLedger(who.user_id, reset ? undefined : ledgerBefore);
      if (who !== picked) return;
      if (reset) ledgerBody.replaceChildren();
      for (const e of page.entries) {
        ledgerBody.append(h("tr", { dataset: { kind: e.kind } },
          h("td", {}, when(e.created_at)),
          h("td", {}, e.kind),
          h("td.num", {}, signed(e.amount)),
          h("td.memo", {}, e.memo)));
      }
      if (reset && !page.entries.length) ledgerBody.append(h("tr", {}, h("td", { colspan: 4 }, "No entries yet.")));
      ledgerBefore = page.next_before;
      olderBtn.hidden = page.next_before === null;
    } catch (err) {
      toast(err.message, "error");
    }
  }
  olderBtn.addEventListener("click", () => loadLedger(false));

  async function loadBalance() {
    const who = picked;
    try {
      const b = await userBalance(who.user_id);
      if (who !== picked) return;
      balanceText.textContent = `Balance ${credits(b.balance)} · held ${credits(b.held)} · available ${credits(b.available)}`;
    } catch (err) {
      balanceText.textContent = err.message;
    }
  }

  const amount = h("input#grant-amount", { type: "number", required: true, min: -1000000, max: 1000000, step: 1, inputmode: "numeric" });
  const reason = h("input#grant-reason", { type: "text", required: true, maxlength: 500 });
  const kind = h("select#grant-kind", {}, h("option", { value: "grant" }, "Grant (adds credits)"), h("option", { value: "adjust" }, "Adjustment (either sign)"));
  const submit = h("button.primary#grant-submit", { type: "submit" }, "Apply");
  // One key per intended grant: pressing Apply again after an error (a timeout, a lost
  // answer) sends the same key, so the grant can never apply twice. Editing the form,
  // picking another player or a success starts a new one.
  let requestKey = api.randomHex(16);
  const grantForm = h("form#grant-form", {
    oninput: () => { requestKey = api.randomHex(16); },
    onsubmit: async (e) => {
      e.preventDefault();
      if (!picked) return;
      if (!reason.value.trim()) {
        toast("A reason is required.", "error");
        return;
      }
      submit.disabled = true;
      try {
        const out = await api.grant(picked.user_id, Number(amount.value), reason.value.trim(), kind.value, requestKey);
        const done = out.repeated ? "That was already applied" : "Done";
        toast(`${done}. ${picked.display_name || "Their"} balance is now ${credits(out.balance.balance)}.`);
        amount.value = "";
        reason.value = "";
        requestKey = api.randomHex(16);
        loadLedger(true);
        loadBalance();
      } catch (err) {
        toast(err.message, "error");
      } finally {
        submit.disabled = false;
      }
    },
  }, h("div.grid2", {}, field("Credits", amount), field("Kind", kind), field("Reason", reason)), submit);

  function drawDetail() {
    requestKey = api.randomHex(16);
    balanceText.textContent = "…";
    ledgerBody.replaceChildren();
    olderBtn.hidden = true;
    mount(detail,
      h("div.section-head", {},
        h("h2#detail-title", {}, picked.display_name || "Player"),
        h("button.ghost.small#user-close", { type: "button", onclick: () => { detail.hidden = true; picked = null; } }, "Close")),
      h("p.muted.small", {}, picked.email ? `${picked.email} · ` : "", h("code.user-id", {}, picked.user_id)),
      balanceText,
      h("h3#grant-title", {}, `Grant or adjust ${picked.display_name || "this player"}'s credits`),
      grantForm,
      h("h3", {}, "Ledger"),
      h("div.table-scroll", { tabindex: "0", role: "group", "aria-label": "Ledger" },
        h("table.ledger", { "aria-label": `Ledger of ${picked.display_name || picked.user_id}` },
          h("thead", {}, h("tr", {}, h("th", {}, "When"), h("th", {}, "Kind"), h("th.num", {}, "Credits"), h("th", {}, "Memo"))),
          ledgerBody)),
      olderBtn);
    loadBalance();
    loadLedger(true);
  }

  mount(root,
    h("section.admin", { "aria-labelledby": "admin-title" },
      h("div.section-head", {}, h("h1#admin-title", {}, "Admin"), h("button.ghost", { type: "button", onclick: () => load() }, "↻ Refresh"),
        h("a.ghost.button-link#fair-play-link", { href: "#/admin/fair-play" }, "Fair play")),
      h("section.panel.approvals", { "aria-labelledby": "approvals-title" },
        h("div.section-head", {}, h("h2#approvals-title", {}, "Requests to decide"), kindFilter),
        approvalList),
      h("section.panel.find-players", { "aria-labelledby": "find-title" },
        h("h2#find-title", {}, "Find a player"),
        h("p.muted.small", {}, "Search by email or name, then pick a player to see their ledger and grant credits."),
        searchForm, results, more),
      detail));
  load();
  const timer = setInterval(load, 15000);
  return () => clearInterval(timer);
}
