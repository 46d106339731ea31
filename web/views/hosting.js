// Hosting helpers shared by the lobby (and, at will, the table page): a private table's
// invite link with Copy and Share, and the host's "allow back" for removed players.
//
// The invite code travels in the link (#/join/<table>?code=…); app.js remembers it for
// the tab and opens the table, so an invitee is never asked to type it.

import * as api from "../api.js";
import { h, toast } from "../dom.js";

const tablePath = (id) => `/api/tables/${encodeURIComponent(id)}`;
/** The host's invite code for a private table (any number of times while it is open). */
export const fetchInviteCode = (id) => api.call("GET", `${tablePath(id)}/invite`);
export const allowBack = (id, userId) => api.call("POST", `${tablePath(id)}/allow-back`, { user_id: userId });

/** The link that opens a private table with its code. */
export function inviteLink(tableId, code) {
  const base = `${location.origin}${location.pathname}`;
  return `${base}#/join/${encodeURIComponent(tableId)}?code=${encodeURIComponent(code)}`;
}

/** Parse a `join/<table>?code=…` route (the hash without "#/"); null if it is not one. */
export function parseJoin(path) {
  const match = /^join\/([^/?]+)(?:\?(.*))?$/.exec(path);
  if (!match) return null;
  const code = new URLSearchParams(match[2] || "").get("code") || "";
  return { tableId: decodeURIComponent(match[1]), code };
}

async function copyText(text, input) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No clipboard API (plain http, older browsers): select it for Ctrl+C / long-press.
    input.focus();
    input.select();
    try {
      return document.execCommand("copy");
    } catch {
      return false;
    }
  }
}

/** A dialog with the invite link, Copy and (where the device has it) Share. */
export function showInvite(table, code) {
  const link = inviteLink(table.table_id, code);
  const input = h("input#invite-link", { type: "text", readonly: true, value: link, "aria-label": "Invite link", onfocus: (e) => e.target.select() });
  const status = h("p.invite-status#invite-status", { role: "status" });
  const copy = h("button.primary#invite-copy", {
    type: "button",
    onclick: async () => {
      const ok = await copyText(link, input);
      status.textContent = ok ? "Link copied. Paste it to your players." : "Select the link and copy it.";
    },
  }, "Copy link");
  const canShare = typeof navigator.share === "function";
  const share = canShare ? h("button#invite-share", {
    type: "button",
    onclick: async () => {
      try {
        await navigator.share({ title: "Join my KaLaro table", text: `Join my ${table.game} table on KaLaro`, url: link });
      } catch (err) {
        if (err?.name !== "AbortError") status.textContent = "Could not share; copy the link instead.";
      }
    },
  }, "Share…") : null;
  const dialog = h("dialog.dialog.invite-dialog#invite-dialog", { "aria-labelledby": "invite-title" },
    h("form", { method: "dialog" },
      h("h2#invite-title", {}, "Invite players"),
      h("p", {}, "Anyone with this link can watch and sit at your private table. You can open it again from the table list while the table is open."),
      h("div.invite-row", {}, input),
      h("p.muted.small", {}, "Invite code: ", h("code#invite-code-text", {}, code)),
      h("div.invite-actions", {}, copy, share),
      status,
      h("div.dialog-actions", {}, h("button#invite-done", { type: "submit", value: "ok" }, "Done"))));
  document.body.append(dialog);
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => { dialog.remove(); resolve(); }, { once: true });
  });
}

/** For the host of a private table: a button that opens its invite link (else null). */
export function inviteButton(table) {
  const me = api.currentUser();
  if (!table.private || table.practice || !me || (table.host_id !== me.user_id && !api.hasRole("admin"))) return null;
  if (table.status === "ended" || table.status === "cancelled") return null;
  return h("button.invite-open", {
    type: "button",
    dataset: { tableId: table.table_id },
    "aria-label": "Invite link for this table",
    onclick: async (e) => {
      const btn = e.currentTarget;
      btn.disabled = true;
      try {
        const { invite_code: code } = await fetchInviteCode(table.table_id);
        api.rememberInvite(table.table_id, code);
        await showInvite(table, code);
      } catch (err) {
        toast(err.message, "error");
      } finally {
        btn.disabled = false;
      }
    },
  }, "Invite link");
}

/** For the host: the players removed from the table, each with "Allow back" (else null). */
export function removedList(table, onChange = () => {}) {
  const me = api.currentUser();
  const removed = table.removed || [];
  if (!removed.length || !me || (table.host_id !== me.user_id && !api.hasRole("admin"))) return null;
  return h("div.removed-players", { dataset: { tableId: table.table_id } },
    h("span.muted.small", {}, "Removed: "),
    removed.map((r) => h("span.removed-player", { dataset: { userId: r.user_id } },
      h("span", {}, r.display_name),
      h("button.small.allow-back", {
        type: "button",
        onclick: async (e) => {
          e.currentTarget.disabled = true;
          try {
            const info = await allowBack(table.table_id, r.user_id);
            toast(`${r.display_name} may sit at this table again.`);
            onChange(info);
          } catch (err) {
            toast(err.message, "error");
            e.currentTarget.disabled = false;
          }
        },
      // Named "Allow Ana back": the visible words with the name between (WCAG 2.5.3).
      }, "Allow", h("span.sr-only", {}, ` ${r.display_name}`), " back"))));
}
