// Sign in / create an account: email + password, and Google when it is configured.

import * as api from "../api.js";
import { field, h, mount, toast } from "../dom.js";

const GOOGLE_SCRIPT = "https://accounts.google.com/gsi/client";

const MESSAGES = {
  invalid_credentials: "That email and password do not match an account.",
  weak_password: null, // the server's message says what is missing
  throttled: "Too many attempts. Please wait a few minutes and try again.",
};

function explain(err) {
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
  const submit = h("button.primary.wide#auth-submit", { type: "submit" }, "Sign in");
  const tabIn = h("button#tab-sign-in", { type: "button", role: "tab" }, "Sign in");
  const tabUp = h("button#tab-sign-up", { type: "button", role: "tab" }, "Create account");
  const form = h("form.auth-form", { novalidate: true }, field("Email", email), field("Password", password), nameField, error, submit);

  function setMode(next) {
    mode = next;
    const up = mode === "sign-up";
    tabIn.setAttribute("aria-selected", String(!up));
    tabUp.setAttribute("aria-selected", String(up));
    nameField.hidden = !up;
    name.required = up;
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
        await api.signIn(email.value.trim(), password.value);
      }
      app.afterSignIn();
    } catch (err) {
      showError(explain(err));
      submit.disabled = false;
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
