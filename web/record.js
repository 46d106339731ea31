// A finished hand's record as a file, for `kalaro verify hand-<id>.json`.

import { call } from "./api.js";

/** Save `record` (already fetched) as a JSON file. */
export function saveRecord(record) {
  const blob = new Blob([JSON.stringify(record, null, 2)], { type: "application/json" });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = `hand-${record.hand_id}.json`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** Fetch the record of a table's finished hand (anyone who may see the table's hands). */
export async function downloadTableRecord(tableId, handId) {
  const record = await call("GET", `/api/tables/${encodeURIComponent(tableId)}/hands/${encodeURIComponent(handId)}`);
  saveRecord(record);
  return record;
}
