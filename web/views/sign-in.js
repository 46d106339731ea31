// Sign in / create an account: email + password, and Google when it is configured.

import * as api from "../api.js";
import { field, h, mount, toast } from "../dom.js";

const GOOGLE_SCRIPT = "https://accounts.google.com/gsi/client";

const MESSAGES = {
  invalid_credentials: "That email and password do not match an account.",
  weak_password: null, // the server's message says what is missing
  code_required: "There have been many wrong passwords for this account, so we emailed you a 6-digit code. Enter it below with your password.",
  code_invalid: "That code is wrong or has expired. Check the latest email from us, or clear the code and sign in again to get a new one.",
};

/** A wait in words: "1 second", "45 seconds", "2 minutes". */
export function waitInWords(seconds) {
  const s = Math.max(1, Math.ceil(seconds));
  if (s < 60) return `${s} second${s === 1 ? "" : "s"}`;
  const m = Math.ceil(s / 60);
  return `${m} minute${m === 1 ? "" : "s"}`;
}

function explain(err) {
  if (err.code === "throttled") {
    const wait = err.retryAfter ? waitInWords(err.retryAfter) : "a few minutes";
    return `Too many attempts. Please wait ${wait} and try again.`;
  }
  return MESSAGES[err.code] || err.message || "Something went wrong. Please try again.";
}

export function render(root, app) {
  let mode = "sign-in";
  const error = h("p.form-error#auth-error", { role: "alert", hidden: true });
  const showError = (text) => {
    error.textContent = text;
    error.hidden = !text;
  };

  const email = h("input#email", { type: "email", name: "email", autocomplete: "email", required: true });
  const password = h("input#password", { type: "password", name: "password", autocomplete: "current-password", required: true, minlength: 1 });
  const name = h("input#display-name", { type: "text", name: "display_name", autocomplete: "nickname", maxlength: 40 });
  const nameField = field("Display name", name, "What other players see at the table.");
  // Shown only after code_required: the one-time code we emailed.
  const code = h("input#sign-in-code", { type: "text", name: "code", inputmode: "numeric", autocomplete: "one-time-code", pattern: "[0-9]{6}", maxlength: 6 });
  const codeField = field("Code from your email", code, "6 digits; it works once, for 10 minutes.");
  codeField.hidden = true;
  let codeAsked = false;
  const submit = h("button.primary.wide#auth-submit", { type: "submit" }, "Sign in");
  const tabIn = h("button#tab-sign-in", { type: "button", role: "tab" }, "Sign in");
  const tabUp = h("button#tab-sign-up", { type: "button", role: "tab" }, "Create account");
  const form = h("form.auth-form", { novalidate: true }, field("Email", email), field("Password", password), nameField, codeField, error, submit);

  function setMode(next) {
    mode = next;
    const up = mode === "sign-up";
    tabIn.setAttribute("aria-selected", String(!up));
    tabUp.setAttribute("aria-selected", String(up));
    nameField.hidden = !up;
    name.required = up;
    codeField.hidden = up || !codeAsked;
    password.autocomplete = up ? "new-password" : "current-password";
    submit.textContent = up ? "Create account" : "Sign in";
    showError("");
  }
  tabIn.addEventListener("click", () => setMode("sign-in"));
  tabUp.addEventListener("click", () => setMode("sign-up"));

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    showError("");
    if (!email.value.trim() || !password.value) {
      showError("Enter your email and password.");
      return;
    }
    if (mode === "sign-up" && !name.value.trim()) {
      showError("Choose a display name.");
      name.focus();
      return;
    }
    submit.disabled = true;
    try {
      if (mode === "sign-up") {
        try {
          await api.signUp(email.value.trim(), password.value, name.value.trim());
        } catch (err) {
          // Sign-up never says whether an address is known; if it was, the mail we just
          // sent tells its owner, and signing in with this password fails like any other.
          if (err.code === "invalid_credentials") {
            throw { message: "We sent an email to that address. If you already have an account, sign in with its password." };
          }
          throw err;
        }
        toast(`We sent a link to ${email.value.trim()} to confirm your email address.`);
        // The welcome grant is credited asynchronously; the dashboard shows it arrive.
        sessionStorage.setItem("kalaro.welcome", "1");
      } else {
        const typed = code.value.replace(/\s+/g, "");
        if (!codeField.hidden && typed && !/^[0-9]{6}$/.test(typed)) {
          throw { message: "The code is the 6 digits in our email." };
        }
        await api.signIn(email.value.trim(), password.value, codeField.hidden ? "" : typed);
      }
      app.afterSignIn();
    } catch (err) {
      showError(explain(err));
      submit.disabled = false;
      if (err.code === "code_required" || err.code === "code_invalid") {
        codeAsked = true;
        codeField.hidden = false;
        code.focus();
      }
    }
  });

  const google = h("div.google#google-sign-in", { hidden: true });
  const googleNote = h("p.or", { hidden: true }, h("span", {}, "or"));
  mountGoogle(app.config.google_client_id, google, googleNote, showError, app);

  const grant = app.config.welcome_grant
    ? h("p.muted", {}, `New players get a welcome grant of ${app.config.welcome_grant.toLocaleString("en-US")} fun credits.`)
    : null;

  mount(
    root,
    h(
      "section.auth",
      { "aria-labelledby": "auth-title" },
      h("div.auth-hero", { "aria-hidden": "true" },
        h("span.hero-card.red", {}, "A♥"), h("span.hero-card", {}, "K♠"), h("span.hero-tile", {}, "中"), h("span.hero-tile.green", {}, "發")),
      h("h1#auth-title", {}, "KaLaro"),
      h("p.tagline", {}, "Tongits and Filipino Mahjong with friends — for fun credits."),
      h("div.tabs", { role: "tablist", "aria-label": "Sign in or create an account" }, tabIn, tabUp),
      form,
      h("p.small", {}, h("a#forgot-password", { href: "#/reset" }, "Forgot your password?")),
      googleNote,
      google,
      grant,
      h("p.muted.small", {}, h("a", { href: "#/how-to-play" }, "How to play and house rules")),
    ),
  );
  setMode("sign-in");
  email.focus();
}

/**
 * Google Identity Services, only when a client id is configured. The script comes from
 * Google; offline (or blocked) it fails to load and the button simply stays hidden.
 */
function mountGoogle(clientId, container, note, showError, app) {
  if (!clientId) return;
  const start = () => {
    const gis = window.google?.accounts?.id;
    if (!gis) return;
    gis.initialize({
      client_id: clientId,
      callback: async ({ credential }) => {
        try {
          await api.googleSignIn(credential);
          app.afterSignIn();
        } catch (err) {
          showError(explain(err));
        }
      },
    });
    container.hidden = false;
    note.hidden = false;
    gis.renderButton(container, { theme: "outline", size: "large", text: "signin_with", width: 280 });
  };
  if (window.google?.accounts?.id) {
    start();
    return;
  }
  let script = document.querySelector(`script[src="${GOOGLE_SCRIPT}"]`);
  if (!script) {
    script = document.createElement("script");
    script.src = GOOGLE_SCRIPT;
    script.async = true;
    script.defer = true;
    document.head.append(script);
  }
  script.addEventListener("load", start, { once: true });
  script.addEventListener("error", () => { container.hidden = true; note.hidden = true; }, { once: true });
}
