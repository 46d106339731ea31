// A table: seats, the hand in play (drawn by the game's module), the lobby controls
// (sit, ready, leave, host controls), the result of the last hand, the move log and chat.
//
// One store (table-store.js) holds the page's state; socket frames and the player's
// intents are its only inputs (reducers), and `draw(state)` renders every region from
// it after each change, patching the DOM in place (table-dom.js): no redraw can be
// forgotten, and focus, selection and scroll stay where the player left them. Game moves
// are offered only as the view's legal actions list them, and sent back verbatim.
//
// Phones: your hand, the hint and your moves live in the tray (#tray), fixed at the
// bottom of the screen, or in landscape during a hand in a column at its right edge
// beside the board (styles.css), so no move needs a scroll.

import * as api from "../api.js";
import { announce, credits, mount, toast } from "../dom.js";
import { ask, confirmDialog } from "./dialogs.js";
import { renderResult } from "./result.js";
import { clockFact, clockSeats, countdown, seatMarkers, startTicker, turnStatus } from "./clock.js";
import { h, patch } from "./table-dom.js";
import { closed, createStore, cues, gameOf, inHand, initialState, isHost, legalOf, mySeat } from "./table-store.js";
import * as sound from "./table-sound.js";

const GAME_NAMES = { tongits: "Tongits", mahjong: "Mahjong", kawuxing: "Ka Wu Xing" };
const STATUS_TEXT = { waiting: "Waiting for players", dealing: "Dealing…", ended: "Table ended", cancelled: "Table cancelled" };

export async function render(root, app) {
  const { tableId } = app.params;
  const socket = app.socket;
  const me = api.currentUser();
  const store = createStore(initialState({ tableId, me: me.user_id }));
  window.kalaro.tableState = store.state; // for the console and browser tests
  window.kalaro.tableStore = store;
  const dispatch = (action) => store.dispatch(action);

  // --- regions (each is patched from the state; none is ever replaced) ---------------
  const head = h("header.table-head");
  const felt = h("section.felt#felt", { "aria-label": "Table" });
  const tray = h("section.tray#tray", { "aria-label": "Your hand and moves" });
  const controls = h("section.controls#controls", { "aria-label": "Table controls" });
  const resultBox = h("section.result-box#result", { "aria-live": "polite" });
  // Both scroll inside their own boxes: focusable, so a keyboard can scroll them too.
  const logList = h("ol.move-log#move-log", { "aria-label": "Moves so far", tabindex: "0" });
  const chatList = h("ol.chat-list#chat-list", { "aria-live": "polite", "aria-label": "Chat messages", tabindex: "0" });
  const chatInput = h("input#chat-input", { type: "text", maxlength: 300, autocomplete: "off", "aria-label": "Chat message", placeholder: "Say something nice…" });
  const chatNote = h("p.muted.small#chat-note", { hidden: true }, "The host turned chat off.");
  const chatSend = h("button", { type: "submit" }, "Send");
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
  }, chatInput, chatSend);
  const logPanel = h("section.log.panel", { "aria-labelledby": "log-title" }, h("h2#log-title", {}, "Moves"), logList);
  const chatPanel = h("section.chat.panel", { "aria-labelledby": "chat-title" },
    h("h2#chat-title", {}, "Chat"), chatList, chatNote, chatForm);

  mount(root, h("div.table-page", {}, head,
    h("div.table-main", {}, felt, tray, resultBox, controls),
    h("aside.table-side", {}, logPanel, chatPanel)));

  // The tray is fixed at the bottom of a phone: keep the page's end clear of it.
  const trayHeight = () => document.documentElement.style.setProperty("--tray-h", `${Math.ceil(tray.getBoundingClientRect().height)}px`);
  const resize = typeof ResizeObserver === "function" ? new ResizeObserver(trayHeight) : null;
  resize?.observe(tray);

  // --- intents -------------------------------------------------------------------------
  const state = () => store.state;

  async function run(label, fn) {
    if (state().busy) return null;
    dispatch({ type: "busy", busy: true });
    try {
      const out = await fn();
      if (out && out.table_id) dispatch({ type: "table", table: out });
      return out;
    } catch (err) {
      toast(`${label}: ${err.message}`, "error");
      return null;
    } finally {
      dispatch({ type: "busy", busy: false });
    }
  }

  async function act(action) {
    if (state().busy) return;
    dispatch({ type: "busy", busy: true });
    try {
      await socket.act(tableId, action);
      dispatch({ type: "acted" });
    } catch (err) {
      toast(err.message, "error");
    } finally {
      dispatch({ type: "busy", busy: false });
    }
  }

  async function sitDown(seat = null) {
    let code = null;
    if (state().table.private && !isHost(state())) {
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

  function toggleMute() {
    sound.setMuted(!sound.isMuted());
    draw(state());
  }

  // --- rendering: every region from the state ------------------------------------------
  function headView(st) {
    const t = st.table;
    if (!t) return [h("h1", {}, "Table"), h("p.muted", {}, st.loadError ? "" : "Loading…")];
    const seat = mySeat(st);
    const invite = isHost(st) && t.private ? sessionStorage.getItem(`kalaro.invite.${t.table_id}`) : null;
    const statusText = t.status === "playing" ? `Hand ${t.hand_no}` : STATUS_TEXT[t.status] || t.status;
    return [
      h("a.back", { href: "#/", "aria-label": "Back to tables" }, "←"),
      h("div.title", {},
        h("h1", {}, GAME_NAMES[t.game] || t.game, h("span.by", {}, t.ranked ? " · ranked" : ` · ${t.host_name}'s table`)),
        h("p.facts", {},
          h("span.fact.bet", {}, t.bet ? `Bet ${credits(t.bet)}` : "Free play"),
          h("span.fact", {}, t.ruleset),
          t.private ? h("span.fact", {}, "Private") : null,
          clockFact(t),
          h("span.fact.status#table-status", { dataset: { status: t.status } }, statusText),
          t.min_rating != null ? h("span.fact.min-rating", {}, `Rating ${credits(t.min_rating)}+`) : null,
          // A ranked table's spectators see it late (issue 34: watching cannot help a player).
          seat === null ? h("span.fact.watching#watching", {}, t.ranked ? "Watching, 3 moves behind" : "Watching") : h("span.fact.you", {}, `You: seat ${seat + 1}`),
          invite ? h("span.fact", {}, "Invite code: ", h("code#invite-code", {}, invite)) : null),
        gameOf(st)?.rulesPanel?.(t, { open: false })),
    ];
  }

  function seatsStrip(st) {
    const t = st.table;
    const view = st.frame?.view;
    const toAct = new Set(view?.to_act || []);
    const dealer = view ? view.dealer : t.dealer;
    const seat = mySeat(st);
    const playing = inHand(st);
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
          bits.push(...seatMarkers(t, playing ? view : null, i));
          if (waiting) bits.push(h(`span.ready${s.ready ? ".yes" : ".no"}`, {}, s.ready ? "✓ Ready" : "Not ready"));
          if (s.leave_after_hand) bits.push(h("span.chip.leaving", {}, "Leaving after this hand"));
          if (playing && toAct.has(i)) bits.push(h("span.chip.turn", {}, "to play"));
          if (isHost(st) && waiting && !mine) {
            bits.push(h("button.small.ghost.remove", {
              type: "button",
              disabled: st.busy,
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
            bits.push(h("button.small.primary.sit-here", { type: "button", disabled: st.busy, onclick: () => sitDown(i), "aria-label": `Sit here, seat ${i + 1}` }, "Sit here"));
          }
          if (isHost(st) && waiting && t.bet === 0) {
            // Bots never play for credits: only zero-bet tables offer them.
            bits.push(h("button.small.add-bot", {
              type: "button",
              disabled: st.busy,
              "aria-label": `Add a bot, seat ${i + 1}`,
              onclick: () => run("Add a bot", () => api.addBot(tableId, i)),
            }, "Add a bot"));
          }
        }
        return h(`li.seat${mine ? ".mine" : ""}${s ? "" : ".open"}${playing && toAct.has(i) ? ".acting" : ""}`, { dataset: { seat: String(i) } },
          h("span.seat-no", {}, `Seat ${i + 1}`), ...bits);
      }));
  }

  /** What the game modules draw from (the same for the board and the tray). */
  function gameCtx(st) {
    const t = st.table;
    const frame = st.frame;
    return {
      table: t,
      frame,
      view: frame.view,
      seat: frame.seat,
      selection: st.selection,
      picked: st.picked,
      sort: st.sort,
      busy: st.busy,
      name: (i) => t.seats[i]?.display_name || `Seat ${i + 1}`,
      lastDiscard: lastDiscard(st),
      toggle: (item) => dispatch({ type: "toggle", item }),
      setSelection: (items, picked) => dispatch({ type: "select", items, picked }),
      setSort: (sort) => dispatch({ type: "sort", sort }),
      act,
      // Away / reconnecting / offline chips and the running clock of seat i (not
      // yours: yours is in `turnStatus`, by your moves).
      markers: (i) => seatMarkers(t, frame.view, i),
      clockOf: (i) => (i !== frame.seat && clockSeats(frame).has(i) ? countdown(frame.deadline_ms) : null),
      turnStatus: turnStatus({
        frame,
        seat: frame.seat,
        notice: st.notice,
        busy: st.busy,
        back: () => act(legalOf(frame).find((a) => a.type === "back") || { type: "back" }),
        dismiss: () => dispatch({ type: "dismiss-notice" }),
      }),
    };
  }

  function feltView(st) {
    const t = st.table;
    if (!t) {
      return st.loadError ? h("div.felt-message", {}, h("p", {}, st.loadError), h("a.button.primary", { href: "#/" }, "Back to tables")) : null;
    }
    const module = gameOf(st);
    const parts = [seatsStrip(st)];
    if (closed(st)) {
      parts.push(h("div.felt-message", {}, h("p", {}, t.status === "cancelled" ? "The host cancelled this table. Any hand in progress was voided: no credits moved." : "This table has ended. Thanks for playing!"),
        h("a.button.primary", { href: "#/" }, "Back to tables")));
    } else if (!module) {
      parts.push(h("div.felt-message", {}, h("p", {}, `${GAME_NAMES[t.game] || t.game} is not playable in the web client yet.`)));
    } else if (st.frame && inHand(st)) {
      parts.push(module.renderHand(gameCtx(st)));
    } else {
      parts.push(waitingMessage(st));
    }
    return parts;
  }

  function trayView(st) {
    const module = gameOf(st);
    const playing = st.table && st.frame && inHand(st) && module && !closed(st);
    const last = st.log[st.log.length - 1];
    const muted = sound.isMuted();
    const bar = h("div.tray-bar", {},
      h("p.last-move#last-move", { "aria-hidden": "true", dataset: { key: last?.key || "none", kind: last?.kind || "" } }, last ? last.text : ""),
      h("button.ghost.small.mute#mute", {
        type: "button",
        "aria-pressed": String(muted),
        "aria-label": muted ? "Sounds off: tap to turn them on" : "Sounds on: tap to mute",
        title: muted ? "Sounds are off" : "Sounds are on",
        onclick: toggleMute,
      }, muted ? "♪ Off" : "♪ On"));
    return [bar, playing ? module.renderTray(gameCtx(st)) : null];
  }

  function waitingMessage(st) {
    const t = st.table;
    const empty = t.seats.filter((s) => !s).length;
    const notReady = t.seats.filter((s) => s && !s.ready).length;
    let text;
    if (t.status === "dealing") text = "Dealing…";
    else if (t.status === "playing") text = "Loading the hand…";
    else if (empty) text = `Waiting for ${empty} more player${empty > 1 ? "s" : ""}.`;
    else if (notReady && t.ranked && t.ready_by) {
      // The ranked ready clock: whoever is not ready by then is stood up; the table ends.
      const by = new Date(t.ready_by * 1000).toLocaleTimeString("en-GB");
      text = `Waiting for ${notReady} player${notReady > 1 ? "s" : ""} to tap Ready, by ${by} or the ranked table closes.`;
    } else if (notReady) text = `Waiting for ${notReady} player${notReady > 1 ? "s" : ""} to tap Ready.`;
    else if (t.ranked) text = "Everyone is ready. Dealing…";
    else text = `Everyone is ready. Waiting for ${isHost(st) ? "you" : t.host_name} to deal.`;
    return h("div.felt-message#waiting", {}, h("p", {}, text));
  }

  /** I am ready / not ready, with fresh entropy for the next shuffle. */
  function readyButton(st, id) {
    const mine = st.table.seats[mySeat(st)];
    const waiting = st.table.status === "waiting";
    return h(`button#${id}${mine.ready ? "" : ".primary"}`, {
      type: "button",
      disabled: !waiting || st.busy,
      title: waiting ? undefined : "You can tap Ready when the hand is over",
      "aria-pressed": String(mine.ready),
      onclick: () => run("Ready", () => api.ready(tableId, !mine.ready, mine.ready ? "" : api.randomHex(16))),
    }, mine.ready ? "✓ Ready (tap to undo)" : st.result ? "Ready for the next hand" : "I am ready");
  }

  function controlsView(st) {
    const t = st.table;
    if (!t) return null;
    const seat = mySeat(st);
    const mine = seat === null ? null : t.seats[seat];
    const waiting = t.status === "waiting";
    const items = [];
    if (!closed(st)) {
      if (seat === null) {
        const free = t.seats.some((s) => !s);
        if (free) {
          items.push(h("button.primary#sit", { type: "button", disabled: !waiting || st.busy, title: waiting ? undefined : "You can sit when this hand ends", onclick: () => sitDown(null) }, "Sit down"),
            waiting ? null : h("span.muted.small", {}, "You can sit when this hand ends."));
        } else {
          items.push(h("span.muted.small", {}, "The table is full — enjoy watching."));
        }
      } else {
        if (waiting) items.push(readyButton(st, "ready"));
        if (waiting) {
          items.push(h("button#leave", { type: "button", disabled: st.busy, onclick: async () => {
            const out = await run("Leave", () => api.leave(tableId));
            if (out) { socket.resubscribe(tableId); app.refreshBalance(); }
          } }, "Leave seat"));
        } else {
          items.push(h("button#leave-after", {
            type: "button",
            "aria-pressed": String(mine.leave_after_hand),
            disabled: st.busy,
            onclick: () => run("Leave after this hand", () => api.leaveAfterHand(tableId, !mine.leave_after_hand)),
          }, mine.leave_after_hand ? "✓ Leaving after this hand" : "Leave after this hand"));
        }
      }
    }
    const host = [];
    if (isHost(st) && !closed(st)) {
      const empty = t.seats.filter((s) => !s).length;
      const notReady = t.seats.filter((s) => s && !s.ready).length;
      const canDeal = waiting && !empty && !notReady;
      const dealWhy = !waiting ? "A hand is in progress" : empty ? `Deal needs every seat filled (${empty} empty).` : notReady ? `Deal needs everyone ready (${notReady} not ready).` : null;
      host.push(
        h("button.primary#deal", { type: "button", disabled: !canDeal || st.busy, title: dealWhy || undefined, onclick: () => run("Deal", () => api.deal(tableId)) }, "Deal"),
        h("button#chat-toggle", { type: "button", "aria-pressed": String(!t.chat_enabled), disabled: st.busy, onclick: () => run("Chat", () => api.setChat(tableId, !t.chat_enabled)) }, t.chat_enabled ? "Turn chat off" : "Turn chat on"),
        h("button#end-table", { type: "button", disabled: !waiting || st.busy, title: waiting ? undefined : "End the table between hands (or cancel it)", onclick: async () => {
          if (await confirmDialog({ title: "End the table?", body: "Close this table for good. Everyone returns to the lobby.", confirm: "End table", danger: true })) run("End", () => api.endTable(tableId));
        } }, "End table"),
        h("button.danger#cancel-table", { type: "button", disabled: st.busy, onclick: async () => {
          if (await confirmDialog({ title: "Cancel the table?", body: "Closes the table now. A hand in progress is voided: no credits move.", confirm: "Cancel table", danger: true })) run("Cancel", () => api.cancelTable(tableId));
        } }, "Cancel table"),
      );
      // Issue 34: the rating a sit needs, on a public table with people to gate (not
      // practice: bots) and between hands (a hand's tray keeps its room for the cards).
      if (!t.private && !t.practice && waiting) {
        host.push(h("button#min-rating", { type: "button", disabled: st.busy, onclick: async () => {
          const given = await ask({
            title: "Minimum rating",
            label: "Rating a player needs to sit",
            hint: "In this game; players not rated yet count as 1000. 0 lets anyone sit.",
            confirm: "Save",
            value: t.min_rating != null ? String(t.min_rating) : "0",
          });
          if (given === null) return;
          const rating = Number(given);
          if (!Number.isFinite(rating) || rating < 0 || rating > 10000) {
            toast("Give a rating from 0 to 10000.", "error");
            return;
          }
          run("Minimum rating", () => api.setMinRating(tableId, rating > 0 ? rating : null));
        } }, t.min_rating != null ? `Min rating ${credits(t.min_rating)}` : "Min rating"));
      }
      if (!canDeal && waiting) host.push(h("span.muted.small#deal-hint", {}, dealWhy));
    }
    return [
      items.length ? h("div.control-row", { role: "group", "aria-label": "Your seat" }, items) : null,
      host.length ? h("div.control-row.host", { role: "group", "aria-label": "Host controls" }, h("span.label", {}, "Host"), host) : null,
    ];
  }

  function resultView(st) {
    if (!st.result || !st.table) return null;
    const seat = mySeat(st);
    const canReady = seat !== null && st.table.status === "waiting";
    return renderResult(st.result, {
      game: st.table.game,
      name: (userId, s) => st.names[userId] || `Seat ${s + 1}`,
      me: st.me,
      onClose: () => dispatch({ type: "close-result" }),
      actions: canReady ? readyButton(st, "result-ready") : null,
    });
  }

  function logView(st) {
    const fresh = new Set(st.fresh.map((e) => e.key));
    if (!st.log.length) return h("li.muted.small", { dataset: { key: "empty" } }, "Moves will show here.");
    return st.log.map((e) => h(`li.log-entry.${e.kind}${e.mine ? ".mine" : ""}${fresh.has(e.key) ? ".fresh" : ""}`, { dataset: { key: e.key, kind: e.kind } }, e.text));
  }

  function chatView(st) {
    return st.chat.map((c, i) => h(`li${c.user_id === st.me ? ".mine" : ""}`, { dataset: { key: `${c.at}:${c.user_id}:${i}` } },
      h("span.who", {}, c.display_name), h("span.text", {}, c.text)));
  }

  function draw(st) {
    patch(head, headView(st));
    head.classList.toggle("offline", st.socket !== "open" && st.socket !== "idle");
    patch(felt, feltView(st));
    const playing = Boolean(st.table && st.frame && inHand(st) && !closed(st));
    tray.classList.toggle("playing", playing);
    patch(tray, trayView(st));
    patch(resultBox, resultView(st));
    patch(controls, controlsView(st));
    // The log and chat scroll inside their own boxes, never the page.
    const logAtEnd = logList.scrollTop + logList.clientHeight >= logList.scrollHeight - 8;
    patch(logList, logView(st));
    if (logAtEnd) logList.scrollTop = logList.scrollHeight;
    const chatCount = chatList.children.length;
    patch(chatList, chatView(st));
    if (chatList.children.length !== chatCount) chatList.scrollTop = chatList.scrollHeight;
    const chatOn = !st.table || st.table.chat_enabled;
    chatNote.hidden = chatOn;
    chatInput.disabled = !chatOn;
    chatSend.disabled = !chatOn;
    chatSend.title = chatOn ? "" : "The host turned chat off";
    trayHeight();
  }

  // --- side effects of a change (never in a reducer) -----------------------------------
  function effects(st, prev) {
    const before = prev.table;
    const t = st.table;
    if (before && t && before.status !== t.status) {
      app.refreshBalance(); // holds are placed at the deal and released at the end
      if (t.status === "playing") announce("The hand has been dealt.");
      if (t.status === "cancelled") announce("The host cancelled the table.");
      if (t.status === "ended") announce("The host ended the table.");
    }
    if (st.result && st.result !== prev.result) {
      app.refreshBalance();
      const seat = st.result.players.indexOf(st.me);
      if (seat >= 0) announce(`Hand over. You ${st.result.payments[seat] >= 0 ? "received" : "paid"} ${credits(Math.abs(st.result.payments[seat]))} credits.`);
      else announce("Hand over.");
    }
    if (st.error && st.error !== prev.error) toast(st.error.message, "error");
    if (st.notice && st.notice !== prev.notice) {
      const seat = st.frame?.seat;
      const away = Boolean(st.frame?.view?.away?.[seat]) && !prev.frame?.view?.away?.[seat];
      announce(away ? `${st.notice} You are marked away: your turns are played for you until you tap I'm back.` : st.notice);
    } else if (!st.notice && prev.notice && st.frame !== prev.frame && (st.frame?.events || []).some((e) => e.type === "returned" && e.seat === st.frame.seat)) {
      announce("Welcome back: your turns are yours again.");
    }
    const module = gameOf(st);
    if (module && st.frame && st.frame !== prev.frame && inHand(st)) {
      const text = module.prompt(st.frame.view, st.frame.seat, (i) => st.table.seats[i]?.display_name || `Seat ${i + 1}`);
      const was = prev.frame && prev.table ? module.prompt(prev.frame.view, prev.frame.seat, (i) => prev.table.seats[i]?.display_name || `Seat ${i + 1}`) : "";
      if (text && text !== was) announce(text);
    }
    for (const cue of cues(prev, st)) sound.play(cue);
  }

  store.subscribe((st, prev) => {
    window.kalaro.tableState = st;
    draw(st);
    effects(st, prev);
  });
  // Table notices (removed, ended: table-notices.js) watch the socket itself, wired once in
  // app.js, so they work on any page; store.onTable((prev, next, state) => …) is here for
  // anything that must react to the table record inside this view.

  // --- socket frames: straight into the store -----------------------------------------
  const offs = [
    socket.on("subscribed", (f) => dispatch({ type: "subscribed", table: f.table })),
    socket.on("table", (f) => dispatch({ type: "table", table: f.table })),
    socket.on("view", (f) => dispatch({ type: "view", frame: f })),
    socket.on("result", (f) => dispatch({ type: "result", frame: f })),
    socket.on("chat", (f) => dispatch({ type: "chat", frame: f })),
    socket.on("error", (f) => dispatch({ type: "error", frame: f })),
    socket.on("status", (s) => dispatch({ type: "status", status: s })),
  ];
  dispatch({ type: "status", status: socket.status });
  draw(store.state);

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
    dispatch({ type: "table", table });
  } catch (err) {
    dispatch({ type: "load-error", error: err.code === "not_found" ? "This table does not exist (or has closed)." : err.message });
    return () => { offs.forEach((off) => off()); resize?.disconnect(); };
  }
  socket.subscribe(tableId);
  sound.unlockOnGesture();

  felt.addEventListener("keydown", handKeys);
  tray.addEventListener("keydown", handKeys);
  const stopTicker = startTicker(root);

  return () => {
    stopTicker();
    resize?.disconnect();
    offs.forEach((off) => off());
    socket.unsubscribe(tableId);
    document.documentElement.style.removeProperty("--tray-h");
    if (window.kalaro.tableStore === store) {
      window.kalaro.tableState = null;
      window.kalaro.tableStore = null;
    }
  };
}

/** The tile game's newest discard still lying on the table ({seat, tile}), from this
 * hand's move log; null once it was claimed (or before any discard was seen). */
function lastDiscard(st) {
  const hand = `${st.frame?.hand_id}:`;
  for (let i = st.log.length - 1; i >= 0; i -= 1) {
    const e = st.log[i];
    if (!e.key.startsWith(hand)) return null;
    if (e.kind === "claim") return null;
    if (e.kind === "discard") return e.tile ? { seat: e.seat, tile: e.tile } : null;
  }
  return null;
}

// --- focus and keyboard ---------------------------------------------------------------

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
