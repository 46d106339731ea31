// A player's ranked ratings on their profile (GET /api/ratings/<id>): per game the
// rating (a careful estimate), its uncertainty, the tier, rated hands and the last
// change, signed. Drawn from the answer alone (`view(ratings, mine)`).

import * as api from "../api.js";
import { credits, h, mount, signed } from "../dom.js";
import { GAMES } from "./history.js";

// The rating shown is 1000 + 40 × (skill − 3 × uncertainty): one unit of the rating
// model's sigma is 40 rating points (see services/ranked/ratings.py).
const POINTS_PER_SIGMA = 40;

export function view(ratings, mine) {
  const games = (ratings?.games || []).filter((g) => g.hands > 0 || mine);
  if (!games.length) {
    return h("p.muted#ratings-empty", {}, mine
      ? "No ranked hands yet. Use Quick play (ranked) in the lobby: every player starts at 1000."
      : "No ranked hands yet.");
  }
  return h("div.table-scroll", { tabindex: "0", role: "group", "aria-labelledby": "ratings-caption" },
    h("table.history.ratings#profile-ratings", {},
      h("caption#ratings-caption.sr-only", {}, "Ranked rating per game"),
      h("thead", {}, h("tr", {},
        h("th", { scope: "col" }, "Game"),
        h("th.num", { scope: "col" }, "Rating (tier)"),
        // "±" on screen (a phone has no room for the word), the word for screen readers.
        h("th.num", { scope: "col", title: "Uncertainty: how sure the rating is (smaller is surer)" },
          h("span", { "aria-hidden": "true" }, "±"), h("span.sr-only", {}, "Uncertainty")),
        h("th.num", { scope: "col" }, "Hands"),
        h("th.num", { scope: "col", title: "What the last ranked hand changed" }, "Change"))),
      h("tbody", {}, games.map((g) => h("tr", { dataset: { game: g.game } },
        h("th", { scope: "row" }, GAMES[g.game] || g.game),
        // The tier under the number: five columns fit a phone, six did not.
        h("td.num.rating", {}, h("span.value", {}, credits(g.rating)), h("span.tier", {}, ` ${g.tier}`)),
        h("td.num", {}, `±${credits(Math.round(POINTS_PER_SIGMA * (g.sigma ?? 0)))}`),
        h("td.num", {}, credits(g.hands)),
        h(`td.num.amount.last-change${g.last_change > 0 ? ".plus" : g.last_change < 0 ? ".minus" : ""}`, {},
          g.hands ? signed(g.last_change) : "—"))))));
}

/** The ratings panel: loads, then draws; a service not there yet says so quietly. */
export function ratingsPanel(userId, mine) {
  const body = h("div#ratings-body", { "aria-busy": "true" }, h("p.muted", {}, "Loading…"));
  const panel = h("section.panel.stats-panel.ratings-panel#ratings", { "aria-labelledby": "ratings-title" },
    h("h2#ratings-title", {}, "Ranked ratings"), body);
  api.ratings(userId).then(
    (ratings) => mount(body, view(ratings, mine)),
    (err) => mount(body, h("p.muted", { role: "status" }, `Ratings are not available right now (${err.message}).`)),
  ).finally(() => body.removeAttribute("aria-busy"));
  return panel;
}
