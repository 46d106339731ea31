// "Quick play (ranked)" in the lobby: pick a game and a stake, join the ranked queue,
// see how long you have waited, leave it. When the server seats you (the `seated`
// socket frame, which app.js follows from any page, or GET /api/queue saying so) the
// page goes to the table.
//
// One small store: `state` changes only through `reduce`, and `draw(state)` renders the
// part that changes (the form's inputs are drawn once, so typing or focus is never lost).

import * as api from "../api.js";
import { credits, field, h } from "../dom.js";
import { GAMES } from "./history.js";

const STAKES = [10, 20, 50, 100, 500];
const POLL_MS = 3000;

export const initialState = () => ({ phase: "loading", game: "tongits", bet: 20, waitedS: 0, since: 0, tableId: null, error: "" });

/** What the queue said ({status, waited_s, table_id, game, bet}), or a local step. */
export function reduce(state, action) {
  switch (action.type) {
    case "status": {
      const s = action.status || {};
      if (s.status === "waiting") {
        return { ...state, phase: "waiting", waitedS: Number(s.waited_s) || 0, since: action.at, game: s.game || state.game, bet: s.bet || state.bet, error: "" };
      }
      if (s.status === "seated" && s.table_id) return { ...state, phase: "seated", tableId: s.table_id, error: "" };
      return { ...state, phase: "idle", tableId: null, error: action.keepError ? state.error : "" };
    }
    case "choose":
      return { ...state, ...action.patch };
    case "busy":
      return { ...state, phase: action.phase, error: "" };
    case "error":
      return { ...state, phase: action.phase || "idle", error: action.message };
    default:
      return state;
  }
}

/** Seconds as "0:07" or "12:30". */
export function waited(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

export function quickPlayPanel(app) {
  let state = initialState();
  let poll = 0;
  let tick = 0;
  let joinedHere = false; // jump to the table only for a wait this page saw
  const now = () => Date.now();

  const game = h("select#queue-game", { name: "game" },
    Object.entries(GAMES).map(([value, label]) => h("option", { value }, label)));
  const bet = h("select#queue-bet", { name: "bet" },
    STAKES.map((n) => h("option", { value: String(n), selected: n === state.bet }, `${credits(n)} credits`)));
  game.addEventListener("change", () => dispatch({ type: "choose", patch: { game: game.value } }));
  bet.addEventListener("change", () => dispatch({ type: "choose", patch: { bet: Number(bet.value) } }));
  const status = h("p.queue-status#queue-status", { role: "status" });
  const clock = h("p.queue-waited#queue-waited", { hidden: true });
  const error = h("p.form-error#queue-error", { role: "alert", hidden: true });
  const join = h("button.primary#queue-join", { type: "submit" }, "Quick play (ranked)");
  const leave = h("button.danger#queue-leave", { type: "button", hidden: true, onclick: () => leaveQueue() }, "Leave the queue");
  const goBack = h("button.primary#queue-table", { type: "button", hidden: true, onclick: () => app.navigate(`/tables/${state.tableId}`) }, "Go to my ranked table");
  const form = h("form.quick-play#quick-play-form", { onsubmit: (e) => { e.preventDefault(); joinQueue(); } },
    h("div.grid2", {}, field("Game", game), field("Stake per hand", bet, "Your balance must cover the table's maximum loss.")),
    h("div.control-row", {}, join, leave, goBack));
  const el = h("section.panel.quick-play#quick-play", { "aria-labelledby": "quick-play-title" },
    h("h2#quick-play-title", {}, "Quick play (ranked)"),
    h("p.muted", {}, "The server seats you with players of your level: no host, no bots, and every hand counts towards your rating."),
    form, status, clock, error);

  function dispatch(action) {
    const before = state;
    state = reduce(state, action);
    draw(state, before);
  }

  function draw(s, before) {
    const waiting = s.phase === "waiting";
    const busy = s.phase === "joining" || s.phase === "leaving" || s.phase === "loading";
    join.hidden = waiting || s.phase === "seated";
    join.disabled = busy;
    leave.hidden = !waiting && s.phase !== "leaving";
    leave.disabled = s.phase === "leaving";
    goBack.hidden = s.phase !== "seated";
    game.disabled = waiting || busy;
    bet.disabled = waiting || busy;
    // Announced once per change of phase (the ticking clock is not a live region).
    if (!before || before.phase !== s.phase) {
      status.textContent = {
        loading: "",
        idle: "",
        joining: "Joining the queue…",
        waiting: `Looking for ${GAMES[s.game] || s.game} players at ${credits(s.bet)} credits…`,
        leaving: "Leaving the queue…",
        seated: "You have a seat at a ranked table.",
      }[s.phase] ?? "";
    }
    clock.hidden = !waiting;
    showWaited();
    error.hidden = !s.error;
    error.textContent = s.error;
    clearInterval(tick);
    clearInterval(poll);
    if (waiting) {
      tick = setInterval(showWaited, 1000);
      poll = setInterval(refresh, POLL_MS);
    }
    if (s.phase === "seated" && joinedHere) {
      joinedHere = false;
      app.navigate(`/tables/${s.tableId}`);
    }
  }

  function showWaited() {
    if (state.phase !== "waiting") return;
    clock.textContent = `Waiting ${waited(state.waitedS + (now() - state.since) / 1000)}`;
  }

  async function refresh() {
    try {
      dispatch({ type: "status", status: await api.queueStatus(), at: now(), keepError: true });
    } catch (err) {
      if (state.phase === "loading") dispatch({ type: "status", status: null, at: now() });
      if (err.status !== 404) dispatch({ type: "error", phase: state.phase, message: err.message });
    }
  }

  async function joinQueue() {
    dispatch({ type: "busy", phase: "joining" });
    try {
      const answer = await api.joinQueue(state.game, state.bet);
      joinedHere = true;
      dispatch({ type: "status", status: answer, at: now() });
    } catch (err) {
      const more = err.code === "insufficient_funds" ? " Request credits in your Wallet." : "";
      dispatch({ type: "error", message: `${err.message}${more}` });
      join.focus();
    }
  }

  async function leaveQueue() {
    dispatch({ type: "busy", phase: "leaving" });
    try {
      dispatch({ type: "status", status: await api.leaveQueue(), at: now() });
      status.textContent = "You left the queue.";
      join.focus();
    } catch (err) {
      dispatch({ type: "error", phase: "waiting", message: err.message });
    }
  }

  draw(state);
  refresh();
  return {
    el,
    stop() {
      clearInterval(tick);
      clearInterval(poll);
    },
  };
}

/** A live view of the queue for app.js: `seated` frames take the player to the table. */
export function followSeated(socket, app, toast) {
  return socket.on("seated", (frame) => {
    toast(`You have a seat at a ranked ${GAMES[frame.game] || frame.game || ""} table.`);
    app.navigate(`/tables/${frame.table_id}`);
  });
}
