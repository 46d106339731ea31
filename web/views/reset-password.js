// Password reset. #/reset asks for the email address and mails a link; the link opens
// #/reset?token=…, whose form POSTs the token with the new password (opening the
// link changes nothing). Every outcome gets a page with the next step.

import * as api from "../api.js";
import { field, h, mount } from "../dom.js";

// Every sentence this page shows, in one place (for translation).
const TEXT = {
  askTitle: "Forgot your password?",
  ask: "Enter the email address of your account. We will mail it a link to choose a new password.",
  email: "Email",
  send: "Email me a link",
  sending: "Sending…",
  sent: (email) => `If an account uses ${email}, we sent it a link. It works once, for 30 minutes. Check your spam folder too.`,
  needEmail: "Enter your email address.",
  chooseTitle: "Choose a new password",
  choose: "Your new password replaces the old one, and every device signed in to your account is signed out.",
  password: "New password",
  passwordHint: "At least 10 characters, with two kinds: lower case, upper case, digits or symbols.",
  needPassword: "Enter a new password.",
  save: "Save my new password",
  saving: "Saving…",
  doneTitle: "Your password is changed",
  done: "You are signed in. Every other device was signed out.",
  toTables: "Go to the tables",
  signIn: "Sign in",
  expiredTitle: "This link has expired",
  expired: "Reset links work for 30 minutes. Ask for a new one.",
  newLink: "Send me a new link",
  usedTitle: "This link was already used",
  used: "Each link works once. If you chose a new password with it, sign in with that password; if not, ask for a new link.",
  invalidTitle: "This link is not valid",
  invalid: "Open the whole link from the email again (some mail apps cut long links), or ask for a new one.",
  backToSignIn: "Back to sign in",
  failed: "Something went wrong. Please try again.",
};

export function render(root, app) {
  const token = app.params.token || "";
  const section = h("section.auth.link-page#reset-page", { "aria-labelledby": "reset-title" });
  mount(root, section);

  function show(title, ...body) {
    const heading = h("h1#reset-title", { tabindex: "-1" }, title);
    mount(section, heading, ...body);
    heading.focus();
  }

  const link = (id, href, text) => h(`a.button.primary.wide#${id}`, { href }, text);
  const errorLine = () => h("p.form-error#reset-error", { role: "alert", hidden: true });

  function ask() {
    const email = h("input#reset-email", { type: "email", name: "email", autocomplete: "email", required: true });
    const error = errorLine();
    const status = h("p#reset-status", { role: "status" });
    const submit = h("button.primary.wide#reset-send", { type: "submit" }, TEXT.send);
    const form = h("form", { novalidate: true }, field(TEXT.email, email), error, submit);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      error.hidden = true;
      const value = email.value.trim();
      if (!value) {
        error.textContent = TEXT.needEmail;
        error.hidden = false;
        email.focus();
        return;
      }
      submit.disabled = true;
      submit.textContent = TEXT.sending;
      try {
        await api.requestPasswordReset(value);
        form.remove();
        status.textContent = TEXT.sent(value);
      } catch (err) {
        error.textContent = err.message || TEXT.failed;
        error.hidden = false;
        submit.disabled = false;
        submit.textContent = TEXT.send;
      }
    });
    show(TEXT.askTitle, h("p", {}, TEXT.ask), form, status,
      h("p.small", {}, h("a#reset-back", { href: "#/sign-in" }, TEXT.backToSignIn)));
  }

  function choose() {
    const password = h("input#reset-password", { type: "password", name: "password", autocomplete: "new-password", required: true });
    const error = errorLine();
    const submit = h("button.primary.wide#reset-save", { type: "submit" }, TEXT.save);
    const form = h("form", { novalidate: true }, field(TEXT.password, password, TEXT.passwordHint), error, submit);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      error.hidden = true;
      if (!password.value) {
        error.textContent = TEXT.needPassword;
        error.hidden = false;
        password.focus();
        return;
      }
      submit.disabled = true;
      submit.textContent = TEXT.saving;
      try {
        await api.resetPassword(token, password.value);
        show(TEXT.doneTitle, h("p", {}, TEXT.done), link("reset-next", "#/", TEXT.toTables));
      } catch (err) {
        if (!refused(err)) {
          // A weak password: the server says what is missing; the link still works.
          error.textContent = err.message || TEXT.failed;
          error.hidden = false;
          submit.disabled = false;
          submit.textContent = TEXT.save;
          password.focus();
        }
      }
    });
    show(TEXT.chooseTitle, h("p", {}, TEXT.choose), form);
  }

  /** The pages for a refused link; false when the error was not about the link. */
  function refused(err) {
    const again = () => link("reset-again", "#/reset", TEXT.newLink);
    if (err.code === "token_expired") show(TEXT.expiredTitle, h("p", {}, TEXT.expired), again());
    else if (err.code === "link_used") show(TEXT.usedTitle, h("p", {}, TEXT.used), link("reset-sign-in", "#/sign-in", TEXT.signIn), again());
    else if (err.code === "invalid_token") show(TEXT.invalidTitle, h("p", {}, TEXT.invalid), again());
    else return false;
    return true;
  }

  if (token) choose();
  else ask();
}
