// The turn clock on the table page ("no table waits forever").
//
// The server runs every timer: a view carries `clock` ({kind, seats, seconds} or null),
// `away` (per seat) and the frame's `deadline_ms` (epoch ms when the running timer
// fires). This module only shows them: countdowns that count down to the server's
// deadline (only their text is updated, on the second), the away / reconnecting /
// offline markers of a seat, and what to tell a player whose move the server made.

import { h } from "./table-dom.js";


export function secondsLeft(deadline, now = Date.now()) {
  return Math.max(0, Math.ceil((Number(deadline) - now) / 1000));
}

/** A countdown to `deadline` (epoch ms): "12s", kept current by `startTicker`. */
export function countdown(deadline, { id, big = false, title = "Seconds left" } = {}) {
  const left = secondsLeft(deadline);
  return h(`span.countdown${big ? ".big" : ""}${left <= 5 ? ".urgent" : ""}`, {
    id,
    role: "timer",
    title,
    dataset: { deadline: String(deadline) },
  }, `${left}s`);
}

/** Updates the text of every countdown under `root` when its second changes (and
 * nothing else: the table is never redrawn for the clock). Returns a stop function. */
export function startTicker(root) {
  let timer = 0;
  const run = () => {
    const now = Date.now();
    let next = 1000;
    for (const el of root.querySelectorAll("[data-deadline]")) {
      const ms = Number(el.dataset.deadline) - now;
      const left = Math.max(0, Math.ceil(ms / 1000));
      const text = `${left}s`;
      if (el.textContent !== text) el.textContent = text;
      el.classList.toggle("urgent", left <= 5);
      if (ms > 0) next = Math.min(next, ms % 1000 || 1000); // wake when the second turns
    }
    timer = setTimeout(run, next + 20);
  };
  run();
  return () => clearTimeout(timer);
}

/** The seats the running clock waits on (with a deadline), as a Set. */
export function clockSeats(frame) {
  const clock = frame?.view?.clock;
  if (!clock || !frame.deadline_ms) return new Set();
  return new Set(clock.seats || []);
}

/** Away / reconnecting / offline chips for seat `i` (bots and connected players: none). */
export function seatMarkers(table, view, i) {
  const s = table?.seats?.[i];
  const out = [];
  if (view?.away?.[i]) {
    out.push(h("span.chip.away", { title: "Marked away: the server plays their turns", dataset: { marker: "away" } }, "Away"));
  }
  if (s && !s.is_bot && (s.presence === "reconnecting" || s.presence === "offline")) {
    out.push(h(`span.chip.presence.${s.presence}`, {
      title: s.presence === "offline" ? "Not connected" : "Lost the connection: reconnecting",
      dataset: { marker: s.presence },
    }, s.presence === "offline" ? "Offline" : "Reconnecting…"));
  }
  return out;
}

/** What the server did for `seat` when its time ran out, from the frame's events (the
 * `timed_out` event is followed by the auto-played moves'); `kind` is the clock that
 * was running before (a fallback). Null when the frame has no time-out of `seat`. */
export function autoPlayText(events, seat, kind) {
  const at = (events || []).findIndex((e) => e.type === "timed_out" && e.seat === seat);
  if (at < 0) return null;
  const after = events.slice(at + 1).filter((e) => e.seat === seat || e.seat === undefined);
  const has = (...types) => after.some((e) => types.includes(e.type) && e.seat === seat);
  let what;
  if (has("folded")) what = "we folded for you";
  else if (has("hand_won")) what = "we took your win for you";
  else if (has("card_discarded", "tile_discarded")) what = has("card_drawn", "tile_drawn") ? "we drew and discarded for you" : "we discarded for you";
  else if (kind === "fight_or_fold") what = "we folded for you";
  else if (kind === "turn") what = "we drew and discarded for you";
  else what = "we passed for you";
  return `Time ran out: ${what}.`;
}

/** Your own clock, the auto-play notice and the away banner, for your action area. */
export function turnStatus({ frame, seat, notice, busy, back, dismiss }) {
  if (seat === null || seat === undefined || !frame) return null;
  const view = frame.view;
  const away = Boolean(view.away?.[seat]);
  // Fight/Fold and a call window have their own prompt, with its countdown.
  const mine = !away && view.clock?.kind === "turn" && clockSeats(frame).has(seat);
  const parts = [];
  if (away) {
    parts.push(h("div.away-banner#away-banner", { role: "status" },
      h("p", {}, h("strong", {}, "You are marked away"), " — your turns are played for you."),
      h("button.primary#im-back", { type: "button", disabled: busy, dataset: { action: "back" }, onclick: back }, "I'm back")));
  }
  if (notice) {
    parts.push(h("div.autoplay-notice#autoplay-notice", { role: "status" },
      h("span", {}, notice),
      h("button.ghost.small#dismiss-notice", { type: "button", "aria-label": "OK, dismiss this notice", onclick: dismiss }, "OK")));
  }
  if (mine) {
    parts.push(h("div.my-clock#my-clock", { dataset: { kind: view.clock.kind } },
      h("span.my-clock-label", {}, "Your turn"),
      countdown(frame.deadline_ms, { id: "my-countdown", big: true })));
  }
  return parts.length ? h("div.turn-status#turn-status", {}, parts) : null;
}

/** "Turn clock 30 s" (or "No turn clock") from a table's options. */
export function clockFact(table) {
  const o = table?.options || {};
  if (!("turn_seconds" in o)) return null;
  return h("span.fact.clock-fact", { title: "Seconds per turn; when time runs out the server plays for you" },
    o.turn_seconds ? `Turn clock ${o.turn_seconds} s` : "No turn clock");
}
