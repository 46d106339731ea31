// A player's profile: their stats per game from GET /api/players/<id>/stats (hands
// played and won, net credits, biggest win), bet hands and practice hands apart.
// Any signed-in player may open anyone's; #/profile is the viewer's own.

import { call, currentUser } from "../api.js";
import { credits, h, mount, signed, toast } from "../dom.js";
import { GAMES } from "./history.js";
import { ratingsPanel } from "./ratings.js";

/** Where a player's profile lives; the name only labels the page (stats carry none). */
export const profileHref = (userId, name = "") =>
  `#/players/${encodeURIComponent(userId)}${name ? `?name=${encodeURIComponent(name)}` : ""}`;

const pct = (won, hands) => (hands ? `${Math.round((100 * won) / hands)}%` : "—");

function table(id, caption, rows, { practice = false } = {}) {
  return h("div.table-scroll", { tabindex: "0", role: "group", "aria-labelledby": `${id}-caption` },
    h(`table.history.player-stats#${id}`, {},
      h(`caption#${id}-caption.sr-only`, {}, caption),
      h("thead", {}, h("tr", {},
        h("th", { scope: "col" }, "Game"),
        h("th.num", { scope: "col" }, "Hands"),
        h("th.num", { scope: "col" }, "Won"),
        practice ? null : h("th.num", { scope: "col", title: "Credits won minus lost" }, "Net"),
        practice ? null : h("th.num", { scope: "col", title: "Biggest win: the most one hand paid" }, "Best win"))),
      h("tbody", {}, rows.map((g) => h("tr", { dataset: { game: g.game } },
        h("th", { scope: "row" }, GAMES[g.game] || g.game),
        h("td.num", {}, credits(g.hands)),
        h("td.num", { title: pct(g.won, g.hands) }, credits(g.won)),
        practice ? null : h(`td.num.amount${g.net > 0 ? ".plus" : g.net < 0 ? ".minus" : ""}`, {}, signed(g.net)),
        practice ? null : h("td.num", {}, credits(g.biggest_win)))))));
}

function totals(games) {
  const sum = (k) => games.reduce((a, g) => a + g[k], 0);
  return { hands: sum("hands"), won: sum("won"), net: sum("net"), best: Math.max(0, ...games.map((g) => g.biggest_win)) };
}

export async function render(root, ctx) {
  const me = currentUser();
  const userId = ctx.params.userId || me?.user_id || "";
  const mine = userId === me?.user_id;
  const name = mine ? me?.display_name || "You" : ctx.params.name || "Player";
  const body = h("div#profile-body", { "aria-busy": "true" }, h("p.muted", {}, "Loading…"));
  mount(root,
    h("section.profile-page", { "aria-labelledby": "profile-title" },
      h("div.section-head", {},
        h("h1#profile-title", {}, mine ? `${name} (you)` : name),
        mine ? h("a.ghost.button-link", { href: "#/hands" }, "My hands") : null),
      h("p.muted", {}, "Stats of every finished hand at a betting table. Practice hands are counted apart."),
      ratingsPanel(userId, mine), // issue 34
      body));
  let stats;
  try {
    stats = await call("GET", `/api/players/${encodeURIComponent(userId)}/stats`);
  } catch (err) {
    body.removeAttribute("aria-busy");
    mount(body, h("p.panel", { role: "alert" }, `Could not load the stats: ${err.message}`));
    toast(err.message, "error");
    return;
  }
  body.removeAttribute("aria-busy");
  if (!stats.games.length && !stats.practice.length) {
    mount(body, h("p.panel#profile-empty", {}, mine ? "No finished hands yet. Play a hand and your stats show up here." : "No finished hands yet."));
    return;
  }
  const t = totals(stats.games);
  mount(body,
    stats.games.length ? h("div.panel.stats-panel", {},
      h("h2", {}, "At betting tables"),
      h("dl.stats-totals#profile-totals", {},
        h("div", {}, h("dt", {}, "Hands"), h("dd", {}, credits(t.hands))),
        h("div", {}, h("dt", {}, "Won"), h("dd", {}, `${credits(t.won)} (${pct(t.won, t.hands)})`)),
        h("div", {}, h("dt", {}, "Net credits"), h(`dd.amount${t.net > 0 ? ".plus" : t.net < 0 ? ".minus" : ""}`, {}, signed(t.net))),
        h("div", {}, h("dt", {}, "Biggest win"), h("dd", {}, credits(t.best)))),
      table("profile-games", "Stats per game at betting tables", stats.games)) : null,
    stats.practice.length ? h("div.panel.stats-panel", {},
      h("h2", {}, "Practice"),
      table("profile-practice", "Practice hands per game", stats.practice, { practice: true })) : null);
}
