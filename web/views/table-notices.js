// What a table change means for you, told on screen: the host removed you, or the table
// ended (or was cancelled). Both come in the ordinary table frame (status, removed list),
// so no new protocol is needed. `tableNotice` is pure; `showTableNotice` draws it and
// takes you back to the lobby; `watchTableNotices` wires both to the socket.

import { h } from "../dom.js";

const CLOSED = new Set(["ended", "cancelled"]);

/**
 * The notice a table change means for `myUserId`, or null.
 * @returns {{text: string, leave: boolean, kind: string} | null}
 */
export function tableNotice(prevTable, nextTable, myUserId) {
  if (!prevTable || !nextTable || !myUserId) return null;
  if (prevTable.table_id !== nextTable.table_id) return null;
  if ((nextTable.version ?? 0) <= (prevTable.version ?? 0)) return null; // old or same news
  const host = nextTable.host_id === myUserId;
  if (CLOSED.has(nextTable.status) && !CLOSED.has(prevTable.status)) {
    if (nextTable.status === "cancelled") {
      // Cancelling stops a hand mid-play: stay on the table to see where it stood.
      return {
        kind: "cancelled",
        leave: false,
        text: host ? "You cancelled the table. Any hand in progress was voided." : "The host cancelled this table. Any hand in progress was voided: no credits moved.",
      };
    }
    return { kind: "ended", leave: true, text: host ? "You ended the table." : "The host ended this table. Thanks for playing!" };
  }
  const wasSeated = (prevTable.seats || []).some((s) => s && s.user_id === myUserId);
  const isSeated = (nextTable.seats || []).some((s) => s && s.user_id === myUserId);
  const barred = (nextTable.removed || []).some((r) => r.user_id === myUserId);
  if (wasSeated && !isSeated && barred) {
    return { kind: "removed", leave: true, text: "The host removed you from this table. You can sit there again only if the host allows it." };
  }
  return null;
}

let hideTimer = 0;

/** Show `notice` in a banner that outlives the page change, and go to the lobby if asked. */
export function showTableNotice(notice, app) {
  document.getElementById("table-notice")?.remove();
  clearTimeout(hideTimer);
  const banner = h("div.table-notice#table-notice", { role: "alert", dataset: { kind: notice.kind } },
    h("p", {}, notice.text),
    h("button.small#table-notice-close", { type: "button", "aria-label": "Dismiss", onclick: () => banner.remove() }, "OK"));
  document.body.append(banner);
  hideTimer = setTimeout(() => banner.remove(), 20000);
  if (notice.leave) app.navigate("/");
}

/** Listen to the socket's table frames and tell the player when one concerns them
 * (only while they are on that table's page). Returns a function that stops it. */
export function watchTableNotices(socket, app, myUserId) {
  const last = new Map(); // table id -> the newest table seen
  const onTablePage = (id) => location.hash === `#/tables/${id}` || location.hash === `#/tables/${encodeURIComponent(id)}`;
  const remember = (frame) => {
    const t = frame?.table;
    if (t && (last.get(t.table_id)?.version ?? -1) < (t.version ?? 0)) last.set(t.table_id, t);
  };
  const offSubscribed = socket.on("subscribed", remember);
  const offTable = socket.on("table", (frame) => {
    const next = frame?.table;
    if (!next) return;
    const prev = last.get(next.table_id);
    remember(frame);
    if (!onTablePage(next.table_id)) return;
    const notice = tableNotice(prev, next, myUserId());
    if (notice) showTableNotice(notice, app);
  });
  return () => { offSubscribed(); offTable(); };
}
