// A finished (or voided) hand, step by step, as I saw it during play (GET /api/hands/<game>/<id>/replay:
// my own cards, every seat's public melds and discards, the moves I was told of), then the
// result with every hand revealed. The fairness check runs here in the browser
// (../verify.js) on the hand's record, which can also be saved for `kalaro verify`.

import { call, currentUser } from "../api.js";
import { cardLabel, cardView, sortCards } from "../cards.js";
import { h, mount, signed, toast } from "../dom.js";
import { saveRecord } from "../record.js";
import { tileLabel, tileView } from "../tiles.js";
import { verifyHand } from "../verify.js";
import { GAMES, short } from "./history.js";
import { profileHref } from "./profile.js";
import { renderResult } from "./result.js";

const ALL_GAMES = Object.keys(GAMES);

export async function render(root, app) {
  const { game, handId } = app.params;
  mount(root, h("section.replay-page", {}, h("p.muted", { role: "status" }, "Loading the hand…")));
  let replay = null;
  let found = game;
  // A wallet row knows the hand but not its game: ask each game's records in turn.
  for (const g of ALL_GAMES.includes(game) ? [game] : ALL_GAMES) {
    try {
      replay = await call("GET", `/api/hands/${g}/${encodeURIComponent(handId)}/replay`);
      found = g;
      break;
    } catch (err) {
      if (err.status !== 404) {
        toast(err.message, "error");
        break;
      }
    }
  }
  if (!replay) {
    mount(root, h("section.replay-page.panel", {},
      h("h1", {}, "Hand not found"),
      h("p", {}, "This hand is not one of yours, or there is no such hand."),
      h("a", { href: "#/hands" }, "Back to My hands")));
    return null;
  }
  return show(root, replay, found);
}

function show(root, replay, game) {
  const tiles = game !== "tongits";
  const me = currentUser()?.user_id;
  const names = replay.players.map((p, s) => (s === replay.seat ? "You" : p.display_name || `Seat ${s + 1}`));
  const piece = (x) => (tiles ? tileView(x, { small: true }) : cardView(x, { small: true }));
  const label = (x) => (x ? (tiles ? tileLabel(x) : cardLabel(x)) : "");
  const last = replay.steps.length; // positions 0..last-1 are steps; `last` is the result
  let at = 0;

  const counter = h("span.replay-counter#replay-counter", { "aria-live": "polite" });
  const slider = h("input#replay-slider", { type: "range", min: 0, max: last, value: 0, "aria-label": "Step" });
  const move = h("p.replay-move#replay-move", { "aria-live": "polite" });
  const board = h("div.replay-board#replay-board");
  const buttons = {
    first: h("button.ghost#replay-first", { type: "button", "aria-label": "First step", onclick: () => go(0) }, "«"),
    prev: h("button.ghost#replay-prev", { type: "button", "aria-label": "Previous step", onclick: () => go(at - 1) }, "◀"),
    next: h("button.primary#replay-next", { type: "button", "aria-label": "Next step", onclick: () => go(at + 1) }, "▶"),
    end: h("button.ghost#replay-last", { type: "button", "aria-label": replay.voided ? "The end" : "The result", onclick: () => go(last) }, "»"),
  };
  slider.addEventListener("input", () => go(Number(slider.value)));

  function describe(step) {
    if (step.actor === null || step.actor === undefined) {
      return `The deal: you were dealt ${step.hand.length} ${tiles ? "tiles" : "cards"}. ${names[step.turn]} ${step.turn === replay.seat ? "play" : "plays"} first.`;
    }
    const lines = step.events.map((e) => eventText(e, names, label)).filter(Boolean);
    return lines.length ? lines.join(" ") : `${names[step.actor]} moved.`;
  }

  // A human player's name opens their profile (stats); bots have none.
  function playerName(i) {
    const p = replay.players[i];
    if (!p || p.is_bot) return names[i];
    return h("a.player-link", { href: profileHref(p.user_id, p.display_name), title: `${p.display_name}'s profile` }, names[i]);
  }

  function drawStep(step) {
    const seats = step.seats.map((s, i) => h(`div.replay-seat${i === replay.seat ? ".me" : ""}${i === step.turn ? ".turn" : ""}`, { dataset: { seat: String(i) } },
      h("div.replay-seat-head", {},
        h("strong", {}, playerName(i)),
        h("span.muted.small", {}, ` ${s.hand_size} in hand`),
        replay.dealer === i ? h("span.chip.dealer", { title: "Dealer" }, "D") : null),
      s.melds.length ? h("div.replay-melds", { role: "group", "aria-label": `${names[i]}'s melds` }, s.melds.map((m) => h("span.replay-meld", {}, m.map(piece)))) : null,
      s.flowers.length ? h("div.replay-flowers", { role: "group", "aria-label": `${names[i]}'s flowers` }, s.flowers.map(piece)) : null,
      s.discards.length ? h("div.replay-discards", { role: "group", "aria-label": `${names[i]}'s discards` }, s.discards.map(piece)) : null));
    const hand = tiles ? step.hand : sortCards(step.hand);
    mount(board,
      h("div.replay-centre", {},
        h("span.muted", {}, `${tiles ? "Wall" : "Stock"}: ${step.stock}`),
        step.pile.length ? h("span.replay-pile", { role: "group", "aria-label": "Discard pile, top last" }, " Discards: ", step.pile.slice(-6).map(piece)) : null),
      h("div.replay-seats", {}, seats),
      h("div.replay-hand#replay-hand", { role: "group", "aria-label": "Your hand" }, h("span.muted.small", {}, "Your hand "), hand.map(piece)));
  }

  function drawResult() {
    if (replay.voided) {
      // Cancelled mid-play: no result to show, and no hand was revealed by one.
      mount(board, h("section.panel.result#replay-voided", { role: "status" },
        h("h2", {}, "Voided"),
        h("p", {}, "The table was cancelled before this hand ended: voided, nobody paid.")));
      return;
    }
    const frame = {
      table_id: replay.table_id, hand_id: replay.hand_id, result: replay.result,
      payments: replay.payments, players: replay.players.map((p) => p.user_id),
      seed_commitment: replay.seed_commitment, server_seed: replay.server_seed, entropy: replay.entropy,
    };
    const panel = renderResult(frame, {
      game, me, name: (_id, s) => replay.players[s]?.display_name || `Seat ${s + 1}`, onClose: () => go(last - 1),
    });
    panel.querySelector(".result-actions")?.remove();
    mount(board, panel);
  }

  function go(position) {
    at = Math.max(0, Math.min(last, position));
    slider.value = String(at);
    const end = replay.voided ? "Voided" : "Result";
    counter.textContent = at === last ? `${end} (${last} steps)` : `Step ${at} of ${last - 1}`;
    buttons.first.disabled = buttons.prev.disabled = at === 0;
    buttons.next.disabled = buttons.end.disabled = at === last;
    if (at === last) {
      move.textContent = replay.voided ? "The end: voided, nobody paid." : "The end: every hand revealed.";
      drawResult();
    } else {
      const step = replay.steps[at];
      move.textContent = describe(step);
      drawStep(step);
    }
  }

  const checks = h("ul.verify-checks#verify-checks");
  const verdict = h("p.verify-verdict#verify-verdict", { role: "status" });
  let record = null;
  const fetchRecord = async () => (record ||= await call("GET", `/api/hands/${game}/${encodeURIComponent(replay.hand_id)}`));
  const verifyButton = h("button.primary#verify-hand", {
    type: "button",
    onclick: async () => {
      verifyButton.disabled = true;
      verdict.textContent = "Checking…";
      try {
        const report = verifyHand(await fetchRecord());
        mount(checks, report.checks.map((c) => h(`li.${c.ok ? "ok" : "bad"}`, { dataset: { check: c.name } },
          h("span", { "aria-hidden": "true" }, c.ok ? "✓ " : "✗ "), h("strong", {}, c.name), `: ${c.detail}`)));
        verdict.textContent = report.ok
          ? "Verified: the seed matches its commitment and deals exactly these hands."
          : "FAILED: this record does not check out.";
        verdict.className = `verify-verdict ${report.ok ? "ok" : "bad"}`;
      } catch (err) {
        verdict.textContent = `Could not check: ${err.message}`;
      } finally {
        verifyButton.disabled = false;
      }
    },
  }, "Verify");
  const download = h("button.ghost#download-hand", {
    type: "button",
    onclick: async () => {
      try {
        saveRecord(await fetchRecord());
      } catch (err) {
        toast(err.message, "error");
      }
    },
  }, "Download the record");

  const keys = (e) => {
    // Inputs keep their keys (the slider steps by itself through its input event).
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement) return;
    if (e.key === "ArrowRight") { go(at + 1); e.preventDefault(); }
    if (e.key === "ArrowLeft") { go(at - 1); e.preventDefault(); }
  };
  document.addEventListener("keydown", keys);

  const mine = replay.payments[replay.seat];
  mount(root,
    h("section.replay-page", { "aria-labelledby": "replay-title" },
      h("p", {}, h("a", { href: "#/hands" }, "← My hands")),
      h("h1#replay-title", {}, `${GAMES[game] || game} hand ${short(replay.hand_id)}`),
      h("p.muted", {}, `Table ${short(replay.table_id)} · bet ${replay.bet} · `,
        h(`span.amount${mine > 0 ? ".plus" : mine < 0 ? ".minus" : ""}`, {}, `${signed(mine)} credits for you`)),
      h("div.replay-controls", { role: "group", "aria-label": "Replay controls" },
        buttons.first, buttons.prev, counter, buttons.next, buttons.end),
      slider,
      move,
      board,
      h("section.panel.verify-panel", { "aria-labelledby": "verify-title" },
        h("h2#verify-title", {}, "Fairness"),
        h("p.small", {}, "Check in your browser that the revealed seed matches the commitment published before the deal and deals exactly these hands. Or download the record and run ",
          h("code", {}, `kalaro verify hand-${replay.hand_id}.json`), " to replay every move too."),
        h("div.verify-actions", {}, verifyButton, download),
        verdict,
        checks)));
  go(0);
  return () => document.removeEventListener("keydown", keys);
}

function eventText(e, names, label) {
  const who = names[e.seat] ?? "";
  const you = who === "You";
  const verb = (one, other) => (you ? other : one); // "Ana fights" / "You fight"
  switch (e.type) {
    case "card_drawn": return `${who} drew from the stock${e.card ? ` (${label(e.card)})` : ""}.`;
    case "discard_taken": return `${who} took the ${label(e.card)} from the discards.`;
    case "meld_exposed": return `${who} melded ${e.cards.map(label).join(", ")}.`;
    case "secret_set_exposed": return `${who} showed a secret set.`;
    case "cards_laid_off": return `${who} laid off ${e.cards.map(label).join(", ")} on ${names[e.owner]}'s meld.`;
    case "card_discarded": return `${who} discarded the ${label(e.card)}.`;
    case "draw_called": return `${who} called Draw.`;
    case "fought": return `${who} ${verb("fights", "fight")}.`;
    case "folded": return `${who} ${verb("folds", "fold")}${e.timed_out ? " (out of time)" : ""}.`;
    case "tile_drawn": return `${who} drew ${e.replacement ? "a replacement" : "a tile"}${e.tile ? ` (${label(e.tile)})` : ""}.`;
    case "flower_replaced": return `${who} set aside ${label(e.flower)}.`;
    case "tile_discarded": return `${who} discarded ${label(e.tile)}.`;
    case "claims_offered": return `You could claim ${label(e.tile)}.`;
    case "call_answered": return e.claim ? `You answered: ${e.claim.kind || "claim"}.` : "You passed.";
    case "tile_claimed": return `${who} claimed ${names[e.discarder]}'s discard${e.meld?.kind ? ` for a ${e.meld.kind}` : ""}.`;
    case "kang_declared": return `${who} declared a ${e.secret ? "concealed " : ""}kang.`;
    case "kong_declared": return `${who} declared a kong.`;
    case "kong_offered": return `${who} may kong ${label(e.tile)}.`;
    case "hand_shown": return `${who} showed ${verb("their", "your")} hand.`;
    case "hand_won": return `${who} won${e.self_draw ? " by self-draw" : ""}${e.tile ? ` with ${label(e.tile)}` : ""}!`;
    case "wall_exhausted": return "The wall ran out.";
    case "hand_ended": return "The hand is over.";
    case "timed_out": return `${who} ran out of time${e.away ? ` and ${verb("is", "are")} away` : ""}.`;
    case "returned": return `${who} ${verb("is", "are")} back.`;
    default: return "";
  }
}
