// One way to write a date and time everywhere in the client: "1 Dec 2026, 19:05" in the
// viewer's time zone (a fixed day-month-year order, whatever the browser's locale).

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** An ISO string, a Date or epoch milliseconds as "1 Dec 2026, 19:05"; "" for nothing. */
export function formatDate(value) {
  if (value === null || value === undefined || value === "") return "";
  const d = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(d.getTime())) return String(value);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getDate()} ${MONTHS[d.getMonth()]} ${d.getFullYear()}, ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The same, for a machine: the ISO form a <time datetime> carries. */
export function isoDate(value) {
  const d = value instanceof Date ? value : new Date(value);
  return Number.isNaN(d.getTime()) ? "" : d.toISOString();
}
