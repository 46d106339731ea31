// The fairness check of a finished hand, in the browser: a faithful port of the first
// two checks of libs/kalaro/verify.py (and the shuffle of libs/kalaro/games/base.py).
//
// 1. commitment: sha256(revealed server seed) equals what was published before the deal;
// 2. deal: the seeded shuffle of (seed, players' entropy) deals exactly what each seat
//    was dealt, in the same order;
// 3. payments: the result's units times the bet are the credits announced (a voided
//    hand, cancelled mid-play: no result, and nobody paid).
// Replaying every action through the rules is left to `kalaro verify` (the record file).
//
// sha256 is implemented here (synchronous, no SubtleCrypto) because SubtleCrypto is
// missing on plain-http origins such as a LAN address, and the shuffle needs many hashes.
// No DOM: this module also runs under Node (tests/unit/test_verify_js.py).

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** SHA-256 of a Uint8Array, as a Uint8Array of 32 bytes. */
export function sha256(data) {
  const bitLength = data.length * 8;
  const padded = new Uint8Array(((data.length + 9 + 63) >> 6) << 6);
  padded.set(data);
  padded[data.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(bitLength / 2 ** 32));
  view.setUint32(padded.length - 4, bitLength >>> 0);
  const H = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const W = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let off = 0; off < padded.length; off += 64) {
    for (let i = 0; i < 16; i++) W[i] = view.getUint32(off + i * 4);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(W[i - 15], 7) ^ rotr(W[i - 15], 18) ^ (W[i - 15] >>> 3);
      const s1 = rotr(W[i - 2], 17) ^ rotr(W[i - 2], 19) ^ (W[i - 2] >>> 10);
      W[i] = (W[i - 16] + s0 + W[i - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, h] = H;
    for (let i = 0; i < 64; i++) {
      const S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const ch = (e & f) ^ (~e & g);
      const t1 = (h + S1 + ch + K[i] + W[i]) >>> 0;
      const S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (S0 + maj) >>> 0;
      h = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0;
    }
    H[0] += a; H[1] += b; H[2] += c; H[3] += d; H[4] += e; H[5] += f; H[6] += g; H[7] += h;
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) outView.setUint32(i * 4, H[i]);
  return out;
}

const utf8 = (text) => new TextEncoder().encode(text);
const concat = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
};
export const toHex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

/** bytes.fromhex: null for text that is not an even run of hex digits. */
export function fromHex(text) {
  if (typeof text !== "string" || !/^([0-9a-fA-F]{2})*$/.test(text)) return null;
  return Uint8Array.from(text.match(/../g) || [], (x) => parseInt(x, 16));
}

/** base.py `_ByteStream`: SHA-256(seed || 8-byte big-endian counter) blocks. */
class ByteStream {
  constructor(seed) { this.seed = seed; this.counter = 0; this.buffer = new Uint8Array(0); }

  take(n) {
    while (this.buffer.length < n) {
      const counter = new Uint8Array(8);
      new DataView(counter.buffer).setBigUint64(0, BigInt(this.counter));
      this.buffer = concat(this.buffer, sha256(concat(this.seed, counter)));
      this.counter += 1;
    }
    const out = this.buffer.slice(0, n);
    this.buffer = this.buffer.slice(n);
    return out;
  }

  /** A uniform integer in [0, bound) by rejection sampling on 4-byte words. */
  below(bound) {
    const limit = 2 ** 32 - (2 ** 32 % bound);
    for (;;) {
      const value = new DataView(this.take(4).buffer).getUint32(0);
      if (value < limit) return value % bound;
    }
  }
}

/** base.py `shuffled`: Fisher-Yates from the last index down. */
export function shuffled(items, seed) {
  const out = items.slice();
  const stream = new ByteStream(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = stream.below(i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** base.py `derive_seed`: the server seed combined with the players' entropy. */
export function deriveSeed(serverSeed, entropy = []) {
  const parts = [utf8("kalaro-deal-v1\x00"), serverSeed];
  for (const e of entropy) parts.push(new Uint8Array([0]), utf8(e));
  return sha256(concat(...parts));
}

/** base.py `pick`: a deterministic choice in [0, bound) (the first dealer). */
export function pick(seed, label, bound) {
  return new ByteStream(sha256(concat(seed, new Uint8Array([0]), utf8(label)))).below(bound);
}

// The starting orders of the shuffle (cards.py DECK, tiles.py MAHJONG_144, kawuxing TILES_84).
const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
const DECK = ["S", "H", "D", "C"].flatMap((suit) => RANKS.map((rank) => rank + suit));
const NINE = [1, 2, 3, 4, 5, 6, 7, 8, 9];
const HONOURS = [1, 2, 3, 4, 5, 6, 7].map((n) => `${n}z`);
const FLOWERS = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => `${n}f`);
const KINDS = ["m", "p", "s"].flatMap((suit) => NINE.map((r) => `${r}${suit}`)).concat(HONOURS);
const fours = (kinds) => kinds.flatMap((k) => [k, k, k, k]);
const MAHJONG_144 = fours(KINDS).concat(FLOWERS);
const TILES_84 = fours(NINE.map((r) => `${r}p`).concat(NINE.map((r) => `${r}s`), HONOURS.slice(4)));
const orderOf = (names) => new Map(names.map((n, i) => [n, i]));
const CARD_ORDER = orderOf(DECK);
const TILE_ORDER = orderOf(KINDS.concat(FLOWERS));
const sortBy = (order) => (list) => list.slice().sort((a, b) => order.get(a) - order.get(b));

/** Each seat's deal as the record lists it (`GameRules.dealt` of `new_hand`). */
const DEALS = {
  tongits: { seats: 3, deal(seed, dealer) {
    const deck = shuffled(DECK, seed);
    const hands = [[], [], []];
    for (let i = 0; i < 36; i++) hands[(dealer + i) % 3].push(deck[i]);
    hands[dealer].push(deck[36]);
    return hands.map(sortBy(CARD_ORDER));
  } },
  mahjong: { seats: 4, deal(seed, dealer) {
    const tiles = shuffled(MAHJONG_144, seed);
    const order = [0, 1, 2, 3].map((i) => (dealer + i) % 4);
    const hands = [[], [], [], []];
    let front = 0;
    for (let round = 0; round < 4; round++) {
      for (const seat of order) { hands[seat].push(...tiles.slice(front, front + 4)); front += 4; }
    }
    const wall = tiles.slice(front);
    const flowers = [[], [], [], []];
    for (const seat of order) {
      for (let found = hands[seat].filter((t) => t.endsWith("f")); found.length; found = hands[seat].filter((t) => t.endsWith("f"))) {
        for (const flower of found) {
          hands[seat].splice(hands[seat].indexOf(flower), 1);
          flowers[seat].push(flower);
          hands[seat].push(wall.pop());
        }
      }
    }
    return hands.map((hand, s) => sortBy(TILE_ORDER)(hand).concat(flowers[s]));
  } },
  kawuxing: { seats: 3, deal(seed, dealer) {
    const tiles = shuffled(TILES_84, seed);
    const order = [0, 1, 2].map((i) => (dealer + i) % 3);
    const hands = [[], [], []];
    let front = 0;
    for (const batch of [4, 4, 4, 1]) {
      for (const seat of order) { hands[seat].push(...tiles.slice(front, front + batch)); front += batch; }
    }
    return hands.map(sortBy(TILE_ORDER));
  } },
};

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Check a hand record (the JSON of GET /api/hands/{game}/{hand_id}); returns
 * {hand_id, ok, checks: [{name, ok, detail}]}, the names as `kalaro verify` prints them.
 */
export function verifyHand(record) {
  const checks = [];
  const check = (name, ok, detail) => { checks.push({ name, ok, detail }); return ok; };
  const report = () => ({ hand_id: record.hand_id, ok: checks.every((c) => c.ok), checks });
  const serverSeed = fromHex(record.server_seed);
  if (!serverSeed) {
    check("commitment", false, "the revealed server seed is not hex");
    return report();
  }
  const digest = toHex(sha256(serverSeed));
  check("commitment", digest === record.seed_commitment,
    `sha256(server seed) = ${digest.slice(0, 16)}…, published before the deal ${String(record.seed_commitment).slice(0, 16)}…`);
  const game = DEALS[record.game];
  if (!game) {
    check("options", false, `unknown game ${JSON.stringify(record.game)}`);
    return report();
  }
  const seed = deriveSeed(serverSeed, record.entropy || []);
  const dealer = record.dealer ?? pick(seed, "dealer", game.seats);
  const dealt = game.deal(seed, dealer);
  const ok = same(dealt, record.initial_hands);
  check("deal", ok, ok ? "every seat was dealt what the seed and entropy deal"
    : "the re-derived deal differs from the record");
  if (record.voided) {
    const paid = Array.isArray(record.payments) ? record.payments : [];
    const unpaid = record.result == null && paid.length === (record.players || []).length && paid.every((p) => p === 0);
    check("payments", unpaid, unpaid ? `voided: nobody paid, announced [${paid.join(", ")}]`
      : `a voided hand announces a result or payments [${paid.join(", ")}]`);
    return report();
  }
  const units = record.result?.payments;
  if (Array.isArray(units)) {
    const credits = units.map((u) => u * record.bet);
    check("payments", same(credits, record.payments),
      `payments in credits [${credits.join(", ")}] vs announced [${(record.payments || []).join(", ")}]`);
  }
  return report();
}
