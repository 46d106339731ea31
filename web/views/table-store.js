// The table page as one store: a state object that only reducers change — one per socket
// frame (subscribed, table, view, result, chat, error, status) and one per user intent
// (select, sort, busy, dismiss…) — and listeners that render the whole page from it.
//
// Reducers are pure (state, action) -> state. What the page does besides drawing
// (announcements, sounds, the balance) is derived afterwards from (prev, next) by the
// page, never inside a reducer.
//
// Every table record — a `table` frame (TableChanged), the `subscribed` answer, a REST
// answer — goes through `tableChanged` below, and then through the store's table hooks
// with the previous and the next table: `store.onTable((prev, next, state) => …)`.

import { autoPlayText } from "./clock.js";
import { describe, describeResult } from "./table-log.js";
import * as tongits from "./table-tongits.js";
import * as mahjong from "./table-mahjong.js";

// Ka Wu Xing is a tile game too: the Mahjong module draws it (3 seats, kongs, Show Hand).
export const GAMES = { tongits, mahjong, kawuxing: mahjong };
export const MAX_CHAT = 100;
export const MAX_LOG = 60;

export function initialState({ tableId, me, sort = "suit" }) {
  return {
    tableId,
    me, // the signed-in user's id
    table: null,
    frame: null, // newest view frame ({view, version, seat, deadline_ms, events, hand_id})
    result: null, // the last hand's result frame
    chat: [],
    log: [], // the move log: {key, kind, seat, text, mine}
    fresh: [], // the newest frame's log entries (what animates now)
    selection: [], // selected cards/tiles, in the order they were picked
    picked: -1, // which copy of a selected tile was tapped (tiles of a kind are alike)
    sort,
    busy: false,
    names: {}, // user id -> display name (kept after players leave, for results)
    notice: null, // "Time ran out: …" after the server played for you (until you move)
    socket: "idle",
    error: null, // the newest error frame that was not an answer to our own request
    loadError: null,
  };
}

// --- derived -------------------------------------------------------------------------

export function mySeat(state) {
  const t = state.table;
  if (!t) return null;
  const i = t.seats.findIndex((s) => s && s.user_id === state.me);
  return i < 0 ? null : i;
}

export const inHand = (state) => Boolean(state.table && (state.table.status === "playing" || state.table.status === "dealing"));
export const closed = (state) => Boolean(state.table && (state.table.status === "ended" || state.table.status === "cancelled"));
export const isHost = (state) => Boolean(state.table && state.table.host_id === state.me);
export const gameOf = (state) => GAMES[state.table?.game];

export function legalOf(frame) {
  const v = frame?.view;
  return v?.legal || [];
}

function seatName(table, s) {
  return table?.seats?.[s]?.display_name || `Seat ${s + 1}`;
}

// --- reducers ------------------------------------------------------------------------

/** THE place every table record passes: (state, previous table, next table) -> state. */
export function tableChanged(state, table) {
  const prev = state.table;
  if (prev && prev.table_id === table.table_id && table.version < prev.version) return state;
  const names = { ...state.names };
  table.seats.forEach((s) => { if (s) names[s.user_id] = s.display_name; });
  return { ...state, table, names };
}

function viewArrived(state, f) {
  if (f.table_id !== state.tableId) return state;
  const newHand = !state.frame || state.frame.hand_id !== f.hand_id;
  let { selection, notice, result, log, picked } = state;
  if (newHand) {
    selection = [];
    picked = -1;
    notice = null;
    if (f.view.phase !== "over") result = null;
  }
  // Keep only selected cards that are still in the hand.
  const mine = GAMES[state.table?.game]?.concealed(f.view) || [];
  selection = selection.filter((c) => mine.includes(c));
  const seat = f.seat;
  const events = f.events || [];
  const text = seat === null || seat === undefined ? null : autoPlayText(events, seat, newHand ? null : state.frame?.view?.clock?.kind);
  if (text) notice = text;
  if (events.some((e) => e.type === "returned" && e.seat === seat)) notice = null;
  const name = (s) => seatName(state.table, s);
  const fresh = [];
  events.forEach((e, i) => {
    const entry = describe(e, name, seat);
    if (entry) fresh.push({ ...entry, key: `${f.hand_id}:${f.version}:${i}`, mine: entry.seat === seat && seat !== null && seat !== undefined });
  });
  if (newHand && state.frame) log = [...log, { kind: "hand", seat: null, text: "A new hand is dealt", key: `${f.hand_id}:deal` }];
  log = [...log, ...fresh].slice(-MAX_LOG);
  return { ...state, frame: f, selection, picked, notice, result, log, fresh };
}

function resultArrived(state, f) {
  if (f.table_id !== state.tableId) return state;
  const seat = f.players.indexOf(state.me);
  const name = (s) => state.names[f.players[s]] || `Seat ${s + 1}`;
  const entries = describeResult(f, name, seat < 0 ? null : seat)
    .map((e, i) => ({ ...e, key: `${f.hand_id}:result:${i}`, mine: e.seat === seat }));
  const known = new Set(state.log.map((e) => e.key));
  const fresh = entries.filter((e) => !known.has(e.key));
  return { ...state, result: f, log: [...state.log, ...fresh].slice(-MAX_LOG), fresh };
}

export function reduce(state, action) {
  switch (action.type) {
    // socket frames
    case "subscribed":
    case "table":
      return action.table.table_id === state.tableId ? tableChanged(state, action.table) : state;
    case "view":
      return viewArrived(state, action.frame);
    case "result":
      return resultArrived(state, action.frame);
    case "chat": {
      if (action.frame.table_id !== state.tableId) return state;
      return { ...state, chat: [...state.chat, action.frame].slice(-MAX_CHAT) };
    }
    case "error": {
      const f = action.frame;
      // Answers to our own requests (with a ref) are reported where they were made.
      const quiet = ["token_expired", "invalid_token", "not_subscribed"];
      if ((f.ref !== undefined && f.ref !== null) || quiet.includes(f.code)) return state;
      return { ...state, error: f };
    }
    case "status":
      return { ...state, socket: action.status };
    case "load-error":
      return { ...state, loadError: action.error };
    // user intents
    case "busy":
      return { ...state, busy: action.busy };
    case "acted":
      return { ...state, selection: [], picked: -1, notice: null };
    case "toggle": {
      const sel = [...state.selection];
      const i = sel.indexOf(action.item);
      if (i >= 0) sel.splice(i, 1);
      else sel.push(action.item);
      return { ...state, selection: sel };
    }
    case "select":
      return { ...state, selection: [...action.items], picked: action.picked ?? -1 };
    case "sort":
      return { ...state, sort: action.sort };
    case "dismiss-notice":
      return { ...state, notice: null };
    case "close-result":
      return { ...state, result: null };
    default:
      return state;
  }
}

// --- what changed, for the page's side effects ---------------------------------------

const CLAIMS = ["claim", "fight"];

/** The sounds a change calls for: "turn" (it became your move), "claim" (you may claim
 * a discard or fight a Draw call), "win" (you won the hand). */
export function cues(prev, next) {
  const out = [];
  const seat = next.frame?.seat;
  if (next.frame && next.frame !== prev.frame && seat !== null && seat !== undefined && inHand(next)) {
    const before = prev.frame && prev.frame.hand_id === next.frame.hand_id ? legalOf(prev.frame) : [];
    const now = legalOf(next.frame);
    const claimNow = now.some((a) => CLAIMS.includes(a.type));
    const claimBefore = before.some((a) => CLAIMS.includes(a.type));
    const moveNow = now.some((a) => !CLAIMS.includes(a.type) && a.type !== "pass" && a.type !== "back");
    const moveBefore = before.some((a) => !CLAIMS.includes(a.type) && a.type !== "pass" && a.type !== "back");
    if (claimNow && !claimBefore) out.push("claim");
    else if (moveNow && !moveBefore) out.push("turn");
  }
  if (next.result && next.result !== prev.result) {
    const me = next.result.players.indexOf(next.me);
    const r = next.result.result || {};
    const winners = Array.isArray(r.winners) ? r.winners : r.winner !== null && r.winner !== undefined ? [r.winner] : [];
    if (me >= 0 && winners.includes(me)) out.push("win");
  }
  return out;
}

// --- the store -----------------------------------------------------------------------

export function createStore(initial) {
  let state = initial;
  const listeners = new Set();
  const tableHooks = new Set();
  return {
    get state() { return state; },
    dispatch(action) {
      const prev = state;
      state = reduce(prev, action);
      if (state === prev) return;
      if (state.table !== prev.table) {
        // Every table change (a `table` frame, `subscribed`, a REST answer) passes here,
        // with the previous and the next table: notices about the table hook in here.
        for (const fn of tableHooks) fn(prev.table, state.table, state);
      }
      for (const fn of listeners) fn(state, prev, action);
    },
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    /** `fn(prevTable, nextTable, state)` on every table change (prevTable null at first). */
    onTable(fn) {
      tableHooks.add(fn);
      return () => tableHooks.delete(fn);
    },
  };
}
