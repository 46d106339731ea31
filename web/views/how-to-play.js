// How to play and the house rules, in short (the full rules are in the docs).

import { h, mount } from "../dom.js";
import { cardView } from "../cards.js";
import { tileView } from "../tiles.js";

export function render(root) {
  mount(root, h("article.panel.how", { "aria-labelledby": "how-title" },
    h("h1#how-title", {}, "How to play"),
    h("p", {}, "KaLaro plays for fun credits only. Credits have no cash value."),
    h("h2", {}, "Getting started"),
    h("ul", {},
      h("li", {}, "Sign in. New players get a welcome grant of credits."),
      h("li", {}, "Pick a table (filter Tongits or Mahjong) and sit down. A private table asks for its invite code; you can also just watch."),
      h("li", {}, "To sit you must hold the most you could lose in one hand: 4× the bet at Tongits, 10× at Mahjong. Ask an admin for credits in your Wallet."),
      h("li", {}, "Tap I am ready. When every seat is filled and everyone is ready, the host deals."),
      h("li", {}, "After each hand the result shows who won and what moved. Tap Ready for the next hand, or leave.")),
    h("h2", {}, "Tongits (3 players)"),
    h("p.sample", { "aria-hidden": "true" }, ["3H", "4H", "5H"].map((c) => cardView(c, { small: true })), " ", ["7S", "7D", "7C"].map((c) => cardView(c, { small: true }))),
    h("ul", {},
      h("li", {}, "Your turn: Draw from the stock — or select 2+ cards that meld with the top discard and tap it. Then meld, lay off (select cards, tap a meld), and discard one card."),
      h("li", {}, "A set is 3–4 cards of one rank; a run is 3+ in a row of one suit. Aces are low."),
      h("li", {}, "Empty your hand: Tongits! At the start of your turn, if you have a meld down, you may Call Draw; the others Fight or Fold."),
      h("li", {}, "Deadwood: A 1, 2–9 face value, 10-J-Q-K 10.")),
    h("h2", {}, "Filipino Mahjong (4 players, 16 tiles)"),
    h("p.sample", { "aria-hidden": "true" }, ["1m", "2m", "3m", "5p", "5p", "5p", "7s", "1z", "5z", "6z", "7z", "2f"].map((t) => tileView(t, { small: true }))),
    h("ul", {},
      h("li", {}, "Tap Draw, then a tile and Discard. Declare a Kang with four alike. A complete hand is 5 sets and a pair: tap Mahjong!"),
      h("li", {}, "When someone discards, you are told privately if you can claim it: Mahjong, Kang, Pong, or Chow (next player only). Answer before the timer runs out, or pass."),
      h("li", {}, "Flowers (花) are set aside automatically and replaced.")),
    h("h2", {}, "House rules"),
    h("ul", {},
      h("li", {}, "The server enforces every rule; a greyed-out button means the move is not legal right now."),
      h("li", {}, "Nobody sees your cards or tiles during a hand; every hand is revealed at the end, with the seed that proves the shuffle."),
      h("li", {}, "Be kind in chat. The host can turn chat off.")),
    h("p", {}, h("a.button", { href: "#/" }, "Back to the tables"))));
}
