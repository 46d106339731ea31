// The move log: one line per thing that happened at the table, from the `events` list
// each view frame carries (already redacted for this seat by the server) and the result
// frame. Pure: (events, names, seat) -> entries; the store keeps the newest ones.

import { parseCard } from "../cards.js";
import { tileLabel } from "../tiles.js";

const MELD_KIND = { pong: "a pong", chow: "a chow", kang: "a kang", kong: "a kong", set: "a set", run: "a run" };

function card(c) {
  const { rank, symbol } = parseCard(c);
  return `${rank}${symbol}`;
}

const cards = (list) => (list || []).map(card).join(" ");
const tiles = (list) => (list || []).map(tileLabel).join(", ");

/** One entry per event worth telling ({kind, seat, text}); private and window-keeping
 * events (claim offers, the call window opening) are left out. */
export function describe(event, name, me) {
  const who = (s) => (s === me ? "You" : name(s));
  const s = event.seat;
  switch (event.type) {
    // Tongits
    case "card_drawn":
      return { kind: "draw", seat: s, text: event.card ? `${who(s)} drew ${card(event.card)} from the stock` : `${who(s)} drew from the stock` };
    case "discard_taken":
      return { kind: "claim", seat: s, text: `${who(s)} took the ${card(event.card)} discard with ${cards(event.cards)}` };
    case "meld_exposed":
      return { kind: "meld", seat: s, text: `${who(s)} melded ${MELD_KIND[event.kind] || event.kind}: ${cards(event.cards)}` };
    case "secret_set_exposed":
      return { kind: "meld", seat: s, text: `${who(s)} laid down a secret set${event.cards?.length ? `: ${cards(event.cards)}` : " (face down)"}` };
    case "cards_laid_off":
      return { kind: "meld", seat: s, text: `${who(s)} laid off ${cards(event.cards)} on ${event.owner === s ? "their own" : `${who(event.owner)}'s`} meld` };
    case "card_discarded":
      return { kind: "discard", seat: s, text: `${who(s)} discarded ${card(event.card)}` };
    case "draw_called":
      return { kind: "claim", seat: s, text: `${who(s)} called Draw!` };
    case "fought":
      return { kind: "claim", seat: s, text: `${who(s)} fights` };
    case "folded":
      return { kind: "other", seat: s, text: `${who(s)} folded${event.timed_out ? " (time ran out)" : ""}` };
    case "hand_ended":
      return null; // the result frame tells who won
    // Mahjong and Ka Wu Xing
    case "tile_drawn":
      return { kind: "draw", seat: s, text: `${who(s)} drew${event.replacement ? " a replacement" : ""}${event.tile ? ` ${tileLabel(event.tile)}` : ""}` };
    case "flower_replaced":
      return { kind: "meld", seat: s, text: `${who(s)} set aside ${tileLabel(event.flower)}` };
    case "tile_discarded":
      return { kind: "discard", seat: s, tile: event.tile, text: `${who(s)} discarded ${tileLabel(event.tile)}` };
    case "tile_claimed":
      return { kind: "claim", seat: s, text: `${who(s)} claimed ${event.discarder === me ? "your" : `${name(event.discarder)}'s`} discard for ${MELD_KIND[event.meld?.kind] || event.meld?.kind}${event.meld?.tiles?.length ? `: ${tiles(event.meld.tiles)}` : ""}` };
    case "kang_declared":
      return { kind: "meld", seat: s, text: `${who(s)} declared ${event.added ? "an added" : "a concealed"} kang${event.meld?.tiles?.length ? ` of ${tileLabel(event.meld.tiles[0])}` : ""}` };
    case "kong_declared":
      return { kind: "meld", seat: s, text: `${who(s)} declared a kong${event.tile ? ` of ${tileLabel(event.tile)}` : ""}` };
    case "hand_shown":
      return { kind: "meld", seat: s, text: `${who(s)} showed their hand, waiting on ${tiles(event.waits)}` };
    case "hand_won":
      return { kind: "win", seat: s, text: `${who(s)} won${event.self_draw ? " by self-draw" : event.discarder !== null && event.discarder !== undefined ? ` on ${who(event.discarder)}'s discard` : ""}${event.tile ? ` (${tileLabel(event.tile)})` : ""}!` };
    case "wall_exhausted":
      return { kind: "other", seat: null, text: "The wall is empty: nobody wins this hand" };
    case "calls_passed":
      return null;
    // Every game
    case "timed_out":
      return { kind: "other", seat: s, text: `${who(s)} ran out of time${event.away ? " and is marked away" : ""}` };
    case "returned":
      return { kind: "other", seat: s, text: `${who(s)} ${s === me ? "are" : "is"} back` };
    default:
      return null;
  }
}

/** The log lines of a result frame: who won (or that nobody did). */
export function describeResult(frame, name, me) {
  const r = frame.result || {};
  const who = (s) => (s === me ? "You" : name(s));
  let winners = [];
  if (Array.isArray(r.winners)) winners = r.winners;
  else if (r.winner !== null && r.winner !== undefined) winners = [r.winner];
  if (!winners.length) return [{ kind: "win", seat: null, text: "Hand over: nobody won" }];
  const how = r.ending ? ` (${String(r.ending).replace(/_/g, " ")})` : "";
  return winners.map((s) => ({ kind: "win", seat: s, text: `${who(s)} won the hand${how}` }));
}
