// A winning tile hand, grouped into its sets for the result panel. The server's result
// carries the hand but not how it splits, so this finds one split: sets (pongs and
// chows) plus one pair, or pairs (Seven Pairs, with at most one set), with the hand's
// jokers filling gaps. Pure; null when the tiles do not split (then the hand is shown
// as it is). Tested in the browser by tests/e2e/browser/test_table_result.py.

const SUITED = new Set(["m", "p", "s"]);
const key = (t) => "mpszf".indexOf(t[1]) * 10 + Number(t[0]);
const byKey = (a, b) => key(a) - key(b);

function counts(tiles) {
  const m = new Map();
  for (const t of tiles) m.set(t, (m.get(t) || 0) + 1);
  return m;
}

function smallest(m) {
  let best = null;
  for (const [t, n] of m) if (n > 0 && (best === null || key(t) < key(best))) best = t;
  return best;
}

function take(m, t) {
  m.set(t, m.get(t) - 1);
}

function give(m, t) {
  m.set(t, (m.get(t) || 0) + 1);
}

/** Sets only (pongs and chows) from counts `m` with `j` jokers; groups or null. */
function sets(m, j, joker) {
  const t = smallest(m);
  if (t === null) {
    if (j % 3) return null;
    return Array.from({ length: j / 3 }, () => ({ kind: "pong", tiles: [joker, joker, joker] }));
  }
  // A pong of t (jokers fill it).
  const have = Math.min(m.get(t), 3);
  for (let n = have; n >= 1; n -= 1) {
    const need = 3 - n;
    if (need > j) continue;
    for (let i = 0; i < n; i += 1) take(m, t);
    const rest = sets(m, j - need, joker);
    for (let i = 0; i < n; i += 1) give(m, t);
    if (rest) return [{ kind: "pong", tiles: [...Array(n).fill(t), ...Array(need).fill(joker)] }, ...rest];
  }
  // A chow starting at t (t is the smallest, so it can only start one).
  if (SUITED.has(t[1]) && Number(t[0]) <= 7) {
    const run = [0, 1, 2].map((d) => `${Number(t[0]) + d}${t[1]}`);
    const missing = run.filter((x) => !(m.get(x) > 0));
    if (missing.length <= j) {
      const present = run.filter((x) => m.get(x) > 0);
      present.forEach((x) => take(m, x));
      const rest = sets(m, j - missing.length, joker);
      present.forEach((x) => give(m, x));
      if (rest) return [{ kind: "chow", tiles: run.map((x) => (missing.includes(x) ? joker : x)) }, ...rest];
    }
  }
  return null;
}

/** Pairs only, plus at most `extraSets` sets; groups or null. */
function pairs(m, j, joker, extraSets) {
  const out = [];
  const left = new Map(m);
  for (const [t, n0] of [...left].sort((a, b) => byKey(a[0], b[0]))) {
    let n = n0;
    while (n >= 2) {
      out.push({ kind: "pair", tiles: [t, t] });
      n -= 2;
    }
    left.set(t, n);
  }
  const singles = [...left].filter(([, n]) => n > 0).map(([t]) => t);
  if (!singles.length && j === 0) return out;
  if (extraSets) {
    // The odd tiles must make the set (pongs were taken as pairs: undo one if needed).
    const rest = sets(left, j, joker);
    if (rest && rest.length <= extraSets) return [...out, ...rest];
  }
  if (singles.length <= j && (j - singles.length) % 2 === 0) {
    singles.forEach((t) => out.push({ kind: "pair", tiles: [t, joker] }));
    for (let k = 0; k < (j - singles.length) / 2; k += 1) out.push({ kind: "pair", tiles: [joker, joker] });
    return out;
  }
  return null;
}

/** `tiles` (the concealed part of a winning hand) as groups, or null.
 * `joker`: the kind that is wild this hand (its copies fill gaps), if any. */
export function decompose(tiles, { joker = null } = {}) {
  const list = [...tiles].filter((t) => t[1] !== "f").sort(byKey);
  if (list.length < 2) return null;
  const wild = joker ? list.filter((t) => t === joker).length : 0;
  const natural = joker ? list.filter((t) => t !== joker) : list;
  const m = counts(natural);
  if (list.length % 3 === 2) {
    // Sets plus one pair: try each possible pair.
    const candidates = [...new Set(natural)].sort(byKey);
    for (const t of candidates) {
      for (const use of [2, 1]) {
        const need = 2 - use;
        if ((m.get(t) || 0) < use || need > wild) continue;
        for (let i = 0; i < use; i += 1) take(m, t);
        const rest = sets(m, wild - need, joker);
        for (let i = 0; i < use; i += 1) give(m, t);
        if (rest) return [...sortGroups(rest), { kind: "pair", tiles: [...Array(use).fill(t), ...Array(need).fill(joker)] }];
      }
    }
    if (wild >= 2) {
      const rest = sets(m, wild - 2, joker);
      if (rest) return [...sortGroups(rest), { kind: "pair", tiles: [joker, joker] }];
    }
  }
  // Seven Pairs (14 tiles), or 7 pairs + 1 set (17 tiles).
  const extra = list.length % 2 === 1 ? 1 : 0;
  const p = pairs(m, wild, joker, extra);
  return p ? sortGroups(p) : null;
}

function sortGroups(groups) {
  return [...groups].sort((a, b) => byKey(a.tiles.find((t) => t) || "9z", b.tiles.find((t) => t) || "9z"));
}
