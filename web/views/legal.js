// Matching the player's choice against the server's legal actions. The client never
// decides what is legal: it only finds, in the list the server sent, the action that
// matches what the player selected, and sends that object back unchanged.

/** Same cards/tiles regardless of order (multisets). */
export function sameItems(a = [], b = []) {
  if (a.length !== b.length) return false;
  const x = [...a].sort();
  const y = [...b].sort();
  return x.every((v, i) => v === y[i]);
}

export function ofType(legal, type) {
  return (legal || []).filter((a) => a.type === type);
}

export function first(legal, type) {
  return (legal || []).find((a) => a.type === type) || null;
}

/** The legal action of `type` whose `key` (cards, tiles) equals the selection. */
export function matching(legal, type, selection, key = "cards") {
  return ofType(legal, type).find((a) => sameItems(a[key], selection)) || null;
}
