// The page a verification link opens (#/verify?token=…). It says what confirming does
// and has one button, which POSTs the token: opening the page changes nothing, so a
// mail scanner that fetches the link first cannot spend it. Every outcome (done,
// expired, already used, not valid) gets a page with the next step.

import * as api from "../api.js";
import { credits, h, mount } from "../dom.js";

// Every sentence this page shows, in one place (for translation).
const TEXT = {
  title: "Confirm your email address",
  what: "Press the button to confirm that this email address is yours. That activates your KaLaro account",
  grant: (n) => `, and your welcome grant of ${n} fun credits is paid`,
  notYou: "If you did not create a KaLaro account, close this page: nothing happens unless you press the button.",
  confirm: "Confirm my email",
  working: "Confirming…",
  doneTitle: "Your email is confirmed",
  done: (email) => `${email} is confirmed.`,
  doneGrant: (n) => ` Your welcome grant of ${n} fun credits is on its way to your wallet.`,
  toTables: "Go to the tables",
  signIn: "Sign in",
  expiredTitle: "This link has expired",
  expired: "Links work for a limited time. We can send a new one to the same address.",
  resend: "Send me a new link",
  sending: "Sending…",
  sent: "We sent a new link. Check your mail, and your spam folder too.",
  alreadyTitle: "Your email is already confirmed",
  already: "There is nothing more to do here: sign in to play.",
  usedTitle: "This link was already used",
  used: "Each link works once. If you confirmed your email with it, you are all set: sign in. If not, sign in and ask for a new link in the lobby.",
  invalidTitle: "This link is not valid",
  invalid: "Open the whole link from the email again (some mail apps cut long links), or sign in and ask for a new one in the lobby.",
  missing: "This page needs the link from your email. Open it from the email again.",
  failed: "Something went wrong. Please try again.",
};

export function render(root, app) {
  const token = app.params.token || "";
  const section = h("section.auth.link-page#verify-page", { "aria-labelledby": "verify-title" });
  mount(root, section);

  // One heading per state; focus moves to it so a screen reader reads the new state.
  function show(title, ...body) {
    const heading = h("h1#verify-title", { tabindex: "-1" }, title);
    mount(section, heading, ...body);
    heading.focus();
  }

  const signInLink = () => h("a.button.primary.wide#verify-sign-in", { href: "#/sign-in" }, TEXT.signIn);
  const errorLine = () => h("p.form-error#verify-error", { role: "alert", hidden: true });

  function start() {
    if (!token) {
      show(TEXT.invalidTitle, h("p", {}, TEXT.missing), signInLink());
      return;
    }
    const grant = app.config.welcome_grant ? TEXT.grant(credits(app.config.welcome_grant)) : "";
    const error = errorLine();
    const button = h("button.primary.wide#verify-confirm", { type: "button" }, TEXT.confirm);
    button.addEventListener("click", async () => {
      button.disabled = true;
      button.textContent = TEXT.working;
      error.hidden = true;
      try {
        done(await api.verifyEmail(token));
      } catch (err) {
        if (!refused(err)) {
          error.textContent = err.message || TEXT.failed;
          error.hidden = false;
          button.disabled = false;
          button.textContent = TEXT.confirm;
        }
      }
    });
    show(TEXT.title, h("p", {}, `${TEXT.what}${grant}.`), h("p.muted", {}, TEXT.notYou), error, button);
  }

  async function done(result) {
    const grant = app.config.welcome_grant ? TEXT.doneGrant(credits(app.config.welcome_grant)) : "";
    // A session in this tab gets a new token, which now says the email is confirmed.
    let signedIn = Boolean(api.currentSession());
    if (signedIn) {
      try {
        await api.refresh();
      } catch {
        signedIn = Boolean(api.currentSession());
      }
    }
    const next = signedIn
      ? h("a.button.primary.wide#verify-next", { href: "#/" }, TEXT.toTables)
      : signInLink();
    show(TEXT.doneTitle, h("p", {}, TEXT.done(result.email), grant), next);
  }

  /** The pages for a refused link; false when the error was not about the link. */
  function refused(err) {
    if (err.code === "token_expired") expired();
    else if (err.code === "link_used") show(TEXT.usedTitle, h("p", {}, TEXT.used), signInLink());
    else if (err.code === "invalid_token") show(TEXT.invalidTitle, h("p", {}, TEXT.invalid), signInLink());
    else return false;
    return true;
  }

  function expired() {
    const error = errorLine();
    const status = h("p#verify-status", { role: "status" });
    const button = h("button.primary.wide#verify-resend", { type: "button" }, TEXT.resend);
    button.addEventListener("click", async () => {
      button.disabled = true;
      button.textContent = TEXT.sending;
      error.hidden = true;
      try {
        const answer = await api.resendVerification(token);
        if (answer.status === "already_verified") {
          show(TEXT.alreadyTitle, h("p", {}, TEXT.already), signInLink());
          return;
        }
        button.remove();
        status.textContent = TEXT.sent;
      } catch (err) {
        if (!refused(err)) {
          error.textContent = err.message || TEXT.failed;
          error.hidden = false;
          button.disabled = false;
          button.textContent = TEXT.resend;
        }
      }
    });
    show(TEXT.expiredTitle, h("p", {}, TEXT.expired), status, error, button);
  }

  start();
}
