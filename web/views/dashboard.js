// The lobby: tables to sit at or watch, filtered by game; hosting; the welcome grant.

import * as api from "../api.js";
import { credits, field, h, mount, toast } from "../dom.js";
import { ask } from "./dialogs.js";
import { inviteButton, removedList, showInvite } from "./hosting.js";
import { clockFact } from "./clock.js";
import { houseRulesForm } from "./house-rules.js";
import * as mahjong from "./table-mahjong.js";
import * as tongits from "./table-tongits.js";
import { verifyBanner } from "./verify-banner.js";
import { quickPlayPanel } from "./quick-play.js";

// Each game's rules disclosure (Ka Wu Xing's is drawn by the tile module too).
const rulesPanel = (t, opts) => ({ tongits, mahjong, kawuxing: mahjong })[t.game]?.rulesPanel(t, opts) || null;

const POLL_MS = 5000;
const GAMES = { tongits: "Tongits", mahjong: "Mahjong", kawuxing: "Ka Wu Xing" };
const RULESETS = {
  tongits: [["kalaro", "KaLaro (house rules)"], ["classic", "Classic"]],
  mahjong: [["kalaro", "KaLaro"], ["joker", "Joker"], ["pinoy", "Pinoy (everything on)"]],
  kawuxing: [["kawuxing", "Ka Wu Xing"]],
};
// What each Mahjong ruleset plays, shown under the form's ruleset choice.
const MAHJONG_RULESETS = {
  kalaro: "5 sets + a pair; fixed payments (discarder 2, others 1; self-draw 2 each).",
  joker: "Jokers, Seven Pairs, Eskalera, secret kangs, the passed-win block; paid by a points table by win category.",
  pinoy: "Joker plus robbing the kang, special hands and a 20 s turn timer (auto-play on time-out).",
};
// The one timer option a host usually wants to change; the rest go in "house rules".
const TIMER_OPTION = {
  tongits: ["fight_seconds", "Fight/Fold answer time (seconds)", 20],
  mahjong: ["call_seconds", "Claim window (seconds)", 10],
  kawuxing: ["call_seconds", "Claim window (seconds)", 10],
};

export function render(root, app) {
  let filter = sessionStorage.getItem("kalaro.filter") || "";
  let timer = 0;
  const me = api.currentUser();
  const list = h("ul.table-list#table-list", { "aria-label": "Open tables", "aria-busy": "true" });
  const empty = h("p.empty", { hidden: true }, "No open tables right now.");
  let shown = "";

  async function load() {
    try {
      const { tables } = await api.listTables(filter || undefined);
      // Re-draw only when something changed, so polling never steals keyboard focus.
      const key = JSON.stringify([filter, tables]);
      if (key === shown) return;
      shown = key;
      const focused = document.activeElement;
      const focusKey = list.contains(focused) ? [focused.closest("li")?.dataset.tableId, focused.textContent] : null;
      const openRules = new Set([...list.querySelectorAll("details.rules[open]")].map((d) => d.dataset.tableId));
      mount(list, tables.map((t) => tableCard(t, openRules.has(t.table_id))));
      if (focusKey) {
        const again = [...list.querySelectorAll(`li[data-table-id="${focusKey[0]}"] button`)].find((b) => b.textContent === focusKey[1]);
        again?.focus();
      }
      empty.hidden = tables.length > 0;
      empty.textContent = api.hasRole("host")
        ? "No open tables right now. Create one!"
        : "No open tables right now. Ask a host to open one, or check back soon.";
    } catch (err) {
      toast(err.message, "error");
    } finally {
      list.setAttribute("aria-busy", "false");
    }
  }

  function tableCard(t, rulesOpen = false) {
    const taken = t.seats.filter(Boolean).length;
    const mySeat = t.seats.findIndex((s) => s && s.user_id === me?.user_id);
    const full = taken === t.seats.length;
    const title = t.ranked ? `Ranked ${GAMES[t.game] || t.game}` : `${GAMES[t.game] || t.game} · ${t.host_name}`;
    const status = t.status === "waiting" ? "Waiting for players" : t.status === "playing" ? `Hand ${t.hand_no} in play` : t.status;
    const sitBtn = mySeat >= 0
      ? h("button.primary", { type: "button", onclick: () => app.navigate(`/tables/${t.table_id}`) }, "Back to my seat")
      : t.ranked ? null // the ranked queue seats its tables (issue 34)
      : h("button.primary", {
        type: "button",
        disabled: full,
        "aria-label": full ? `Full: ${title}` : `Sit at ${title}`,
        onclick: () => sitDown(t),
      }, full ? "Full" : "Sit");
    return h(
      "li.table-card",
      { dataset: { tableId: t.table_id, game: t.game } },
      h("div.table-game", { "aria-hidden": "true", class: `g-${t.game}` }, { tongits: "♠♥", mahjong: "中", kawuxing: "五" }[t.game] || "?"),
      h("div.table-info", {},
        h("h3", {}, GAMES[t.game] || t.game, " ", h("span.by", {}, t.ranked ? "ranked" : `hosted by ${t.host_name}`)),
        h("p.facts", {},
          h("span.fact.bet", {}, t.bet ? `Bet ${credits(t.bet)}` : "Free play"),
          h("span.fact", {}, `${taken}/${t.seats.length} seated`),
          h("span.fact", {}, t.private ? "Private" : "Public"),
          h("span.fact", {}, t.ruleset),
          clockFact(t),
          t.min_rating != null ? h("span.fact.min-rating", { title: "The rating a player needs to sit here" }, `Rating ${credits(t.min_rating)}+`) : null,
          t.max_loss ? h("span.fact", { title: "Available credits needed to sit" }, `Needs ${credits(t.max_loss)}`) : null,
        ),
        h("p.status", {}, status),
        removedList(t, () => { shown = ""; load(); }),
      ),
      h("div.table-actions", {},
        sitBtn,
        h("button", { type: "button", "aria-label": `Watch ${title}`, onclick: () => app.navigate(`/tables/${t.table_id}`) }, "Watch"),
        inviteButton(t),
      ),
      rulesPanel(t, { open: rulesOpen }),
    );
  }

  async function sitDown(t) {
    // The host sits at their own table without a code; an invite link already gave one.
    let code = t.private && t.host_id !== me?.user_id ? api.inviteFor(t.table_id) : null;
    if (t.private && t.host_id !== me?.user_id && !code) {
      code = await ask({
        title: "Private table",
        label: "Invite code",
        hint: "Ask the host for the table's invite code.",
        confirm: "Sit down",
      });
      if (code === null) return;
    }
    try {
      await api.sit(t.table_id, null, code);
      if (code) api.rememberInvite(t.table_id, code);
      app.navigate(`/tables/${t.table_id}`);
    } catch (err) {
      const msg = err.code === "insufficient_funds"
        ? `${err.message} Request credits in your Wallet.`
        : err.message;
      toast(msg, "error");
      load();
    }
  }

  // Short labels that never break inside (non-breaking spaces in "Ka Wu Xing"): on a
  // phone the pills wrap whole onto a second row instead of splitting into stacked words.
  const filters = h("div.filters", { role: "radiogroup", "aria-label": "Show tables of" },
    [["", "All"], ["tongits", "Tongits"], ["mahjong", "Mahjong"], ["kawuxing", "Ka\u00a0Wu\u00a0Xing"]].map(([value, label]) =>
      h("label.pill", {},
        h("input", {
          type: "radio",
          name: "game-filter",
          value,
          "aria-label": value ? undefined : "All games",
          checked: filter === value,
          onchange: () => {
            filter = value;
            sessionStorage.setItem("kalaro.filter", filter);
            load();
          },
        }),
        h("span", {}, label))),
  );
  filters.style.flexWrap = "wrap";

  // Unconfirmed: no grant yet, no bet tables; the welcome waits for the confirmation.
  const welcome = !api.currentUser()?.email_verified ? verifyBanner(app)
    : sessionStorage.getItem("kalaro.welcome") ? welcomeBanner(app) : null;
  const hostingSlot = h("div.hosting-slot");
  const quickPlay = quickPlayPanel(app); // ranked queue (issue 34)

  mount(
    root,
    welcome,
    quickPlay.el,
    practicePanel(app),
    h("section.lobby", { "aria-labelledby": "lobby-title" },
      h("div.section-head", {},
        h("h1#lobby-title", {}, "Tables"),
        filters,
        h("button.ghost", { type: "button", onclick: load, "aria-label": "Refresh the table list" }, "↻ Refresh"),
      ),
      list,
      empty,
    ),
    hostingSlot,
  );
  mount(hostingSlot, hostingPanel(app, load));
  // Host access granted since this token was issued shows up here (me() refreshes it).
  const wasHost = api.hasRole("host");
  api.me().then(() => {
    if (api.hasRole("host") !== wasHost) mount(hostingSlot, hostingPanel(app, load));
  }).catch(() => {});
  load();
  timer = setInterval(load, POLL_MS);
  return () => {
    clearInterval(timer);
    quickPlay.stop();
  };
}

function welcomeBanner(app) {
  const user = api.currentUser();
  const amount = h("strong#welcome-amount", {}, "…");
  const banner = h("section.banner.welcome#welcome", { role: "status" },
    h("span.banner-icon", { "aria-hidden": "true" }, "★"),
    h("div", {},
      h("h2", {}, `Welcome to KaLaro, ${user?.display_name || "player"}!`),
      h("p", {}, "Your welcome grant: ", amount, " fun credits. Find a table below and sit down."),
    ),
    h("button.ghost.small", { type: "button", "aria-label": "Dismiss", onclick: () => { banner.remove(); sessionStorage.removeItem("kalaro.welcome"); } }, "✕"),
  );
  // The grant is credited by the wallet shortly after sign-up; watch its ledger entry
  // arrive (not the balance, which an approved credit request or a hand also moves).
  let tries = 0;
  const poll = async () => {
    try {
      let page = await api.history(200);
      let grant = page.entries.find((e) => e.kind === "welcome");
      for (let more = 0; !grant && page.next_before && more < 5; more += 1) {
        page = await api.history(200, page.next_before);
        grant = page.entries.find((e) => e.kind === "welcome");
      }
      if (grant) {
        amount.textContent = credits(grant.amount);
        app.refreshBalance();
        return;
      }
    } catch { /* try again below */ }
    if ((tries += 1) < 40) setTimeout(poll, 400);
  };
  poll();
  return banner;
}

// One click to a table of your own against bots: zero bet, nothing to lose.
function practicePanel(app) {
  const buttons = Object.entries(GAMES).map(([game, label]) =>
    h("button.primary.practice", {
      type: "button",
      dataset: { game },
      "aria-label": `Practise ${label} against bots`,
      onclick: async (e) => {
        const btn = e.currentTarget;
        btn.disabled = true;
        btn.textContent = "Seating the bots…";
        try {
          const created = await api.createPractice(game);
          app.navigate(`/tables/${created.table.table_id}`);
        } catch (err) {
          toast(err.message, "error");
          btn.disabled = false;
          btn.textContent = label;
        }
      },
    }, label));
  return h("section.panel.practice#practice", { "aria-labelledby": "practice-title" },
    h("h2#practice-title", {}, "Practise against bots"),
    h("p.muted", {}, "A free table of your own: the other seats are bots. Tap Ready and play."),
    h("div.control-row", { role: "group", "aria-label": "Practise a game" }, buttons));
}

function hostingPanel(app, reload) {
  if (!api.hasRole("host")) {
    const note = h("input#host-note", { type: "text", maxlength: 500, placeholder: "Optional: tell the admins about your group" });
    const btn = h("button#host-request", { type: "submit" }, "Ask for host access");
    const form = h("form.host-request", {
      onsubmit: async (e) => {
        e.preventDefault();
        btn.disabled = true;
        try {
          await api.requestHost(note.value.trim());
          mount(form, h("p.ok", { role: "status" }, "Request sent. An admin will review it; you can create tables once approved."));
        } catch (err) {
          toast(err.message, "error");
          btn.disabled = false;
        }
      },
    }, field("Note for the admins", note), btn);
    return h("section.panel.hosting", { "aria-labelledby": "host-title" },
      h("h2#host-title", {}, "Want to host?"),
      h("p.muted", {}, "Hosts open tables, deal each hand and keep the table friendly."),
      form);
  }
  return h("section.panel.hosting", { "aria-labelledby": "create-title" },
    h("h2#create-title", {}, "Create a table"),
    createForm(app, reload));
}

function createForm(app) {
  const game = h("select#create-game", { name: "game" },
    h("option", { value: "tongits" }, "Tongits (3 players)"),
    h("option", { value: "mahjong" }, "Mahjong (4 players)"),
    h("option", { value: "kawuxing" }, "Ka Wu Xing (3 players)"));
  const ruleset = h("select#create-ruleset", { name: "ruleset" });
  const rulesetField = field("Ruleset", ruleset, " ");
  const rulesetHint = rulesetField.querySelector(".hint");
  rulesetHint.id = "ruleset-hint";
  const bet = h("input#create-bet", { type: "number", name: "bet", min: 0, max: 100000, step: 1, value: "10", required: true });
  const timerInput = h("input#create-timer", { type: "number", min: 1, max: 600, step: 1 });
  const timerField = field("", timerInput);
  const priv = h("input#create-private", { type: "checkbox", name: "private" });
  const chat = h("input#create-chat", { type: "checkbox", name: "chat", checked: true });
  const minRating = h("input#create-min-rating", { type: "number", name: "min_rating", min: 0, max: 10000, step: 1, inputmode: "numeric" });
  const rules = houseRulesForm({ game, ruleset, skip: () => [TIMER_OPTION[game.value][0]] });
  const error = h("p.form-error", { role: "alert", hidden: true });

  function syncRuleset() {
    rulesetHint.textContent = game.value === "mahjong" ? MAHJONG_RULESETS[ruleset.value] || "" : "";
  }
  ruleset.addEventListener("change", syncRuleset);

  function syncGame() {
    mount(ruleset, RULESETS[game.value].map(([v, label]) => h("option", { value: v }, label)));
    syncRuleset();
    const [, label, def] = TIMER_OPTION[game.value];
    timerField.querySelector(".label").textContent = label;
    timerInput.value = String(def);
  }
  game.addEventListener("change", syncGame);
  syncGame();

  const submit = h("button.primary#create-submit", { type: "submit" }, "Create table");
  const form = h("form.create-table#create-table", {
    onsubmit: async (e) => {
      e.preventDefault();
      error.hidden = true;
      let options;
      try {
        options = rules.options();
      } catch (err) {
        error.textContent = err.message;
        error.hidden = false;
        return;
      }
      const [timerKey, , def] = TIMER_OPTION[game.value];
      const seconds = Number(timerInput.value);
      if (seconds && seconds !== def) options[timerKey] = seconds;
      submit.disabled = true;
      try {
        const created = await api.createTable({
          game: game.value,
          bet: Number(bet.value || 0),
          ruleset: ruleset.value,
          options,
          private: priv.checked,
          chat_enabled: chat.checked,
          ...(minRating.value !== "" && !priv.checked ? { min_rating: Number(minRating.value) } : {}),
        });
        const id = created.table.table_id;
        if (created.invite_code) {
          api.rememberInvite(id, created.invite_code);
          await showInvite(created.table, created.invite_code);
        }
        app.navigate(`/tables/${id}`);
      } catch (err) {
        error.textContent = err.message;
        error.hidden = false;
        submit.disabled = false;
      }
    },
  },
  h("div.grid2", {},
    field("Game", game),
    rulesetField,
    field("Bet per hand (credits)", bet, "0 = free play. Players need the maximum loss available to sit."),
    timerField,
    field("Minimum rating (optional)", minRating, "Public tables: only players rated at least this in the game may sit. Newcomers are rated 1000.")),
  h("div.checks", {},
    h("label.check", {}, priv, " Private (invite code)"),
    h("label.check", {}, chat, " Table chat on")),
  h("details.advanced", {}, h("summary", {}, "House rules"), rules),
  error,
  submit);
  return form;
}
