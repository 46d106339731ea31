// The lobby's notice for an account whose email is not confirmed yet: what that
// holds back (the welcome grant, tables with a bet) and a button for a new link.

import * as api from "../api.js";
import { credits, h } from "../dom.js";

// Every sentence this notice shows, in one place (for translation).
const TEXT = {
  title: "Confirm your email address",
  sent: (email) => `We sent a link to ${email}. Open it and press the button on its page`,
  grant: (n) => ` to get your welcome grant of ${n} fun credits`,
  bets: " and to sit at tables with a bet. Free tables and practice are open now.",
  again: "Send the link again",
  resent: (email) => `We sent a new link to ${email}. Check your spam folder too.`,
  already: "Your email is already confirmed. Reload the page to play.",
  failed: "That did not work. Please try again.",
};

export function verifyBanner(app) {
  const user = api.currentUser();
  const grant = app.config.welcome_grant ? TEXT.grant(credits(app.config.welcome_grant)) : "";
  const status = h("p.small#verify-banner-status", { role: "status" });
  const again = h("button.small#verify-banner-send", { type: "button" }, TEXT.again);
  again.addEventListener("click", async () => {
    again.disabled = true;
    try {
      const answer = await api.myVerificationLink();
      if (answer.status === "already_verified") {
        await api.refresh(); // a token that says so
        status.textContent = TEXT.already;
      } else {
        status.textContent = TEXT.resent(user.email);
      }
    } catch (err) {
      status.textContent = err.message || TEXT.failed;
      again.disabled = false;
    }
  });
  return h("section.banner.verify#verify-banner", { "aria-labelledby": "verify-banner-title" },
    h("span.banner-icon", { "aria-hidden": "true" }, "✉"),
    h("div", {},
      h("h2#verify-banner-title", {}, TEXT.title),
      h("p", {}, TEXT.sent(user.email), grant, TEXT.bets),
      again,
      status,
    ),
  );
}
