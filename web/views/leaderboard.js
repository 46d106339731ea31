// The leaderboard (#/leaderboard): a game's top 100 ranked players this week or of all
// time (GET /api/leaderboard?game=&period=), with rank, name, rating, tier and rated
// hands, and the viewer's own place (their row, wherever it is, or "not on it yet").
//
// One store: `state` changes only through `reduce`; `view(state)` draws the board.

import * as api from "../api.js";
import { credits, h, mount } from "../dom.js";
import { GAMES } from "./history.js";
import { profileHref } from "./profile.js";

const PERIODS = [["week", "This week"], ["all", "All time"]];

export const initialState = (game = "tongits", period = "all") => ({ game, period, board: null, loading: true, error: "" });

export function reduce(state, action) {
  switch (action.type) {
    case "choose":
      return { ...state, ...action.patch, loading: true, error: "" };
    case "loaded":
      // An answer for an older choice (the player clicked on) is dropped.
      if (action.game !== state.game || action.period !== state.period) return state;
      return { ...state, board: action.board, loading: false, error: "" };
    case "failed":
      return { ...state, loading: false, error: action.message };
    default:
      return state;
  }
}

function row(r, me) {
  const mine = me && r.user_id === me.user_id;
  return h(`tr${mine ? ".me" : ""}`, { dataset: { userId: r.user_id, rank: String(r.rank) }, "aria-current": mine ? "true" : null },
    h("td.num", {}, String(r.rank)),
    h("th", { scope: "row" }, h("a.player-link", { href: profileHref(r.user_id, r.display_name) }, r.display_name),
      mine ? h("span.you", {}, " (you)") : null),
    h("td.num", {}, credits(r.rating)),
    h("td", {}, r.tier),
    h("td.num", {}, credits(r.hands)));
}

/** The board as the state says. */
export function view(state) {
  if (state.error) return h("p.panel#leaderboard-error", { role: "alert" }, `Could not load the leaderboard: ${state.error}`);
  const board = state.board;
  if (!board) return h("p.muted", {}, "Loading…");
  const top = board.top || [];
  const me = board.me || null;
  const name = GAMES[state.game] || state.game;
  const place = me
    ? h("p.panel.my-place#my-place", {}, `Your place: ${credits(me.rank)} of the ${name} players ${state.period === "week" ? "rated this week" : "rated"}, at ${credits(me.rating)} (${me.tier}).`)
    : h("p.panel.my-place#my-place", {}, `You are not on this board yet: play ranked ${name} hands to get a place.`);
  if (!top.length) return h("div", {}, place, h("p.panel#leaderboard-empty", {}, "Nobody is on this board yet."));
  const outside = me && !top.some((r) => r.user_id === me.user_id);
  return h("div", {},
    place,
    h("div.panel.board-panel", {}, h("div.table-scroll", { tabindex: "0", role: "group", "aria-labelledby": "leaderboard-caption" },
      h("table.history.leaderboard#leaderboard", {},
        h("caption#leaderboard-caption.sr-only", {}, `${name} leaderboard, ${state.period === "week" ? "this week" : "all time"}: the top ${top.length}`),
        h("thead", {}, h("tr", {},
          h("th.num", { scope: "col" }, "Rank"),
          h("th", { scope: "col" }, "Player"),
          h("th.num", { scope: "col" }, "Rating"),
          h("th", { scope: "col" }, "Tier"),
          h("th.num", { scope: "col" }, "Hands"))),
        h("tbody", {}, top.map((r) => row(r, me))),
        outside ? h("tbody.my-row", {}, row(me, me)) : null))));
}

export function render(root) {
  let state = initialState(sessionStorage.getItem("kalaro.board-game") || "tongits");
  const body = h("div#leaderboard-body", { "aria-live": "polite", "aria-busy": "true" });

  const radios = (name, label, options, key) => h("div.filters", { role: "radiogroup", "aria-label": label },
    options.map(([value, text]) => h("label.pill", {},
      h("input", {
        type: "radio", name, value, checked: state[key] === value,
        onchange: () => choose({ [key]: value }),
      }),
      h("span", {}, text))));

  function draw() {
    body.setAttribute("aria-busy", String(state.loading));
    mount(body, view(state));
  }

  async function load() {
    const { game, period } = state;
    try {
      const board = await api.leaderboard(game, period);
      state = reduce(state, { type: "loaded", game, period, board });
    } catch (err) {
      state = reduce(state, { type: "failed", message: err.message }); // said in the page
    }
    draw();
  }

  function choose(patch) {
    state = reduce(state, { type: "choose", patch });
    if (patch.game) sessionStorage.setItem("kalaro.board-game", patch.game);
    draw();
    load();
  }

  mount(root,
    h("section.leaderboard-page", { "aria-labelledby": "leaderboard-title" },
      h("div.section-head", {},
        h("h1#leaderboard-title", {}, "Leaderboard"),
        radios("board-game", "Game", Object.entries(GAMES).map(([v, t]) => [v, t.replaceAll(" ", "\u00a0")]), "game"),
        radios("board-period", "Period", PERIODS, "period")),
      h("p.muted", {}, "Ranked hands only. Your rating is a careful estimate: it starts at 1000 and settles as you play."),
      body));
  draw();
  load();
  return null;
}
