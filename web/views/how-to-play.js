// How to play and the house rules, in short (the full rules are in the docs), with
// every ruleset's payout table (generated from the engines: rules-data.js).

import { h, mount } from "../dom.js";
import { cardView } from "../cards.js";
import { tileView } from "../tiles.js";
import { holds, payoutSection } from "./rules-payouts.js";

export function render(root) {
  mount(root, h("article.panel.how", { "aria-labelledby": "how-title" },
    h("h1#how-title", {}, "How to play"),
    h("p", {}, "KaLaro plays for fun credits only. Credits have no cash value."),
    h("h2", {}, "Getting started"),
    h("ul", {},
      h("li", {}, "Sign in. New players get a welcome grant of credits."),
      h("li", {}, "Pick a table (filter Tongits, Mahjong or Ka Wu Xing) and sit down. A private table asks for its invite code; you can also just watch."),
      h("li", {}, `To sit you must have the most you could lose in one hand available (it is held for the hand): ${holds("tongits")} the bet at Tongits, ${holds("mahjong")} at Mahjong, ${holds("kawuxing")} at Ka Wu Xing. Ask an admin for credits in your Wallet.`),
      h("li", {}, "Tap I am ready. When every seat is filled and everyone is ready, the host deals."),
      h("li", {}, "After each hand the result shows who won and what moved. Tap Ready for the next hand, or leave.")),
    h("h2", {}, "Tongits (3 players)"),
    h("p.sample", { "aria-hidden": "true" }, ["3H", "4H", "5H"].map((c) => cardView(c, { small: true })), " ", ["7S", "7D", "7C"].map((c) => cardView(c, { small: true }))),
    h("ul", {},
      h("li", {}, "Your turn: Draw from the stock — or select 2+ cards that meld with the top discard and tap it. Then meld, lay off (select cards, tap a meld), and discard one card."),
      h("li", {}, "A set is 3–4 cards of one rank; a run is 3+ in a row of one suit. Aces are low."),
      h("li", {}, "Empty your hand: Tongits! At the start of your turn, if you have a meld down, you may Call Draw; the others Fight or Fold."),
      h("li", {}, "Deadwood: A 1, 2–9 face value, 10-J-Q-K 10."),
      h("li", {}, "Classic: a four-card set may be exposed face down (a secret set); Table B pays extra for it and for each ace.")),
    h("h3", {}, "Tongits payouts"),
    payoutSection("tongits"),
    h("h2", {}, "Filipino Mahjong (4 players, 16 tiles)"),
    h("p.sample", { "aria-hidden": "true" }, ["1m", "2m", "3m", "5p", "5p", "5p", "7s", "1z", "5z", "6z", "7z", "2f"].map((t) => tileView(t, { small: true }))),
    h("ul", {},
      h("li", {}, "Tap Draw, then a tile and Discard. Declare a Kang with four alike. A complete hand is 5 sets and a pair: tap Mahjong!"),
      h("li", {}, "When someone discards, you are told privately if you can claim it: Mahjong, Kang, Pong, or Chow (next player only). Answer before the timer runs out, or pass."),
      h("li", {}, "Flowers (花) are set aside automatically and replaced."),
      h("li", {}, "Joker and Pinoy: a revealed tile makes the other three of its kind jokers. A hand waiting with an unpaired joker (Joker Eye) wins only by drawing: no discard can win it, though you may still Pong, Chow or Kang.")),
    h("h3", {}, "Mahjong payouts"),
    payoutSection("mahjong"),
    h("h2#how-kawuxing", {}, "Ka Wu Xing (3 players)"),
    h("p.sample", { "aria-hidden": "true" }, ["4s", "5s", "6s", "1p", "1p", "1p", "5z", "6z", "7z"].map((t) => tileView(t, { small: true }))),
    h("ul", {},
      h("li", {}, "84 tiles: bamboo and dots 1–9 and the three dragons. 13 tiles each; the host draws first. Pong and Kong, no Chow."),
      h("li", {}, "Win with 4 sets and a pair, or seven pairs. Two players may win on the same discard."),
      h("li", {}, "Score items multiply (table below), capped at ×8. A hand with no item (a chicken hand) wins only by self-draw; the app marks such waits \"self-draw only\"."),
      h("li", {}, "Ka Wu Xing itself: win on the closed 5, a 4 and a 6 waiting for the 5 of their suit (×2)."),
      h("li", {}, "Win on Kong and Fire on Kong (×2) come only after a visible kong: claimed from a discard, or added to your pong. A concealed kong earns neither."),
      h("li", {}, "Show Hand: when your discard leaves you waiting, you may show your hand. It is locked from then on, and your win and your loss are doubled."),
      h("li", {}, "Kongs score on their own, whoever wins, even in a drawn hand: exposed 2 from the discarder, concealed 2 from each, extended 1 from each.")),
    h("h3", {}, "Ka Wu Xing payouts"),
    payoutSection("kawuxing"),
    h("h2", {}, "House rules"),
    h("ul", {},
      h("li", {}, "A host picks a ruleset when creating a table and may change single options in the House rules form; the table's rules are shown in the lobby and at the table."),
      h("li", {}, "The server enforces every rule; a greyed-out button means the move is not legal right now."),
      h("li", {}, "Nobody sees your cards or tiles during a hand; every hand is revealed at the end, with the seed that proves the shuffle."),
      h("li", {}, "Be kind in chat. The host can turn chat off.")),
    h("p", {}, h("a.button", { href: "#/" }, "Back to the tables"))));
}
