// A table: seats, the hand in play (drawn by the game's module), the lobby controls
// (sit, ready, leave, host controls), the result of the last hand, and chat.
//
// Everything on screen comes from the server: the table record (REST + `table`
// frames), the newest `view` frame of the hand, `result` and `chat` frames. Game moves
// are offered only as the view's legal actions list them, and sent back verbatim.

import * as api from "../api.js";
import { announce, credits, h, mount, toast } from "../dom.js";
import { ask, confirmDialog } from "./dialogs.js";
import { renderResult } from "./result.js";
import { autoPlayText, clockFact, clockSeats, countdown, seatMarkers, startTicker, turnStatus } from "./clock.js";
import * as tongits from "./table-tongits.js";
import * as mahjong from "./table-mahjong.js";

// Ka Wu Xing is a tile game too: the Mahjong module draws it (3 seats, kongs, Show Hand).
const GAMES = { tongits, mahjong, kawuxing: mahjong };
const GAME_NAMES = { tongits: "Tongits", mahjong: "Mahjong", kawuxing: "Ka Wu Xing" };
const MAX_CHAT = 100;

export async function render(root, app) {
  const { tableId } = app.params;
  const socket = app.socket;
  const me = api.currentUser();
  const state = {
    table: null,
    frame: null, // newest view frame ({view, version, seat, deadline_ms, events, hand_id})
    result: null, // the last hand's result frame
    chat: [],
    selection: [], // selected cards/tiles, in the order they were picked
    sort: "suit",
    busy: false,
    names: new Map(), // user id -> display name (kept after players leave, for results)
    lastPrompt: "",
    notice: null, // "Time ran out: …" after the server played for you (until you move)
  };
  window.kalaro.tableState = state; // for the console and browser tests

  // --- regions --------------------------------------------------------------------------
  const head = h("header.table-head");
  const felt = h("section.felt#felt", { "aria-label": "Table" });
  const controls = h("section.controls#controls", { "aria-label": "Table controls" });
  const resultBox = h("section.result-box#result", { "aria-live": "polite" });
  const chatList = h("ol.chat-list#chat-list", { "aria-live": "polite", "aria-label": "Chat messages" });
  const chatInput = h("input#chat-input", { type: "text", maxlength: 300, autocomplete: "off", "aria-label": "Chat message", placeholder: "Say something nice…" });
  const chatNote = h("p.muted.small#chat-note", { hidden: true }, "The host turned chat off.");
  const chatForm = h("form.chat-form", {
    onsubmit: async (e) => {
      e.preventDefault();
      const text = chatInput.value.trim();
      if (!text) return;
      try {
        await socket.chat(tableId, text);
        chatInput.value = "";
      } catch (err) {
        toast(err.message, "error");
      }
    },
  }, chatInput, h("button", { type: "submit" }, "Send"));
  const chatPanel = h("section.chat.panel", { "aria-labelledby": "chat-title" },
    h("h2#chat-title", {}, "Chat"), chatList, chatNote, chatForm);

  mount(root, h("div.table-page", {}, head, h("div.table-main", {}, resultBox, felt, controls), h("aside.table-side", {}, chatPanel)));

  // --- derived ---------------------------------------------------------------------------
  const mySeat = () => {
    const t = state.table;
    if (!t) return null;
    const i = t.seats.findIndex((s) => s && s.user_id === me.user_id);
    return i < 0 ? null : i;
  };
  const isHost = () => state.table && state.table.host_id === me.user_id;
  const inHand = () => state.table && (state.table.status === "playing" || state.table.status === "dealing");
  const closed = () => state.table && (state.table.status === "ended" || state.table.status === "cancelled");
  const game = () => GAMES[state.table?.game];

  function remember(table) {
    table.seats.forEach((s) => { if (s) state.names.set(s.user_id, s.display_name); });
  }

  function setTable(table) {
    if (state.table && table.version < state.table.version && table.table_id === state.table.table_id) return;
    const before = state.table;
    state.table = table;
    remember(table);
    if (before && before.status !== table.status) {
      app.refreshBalance(); // holds are placed at the deal and released at the end
      if (table.status === "playing") announce("The hand has been dealt.");
      if (table.status === "cancelled") announce("The host cancelled the table.");
      if (table.status === "ended") announce("The host ended the table.");
    }
    drawAll();
  }

  // --- actions ---------------------------------------------------------------------------
  /** While an action is in flight every button that starts one is disabled (a click
   * then would be ignored): draw them all again whenever that changes. */
  function setBusy(busy) {
    state.busy = busy;
    drawFelt();
    drawControls();
    drawResult();
  }

  async function run(label, fn) {
    if (state.busy) return;
    setBusy(true);
    try {
      const out = await fn();
      if (out && out.table_id) setTable(out);
      return out;
    } catch (err) {
      toast(`${label}: ${err.message}`, "error");
      return null;
    } finally {
      setBusy(false);
    }
  }

  async function act(action) {
    if (state.busy) return;
    setBusy(true);
    try {
      await socket.act(tableId, action);
      state.selection = [];
      state.notice = null;
    } catch (err) {
      toast(err.message, "error");
    } finally {
      // Also redraws what frames that came in meanwhile drew disabled (the result, the
      // table back to waiting after the last move).
      setBusy(false);
    }
  }

  function toggle(name, { single = false } = {}) {
    const i = state.selection.indexOf(name);
    if (i >= 0) state.selection.splice(i, 1);
    else if (single) state.selection = [name];
    else state.selection.push(name);
    drawFelt();
  }

  async function sitDown(seat = null) {
    let code = null;
    if (state.table.private && !isHost()) {
      code = api.inviteFor(tableId) || await ask({ title: "Private table", label: "Invite code", hint: "Ask the host for the invite code.", confirm: "Sit down" });
      if (code === null) return;
    }
    const out = await run("Sit", () => api.sit(tableId, seat, code));
    if (out) {
      if (code) api.rememberInvite(tableId, code);
      socket.resubscribe(tableId);
      app.refreshBalance();
    }
  }

  // --- drawing ---------------------------------------------------------------------------
  function drawHead() {
    const t = state.table;
    if (!t) {
      mount(head, h("h1", {}, "Table"), h("p.muted", {}, "Loading…"));
      return;
    }
    const seat = mySeat();
    const invite = isHost() && t.private ? sessionStorage.getItem(`kalaro.invite.${t.table_id}`) : null;
    const statusText = {
      waiting: "Waiting for players",
      dealing: "Dealing…",
      playing: `Hand ${t.hand_no}`,
      ended: "Table ended",
      cancelled: "Table cancelled",
    }[t.status] || t.status;
    const rulesOpen = Boolean(head.querySelector("details.rules")?.open); // kept across redraws
    mount(head,
      h("a.back", { href: "#/", "aria-label": "Back to tables" }, "←"),
      h("div.title", {},
        h("h1", {}, GAME_NAMES[t.game] || t.game, h("span.by", {}, ` · ${t.host_name}'s table`)),
        h("p.facts", {},
          h("span.fact.bet", {}, t.bet ? `Bet ${credits(t.bet)}` : "Free play"),
          h("span.fact", {}, t.ruleset),
          t.private ? h("span.fact", {}, "Private") : null,
          clockFact(t),
          h("span.fact.status#table-status", { dataset: { status: t.status } }, statusText),
          seat === null ? h("span.fact.watching#watching", {}, "Watching") : h("span.fact.you", {}, `You: seat ${seat + 1}`),
          invite ? h("span.fact", {}, "Invite code: ", h("code#invite-code", {}, invite)) : null,
        ),
        game()?.rulesPanel?.(t, { open: rulesOpen })),
    );
  }

  function seatsStrip() {
    const t = state.table;
    const view = state.frame?.view;
    const toAct = new Set(view ? (view.to_act || (view.phase === "calls" ? [] : [view.turn])) : []);
    const dealer = view ? view.dealer : t.dealer;
    const seat = mySeat();
    return h("ol.seats#seats", { "aria-label": "Seats" },
      t.seats.map((s, i) => {
        const mine = i === seat;
        const waiting = t.status === "waiting";
        const bits = [];
        if (s) {
          bits.push(h("span.seat-name", {}, s.display_name, mine ? " (you)" : ""));
          if (dealer === i) bits.push(h("span.chip.dealer", { title: "Dealer", "aria-label": "dealer" }, "D"));
          if (s.user_id === t.host_id) bits.push(h("span.chip.host", { title: "Host" }, "Host"));
          if (s.is_bot) bits.push(h("span.chip", {}, "Bot"));
          bits.push(...seatMarkers(t, inHand() ? view : null, i));
          if (waiting) bits.push(h(`span.ready${s.ready ? ".yes" : ".no"}`, {}, s.ready ? "✓ Ready" : "Not ready"));
          if (s.leave_after_hand) bits.push(h("span.chip.leaving", {}, "Leaving after this hand"));
          if (inHand() && toAct.has(i)) bits.push(h("span.chip.turn", {}, "to play"));
          if (isHost() && waiting && !mine) {
            bits.push(h("button.small.ghost.remove", {
              type: "button",
              disabled: state.busy,
              "aria-label": `Remove ${s.display_name}`,
              onclick: async () => {
                if (await confirmDialog({ title: "Remove player?", body: `Remove ${s.display_name} from seat ${i + 1}?`, confirm: "Remove", danger: true })) {
                  run("Remove", () => api.removePlayer(tableId, i));
                }
              },
            }, "Remove"));
          }
        } else {
          bits.push(h("span.seat-name.empty", {}, "Empty seat"));
          if (seat === null && waiting) {
            bits.push(h("button.small.primary.sit-here", { type: "button", disabled: state.busy, onclick: () => sitDown(i), "aria-label": `Sit in seat ${i + 1}` }, "Sit here"));
          }
          if (isHost() && waiting && t.bet === 0) {
            // Bots never play for credits: only zero-bet tables offer them.
            bits.push(h("button.small.add-bot", {
              type: "button",
              disabled: state.busy,
              "aria-label": `Seat a bot in seat ${i + 1}`,
              onclick: () => run("Add a bot", () => api.addBot(tableId, i)),
            }, "Add a bot"));
          }
        }
        return h(`li.seat${mine ? ".mine" : ""}${s ? "" : ".open"}${inHand() && toAct.has(i) ? ".acting" : ""}`, { dataset: { seat: String(i) } },
          h("span.seat-no", {}, `Seat ${i + 1}`), ...bits);
      }));
  }

  function drawFelt() {
    const t = state.table;
    if (!t) return;
    const active = document.activeElement;
    const focusKey = active && felt.contains(active) ? focusKeyOf(active) : null;
    const module = game();
    const parts = [seatsStrip()];
    if (closed()) {
      parts.push(h("div.felt-message", {}, h("p", {}, t.status === "cancelled" ? "The host cancelled this table. Any hand in progress was voided: no credits moved." : "This table has ended. Thanks for playing!"),
        h("a.button.primary", { href: "#/" }, "Back to tables")));
    } else if (!module) {
      parts.push(h("div.felt-message", {}, h("p", {}, `${GAME_NAMES[t.game] || t.game} is not playable in the web client yet.`)));
    } else if (state.frame && inHand()) {
      parts.push(module.renderHand({
        table: t,
        frame: state.frame,
        view: state.frame.view,
        seat: state.frame.seat,
        selection: state.selection,
        sort: state.sort,
        busy: state.busy,
        name: (i) => t.seats[i]?.display_name || `Seat ${i + 1}`,
        toggle,
        setSelection: (sel) => { state.selection = sel; drawFelt(); },
        setSort: (s) => { state.sort = s; drawFelt(); },
        act,
        // Away / reconnecting / offline chips and the running clock of seat i (not
        // yours: yours is in `turnStatus`, by your moves).
        markers: (i) => seatMarkers(t, state.frame.view, i),
        clockOf: (i) => (i !== state.frame.seat && clockSeats(state.frame).has(i) ? countdown(state.frame.deadline_ms) : null),
        turnStatus: turnStatus({
          frame: state.frame,
          seat: state.frame.seat,
          notice: state.notice,
          busy: state.busy,
          back: () => {
            const v = state.frame.view;
            act((v.legal_actions || v.legal || []).find((a) => a.type === "back") || { type: "back" });
          },
          dismiss: () => { state.notice = null; drawFelt(); },
        }),
      }));
    } else {
      parts.push(waitingMessage());
    }
    mount(felt, parts);
    if (focusKey) restoreFocus(felt, focusKey);
    promptAnnouncements();
  }

  function waitingMessage() {
    const t = state.table;
    const empty = t.seats.filter((s) => !s).length;
    const notReady = t.seats.filter((s) => s && !s.ready).length;
    let text;
    if (t.status === "dealing") text = "Dealing…";
    else if (t.status === "playing") text = "Loading the hand…";
    else if (empty) text = `Waiting for ${empty} more player${empty > 1 ? "s" : ""}.`;
    else if (notReady) text = `Waiting for ${notReady} player${notReady > 1 ? "s" : ""} to tap Ready.`;
    else text = `Everyone is ready. Waiting for ${isHost() ? "you" : t.host_name} to deal.`;
    return h("div.felt-message#waiting", {}, h("p", {}, text));
  }

  /** I am ready / not ready, with fresh entropy for the next shuffle. */
  function readyButton(id) {
    const mine = state.table.seats[mySeat()];
    return h(`button#${id}${mine.ready ? "" : ".primary"}`, {
      type: "button",
      disabled: state.table.status !== "waiting" || state.busy,
      "aria-pressed": String(mine.ready),
      onclick: () => run("Ready", () => api.ready(tableId, !mine.ready, mine.ready ? "" : api.randomHex(16))),
    }, mine.ready ? "✓ Ready (tap to undo)" : state.result ? "Ready for the next hand" : "I am ready");
  }

  function drawControls() {
    const t = state.table;
    if (!t) return;
    const seat = mySeat();
    const mine = seat === null ? null : t.seats[seat];
    const waiting = t.status === "waiting";
    const items = [];
    if (!closed()) {
      if (seat === null) {
        const free = t.seats.some((s) => !s);
        if (free) {
          items.push(h("button.primary#sit", { type: "button", disabled: !waiting || state.busy, onclick: () => sitDown(null) }, "Sit down"),
            waiting ? null : h("span.muted.small", {}, "You can sit when this hand ends."));
        } else {
          items.push(h("span.muted.small", {}, "The table is full — enjoy watching."));
        }
      } else {
        if (waiting) items.push(readyButton("ready"));
        if (waiting) {
          items.push(h("button#leave", { type: "button", disabled: state.busy, onclick: async () => {
            const out = await run("Leave", () => api.leave(tableId));
            if (out) { socket.resubscribe(tableId); app.refreshBalance(); }
          } }, "Leave seat"));
        } else {
          items.push(h("button#leave-after", {
            type: "button",
            "aria-pressed": String(mine.leave_after_hand),
            disabled: state.busy,
            onclick: () => run("Leave after this hand", () => api.leaveAfterHand(tableId, !mine.leave_after_hand)),
          }, mine.leave_after_hand ? "✓ Leaving after this hand" : "Leave after this hand"));
        }
      }
    }
    const host = [];
    if (isHost() && !closed()) {
      const empty = t.seats.filter((s) => !s).length;
      const notReady = t.seats.filter((s) => s && !s.ready).length;
      const canDeal = waiting && !empty && !notReady;
      host.push(
        h("button.primary#deal", { type: "button", disabled: !canDeal || state.busy, onclick: () => run("Deal", () => api.deal(tableId)) }, "Deal"),
        h("button#chat-toggle", { type: "button", "aria-pressed": String(!t.chat_enabled), disabled: state.busy, onclick: () => run("Chat", () => api.setChat(tableId, !t.chat_enabled)) }, t.chat_enabled ? "Turn chat off" : "Turn chat on"),
        h("button#end-table", { type: "button", disabled: !waiting || state.busy, onclick: async () => {
          if (await confirmDialog({ title: "End the table?", body: "Close this table for good. Everyone returns to the lobby.", confirm: "End table", danger: true })) run("End", () => api.endTable(tableId));
        } }, "End table"),
        h("button.danger#cancel-table", { type: "button", disabled: state.busy, onclick: async () => {
          if (await confirmDialog({ title: "Cancel the table?", body: "Closes the table now. A hand in progress is voided: no credits move.", confirm: "Cancel table", danger: true })) run("Cancel", () => api.cancelTable(tableId));
        } }, "Cancel table"),
      );
      if (!canDeal && waiting) {
        host.push(h("span.muted.small#deal-hint", {}, empty ? `Deal needs every seat filled (${empty} empty).` : `Deal needs everyone ready (${notReady} not ready).`));
      }
    }
    mount(controls,
      items.length ? h("div.control-row", { role: "group", "aria-label": "Your seat" }, items) : null,
      host.length ? h("div.control-row.host", { role: "group", "aria-label": "Host controls" }, h("span.label", {}, "Host"), host) : null);
    chatNote.hidden = t.chat_enabled;
    chatInput.disabled = !t.chat_enabled;
    chatForm.querySelector("button").disabled = !t.chat_enabled;
  }

  function drawResult() {
    if (!state.result || !state.table) {
      resultBox.replaceChildren();
      return;
    }
    const seat = mySeat();
    const canReady = seat !== null && state.table.status === "waiting";
    mount(resultBox, renderResult(state.result, {
      game: state.table.game,
      name: (userId, s) => state.names.get(userId) || `Seat ${s + 1}`,
      me: me.user_id,
      onClose: () => { state.result = null; drawAll(); },
      actions: canReady ? readyButton("result-ready") : null,
    }));
  }

  /** Append one message (the list is a live region: only the new line is read out). */
  function addChat(c) {
    chatList.append(h(`li${c.user_id === me.user_id ? ".mine" : ""}`, {},
      h("span.who", {}, c.display_name), h("span.text", {}, c.text)));
    while (chatList.children.length > MAX_CHAT) chatList.firstElementChild.remove();
    chatList.scrollTop = chatList.scrollHeight;
  }

  function drawAll() {
    drawHead();
    drawFelt();
    drawControls();
    drawResult();
  }

  /** The server played for you (a time-out), or someone came back / went away. */
  function noteClockEvents(f, before) {
    const events = f.events || [];
    if (!events.length) return;
    const seat = f.seat;
    const text = seat === null || seat === undefined ? null : autoPlayText(events, seat, before?.view?.clock?.kind);
    if (text) {
      state.notice = text;
      const away = events.some((e) => e.type === "timed_out" && e.seat === seat && e.away) && !before?.view?.away?.[seat];
      announce(away ? `${text} You are marked away: your turns are played for you until you tap I'm back.` : text);
    }
    for (const e of events) {
      if (e.type === "returned" && e.seat === seat) {
        state.notice = null;
        announce("Welcome back: your turns are yours again.");
      }
    }
  }

  function promptAnnouncements() {
    const module = game();
    const view = state.frame?.view;
    if (!module || !view || !inHand()) return;
    const text = module.prompt(view, state.frame.seat, (i) => state.table.seats[i]?.display_name || `Seat ${i + 1}`);
    if (text && text !== state.lastPrompt) announce(text);
    state.lastPrompt = text || "";
  }

  // --- socket --------------------------------------------------------------------------
  const offs = [
    socket.on("subscribed", (f) => { if (f.table.table_id === tableId) setTable(f.table); }),
    socket.on("table", (f) => { if (f.table.table_id === tableId) setTable(f.table); }),
    socket.on("view", (f) => {
      if (f.table_id !== tableId) return;
      const newHand = !state.frame || state.frame.hand_id !== f.hand_id;
      if (newHand) {
        state.selection = [];
        state.notice = null;
        if (f.view.phase !== "over") state.result = null;
      }
      // Keep only selected cards that are still in the hand.
      const mine = game()?.concealed(f.view) || [];
      state.selection = state.selection.filter((c) => mine.includes(c));
      noteClockEvents(f, newHand ? null : state.frame);
      state.frame = f;
      drawFelt();
      drawResult();
      if (newHand) drawControls();
    }),
    socket.on("result", (f) => {
      if (f.table_id !== tableId) return;
      state.result = f;
      drawAll();
      app.refreshBalance();
      const seat = f.players.indexOf(me.user_id);
      if (seat >= 0) announce(`Hand over. You ${f.payments[seat] >= 0 ? "received" : "paid"} ${credits(Math.abs(f.payments[seat]))} credits.`);
      else announce("Hand over.");
    }),
    socket.on("chat", (f) => {
      if (f.table_id !== tableId) return;
      state.chat.push(f);
      if (state.chat.length > MAX_CHAT) state.chat.shift();
      addChat(f);
    }),
    socket.on("error", (f) => {
      // Answers to our own requests (with a ref) are reported where they were made.
      const quiet = ["token_expired", "invalid_token", "not_subscribed"];
      if ((f.ref === undefined || f.ref === null) && !quiet.includes(f.code)) toast(f.message, "error");
    }),
    socket.on("status", (s) => {
      head.classList.toggle("offline", s !== "open");
    }),
  ];

  try {
    // A private table is shown only with its invite code (unless you host it or sit
    // there): without one the server answers not_found, so ask for it once.
    let table;
    try {
      table = await api.getTable(tableId, api.inviteFor(tableId));
    } catch (err) {
      if (err.code !== "not_found") throw err;
      const code = await ask({ title: "Private table?", label: "Invite code", hint: "A private table opens only with its invite code. Ask the host for it.", confirm: "Open" });
      if (!code) throw err;
      table = await api.getTable(tableId, code);
      api.rememberInvite(tableId, code);
    }
    setTable(table);
  } catch (err) {
    mount(felt, h("div.felt-message", {}, h("p", {}, err.code === "not_found" ? "This table does not exist (or has closed)." : err.message), h("a.button.primary", { href: "#/" }, "Back to tables")));
    return () => offs.forEach((off) => off());
  }
  socket.subscribe(tableId);

  felt.addEventListener("keydown", handKeys);
  const stopTicker = startTicker(felt);

  return () => {
    stopTicker();
    offs.forEach((off) => off());
    socket.unsubscribe(tableId);
    if (window.kalaro.tableState === state) window.kalaro.tableState = null;
  };
}

// --- focus and keyboard ---------------------------------------------------------------

function focusKeyOf(el) {
  if (el.id) return `#${el.id}`;
  if (el.dataset.card) return `[data-card="${el.dataset.card}"]`;
  if (el.dataset.tile && el.dataset.index) return `[data-tile="${el.dataset.tile}"][data-index="${el.dataset.index}"]`;
  if (el.dataset.meld) return `[data-meld="${el.dataset.meld}"]`;
  if (el.dataset.action) return `[data-action="${el.dataset.action}"]`;
  return null;
}

function restoreFocus(container, key) {
  const el = container.querySelector(key);
  if (el && !el.disabled) el.focus();
  else container.querySelector(".hand button")?.focus();
}

/** Arrow keys move between the cards/tiles of your hand; Space/Enter select (native). */
function handKeys(event) {
  const target = event.target;
  const hand = target.closest?.(".hand");
  if (!hand) return;
  const buttons = [...hand.querySelectorAll("button")];
  const i = buttons.indexOf(target);
  if (i < 0) return;
  let next = null;
  if (event.key === "ArrowRight" || event.key === "ArrowDown") next = buttons[(i + 1) % buttons.length];
  if (event.key === "ArrowLeft" || event.key === "ArrowUp") next = buttons[(i - 1 + buttons.length) % buttons.length];
  if (event.key === "Home") next = buttons[0];
  if (event.key === "End") next = buttons[buttons.length - 1];
  if (next) {
    event.preventDefault();
    next.focus();
  }
}
