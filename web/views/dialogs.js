// Modal dialogs built on <dialog>: focus is trapped and Escape closes, natively.

import { field, h } from "../dom.js";

function open(dialog) {
  document.body.append(dialog);
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(dialog.returnValue);
    }, { once: true });
  });
}

/** Ask for one line of text; resolves with it, or null when cancelled. */
export async function ask({ title, label, hint = "", confirm = "OK", value = "" }) {
  const input = h("input#dialog-input", { type: "text", value, required: true, autocomplete: "off" });
  const dialog = h("dialog.dialog", { "aria-labelledby": "dialog-title" },
    h("form", { method: "dialog" },
      h("h2#dialog-title", {}, title),
      field(label, input, hint),
      h("div.dialog-actions", {},
        h("button", { type: "submit", value: "cancel", formnovalidate: true }, "Cancel"),
        h("button.primary#dialog-confirm", { type: "submit", value: "ok" }, confirm))));
  const result = await open(dialog);
  return result === "ok" ? input.value.trim() : null;
}

/** Ask yes or no; resolves true or false. */
export async function confirmDialog({ title, body, confirm = "Yes", cancel = "Cancel", danger = false }) {
  const dialog = h("dialog.dialog", { "aria-labelledby": "dialog-title" },
    h("form", { method: "dialog" },
      h("h2#dialog-title", {}, title),
      h("p", {}, body),
      h("div.dialog-actions", {},
        h("button", { type: "submit", value: "cancel" }, cancel),
        h(`button${danger ? ".danger" : ".primary"}#dialog-confirm`, { type: "submit", value: "ok" }, confirm))));
  return (await open(dialog)) === "ok";
}

/** Tell something (with an optional code to copy). */
export async function inform({ title, body = [], code = "" }) {
  const dialog = h("dialog.dialog", { "aria-labelledby": "dialog-title" },
    h("form", { method: "dialog" },
      h("h2#dialog-title", {}, title),
      body.map((p) => h("p", {}, p)),
      code ? h("p.code-box", {}, h("code#dialog-code", {}, code),
        h("button.small", {
          type: "button",
          onclick: (e) => {
            navigator.clipboard?.writeText(code).then(() => { e.target.textContent = "Copied"; }, () => {});
          },
        }, "Copy")) : null,
      h("div.dialog-actions", {}, h("button.primary#dialog-confirm", { type: "submit", value: "ok" }, "OK"))));
  await open(dialog);
}
