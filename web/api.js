// REST calls to the gateway, with the session's tokens.
//
// Tokens live in sessionStorage, not localStorage, on purpose: refresh tokens rotate
// and the auth service treats a reused one as theft (it revokes the whole family).
// Two tabs sharing one refresh token through localStorage would race and sign each
// other out; per-tab storage gives each tab its own token family, survives a reload,
// and is forgotten when the tab is closed (shared devices). The trade-off: a new tab
// asks you to sign in again.

const STORE_KEY = "kalaro.session";

export class ApiError extends Error {
  constructor(status, code, message, retryAfter = 0) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter; // seconds, from a 429's Retry-After (0: not said)
  }
}

let session = load();
let refreshing = null; // one refresh in flight at a time; every caller awaits the same
const listeners = new Set();

function load() {
  try {
    return JSON.parse(sessionStorage.getItem(STORE_KEY) || "null");
  } catch {
    return null;
  }
}

function save(next) {
  session = next;
  if (next) sessionStorage.setItem(STORE_KEY, JSON.stringify(next));
  else sessionStorage.removeItem(STORE_KEY);
  for (const fn of listeners) fn(session);
}

/** Call `fn(session)` whenever the session changes (sign-in, refresh, sign-out). */
export function onSession(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export function currentSession() {
  return session;
}

export function currentUser() {
  return session?.user ?? null;
}

export function hasRole(role) {
  return Boolean(session?.user?.roles?.includes(role));
}

function storePair(pair) {
  save({
    access: pair.access_token,
    refresh: pair.refresh_token,
    // Refresh a little early so a request never races the expiry.
    expiresAt: Date.now() + Math.max(5, pair.expires_in - 20) * 1000,
    user: pair.user,
  });
  return pair;
}

async function raw(method, path, body, token) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "network", "Cannot reach the server. Check your connection and try again.");
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const err = data?.error;
    throw new ApiError(
      response.status,
      err?.code || "http_error",
      err?.message || `The server answered ${response.status}.`,
      Number(response.headers.get("Retry-After")) || 0,
    );
  }
  return data;
}

/** A fresh access token, refreshing first when it is about to expire. */
export async function accessToken({ force = false } = {}) {
  if (!session) throw new ApiError(401, "unauthorized", "Please sign in.");
  if (force || Date.now() >= session.expiresAt) await refresh();
  return session.access;
}

export async function refresh() {
  if (!session) throw new ApiError(401, "unauthorized", "Please sign in.");
  if (!refreshing) {
    const token = session.refresh;
    refreshing = raw("POST", "/api/auth/refresh", { refresh_token: token })
      .then(storePair)
      .catch((err) => {
        // A refused refresh (expired, revoked, reused) ends the session.
        if (err.status === 401) save(null);
        throw err;
      })
      .finally(() => { refreshing = null; });
  }
  return refreshing;
}

/** An authenticated call; a 401 token_expired refreshes once and retries. */
export async function call(method, path, body) {
  const token = await accessToken();
  try {
    return await raw(method, path, body, token);
  } catch (err) {
    if (err.status === 401 && (err.code === "token_expired" || err.code === "invalid_token")) {
      await refresh();
      return raw(method, path, body, session.access);
    }
    if (err.status === 401) save(null);
    // Confirmed since this token was issued (in another tab): a new token says so.
    if (err.code === "email_unverified" && !session?.user?.email_verified) {
      await refresh();
      if (session?.user?.email_verified) return raw(method, path, body, session.access);
    }
    throw err;
  }
}

const q = (params) => {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") s.set(k, v);
  const text = s.toString();
  return text ? `?${text}` : "";
};

// --- accounts -------------------------------------------------------------------------
export const config = () => raw("GET", "/api/config");
export const signUp = (email, password, display_name) =>
  // Sign-up answers "check_email" whether or not the address is known; then sign in.
  raw("POST", "/api/auth/sign-up", { email, password, display_name })
    .then(() => raw("POST", "/api/auth/sign-in", { email, password }))
    .then(storePair);
// The gateway keeps this browser's device cookie (HttpOnly): a known device is not held
// up by others' failed sign-ins. `code`: the emailed one-time code, after code_required.
export const signIn = (email, password, code) =>
  raw("POST", "/api/auth/sign-in", code ? { email, password, code } : { email, password }).then(storePair);
export const googleSignIn = (id_token) =>
  raw("POST", "/api/auth/google", { id_token }).then(storePair);

// Mailed links: their pages POST the token (opening a link changes nothing).
export const verifyEmail = (token) => raw("POST", "/api/auth/verify", { token });
export const resendVerification = (token) => raw("POST", "/api/auth/verify/resend", { token });
export const myVerificationLink = () => call("POST", "/api/me/verification-link");
export const requestPasswordReset = (email) => raw("POST", "/api/auth/password-reset", { email });
export const resetPassword = (token, password) =>
  raw("POST", "/api/auth/password-reset/confirm", { token, password }).then(storePair);

export async function signOut() {
  const token = session?.refresh;
  save(null);
  if (token) {
    try {
      await raw("POST", "/api/auth/sign-out", { refresh_token: token });
    } catch {
      /* signed out locally either way */
    }
  }
}

export async function me() {
  const profile = await call("GET", "/api/me");
  // Roles granted since the token was issued (e.g. host access) need a new token.
  if (session && JSON.stringify(profile.roles) !== JSON.stringify(session.user.roles)) {
    await refresh();
  }
  return profile;
}

// --- approvals: what players ask of admins (host access, credits), one workflow ------
export const requestHost = (note) => call("POST", "/api/approvals", { kind: "host_access", note });
export const requestCredits = (amount, note) => call("POST", "/api/approvals", { kind: "credits", amount, note });
export const myApprovals = (kind) => call("GET", `/api/approvals${q({ kind })}`);
export const withdrawApproval = (id) => call("POST", `/api/approvals/${encodeURIComponent(id)}/withdraw`);

// --- wallet ---------------------------------------------------------------------------
export const balance = () => call("GET", "/api/wallet");
export const history = (limit = 20, before) => call("GET", `/api/wallet/history${q({ limit, before })}`);

// --- admin ----------------------------------------------------------------------------
export const adminApprovals = (kind, status = "pending") => call("GET", `/api/admin/approvals${q({ kind, status })}`);
export const decideApproval = (id, approve, reason) =>
  call("POST", `/api/admin/approvals/${encodeURIComponent(id)}/decision`, { approve, reason });
// request_key: the same key for a retry of the same grant makes it apply once.
export const grant = (user_id, amount, reason, kind = "grant", request_key = "") =>
  call("POST", "/api/admin/grants", { user_id, amount, reason, kind, request_key });

/** `bytes` random bytes as hex: shuffle entropy, request keys. */
export function randomHex(bytes = 16) {
  const buf = new Uint8Array(bytes);
  crypto.getRandomValues(buf);
  return Array.from(buf, (b) => b.toString(16).padStart(2, "0")).join("");
}

// --- tables ---------------------------------------------------------------------------
const t = (id) => `/api/tables/${encodeURIComponent(id)}`;
export const listTables = (game) => call("GET", `/api/tables${q({ game })}`);
export const createTable = (body) => call("POST", "/api/tables", body);
// A private table needs its invite code unless you host it, sit there or are an admin.
export const getTable = (id, invite_code = null) => call("GET", `${t(id)}${q({ invite_code })}`);
/** The invite code this tab knows for a table (the host's, or one typed in), or null. */
export const inviteFor = (id) => sessionStorage.getItem(`kalaro.invite.${id}`);
export const rememberInvite = (id, code) => sessionStorage.setItem(`kalaro.invite.${id}`, code);
export const sit = (id, seat = null, invite_code = null) => call("POST", `${t(id)}/sit`, { seat, invite_code });
export const leave = (id) => call("POST", `${t(id)}/leave`, {});
export const leaveAfterHand = (id, leaveFlag = true) => call("POST", `${t(id)}/leave-after-hand`, { leave: leaveFlag });
export const ready = (id, readyFlag = true, entropy = "") => call("POST", `${t(id)}/ready`, { ready: readyFlag, entropy });
export const deal = (id) => call("POST", `${t(id)}/deal`, {});
export const removePlayer = (id, seat) => call("POST", `${t(id)}/remove`, { seat });
export const endTable = (id) => call("POST", `${t(id)}/end`, {});
export const cancelTable = (id) => call("POST", `${t(id)}/cancel`, {});
export const setChat = (id, enabled) => call("POST", `${t(id)}/chat-setting`, { enabled });
export const addBot = (id, seat = null) => call("POST", `${t(id)}/bots`, { seat });

// --- practice -------------------------------------------------------------------------
export const createPractice = (game) => call("POST", "/api/practice", { game });

// --- ranked play (issue 34) -------------------------------------------------------------
// A host's public table: the rating a sit needs (null: anyone may sit).
export const setMinRating = (id, min_rating) => call("POST", `${t(id)}/min-rating`, { min_rating });
export const ratings = (userId) => call("GET", `/api/ratings/${encodeURIComponent(userId)}`);
export const leaderboard = (game, period = "all") => call("GET", `/api/leaderboard${q({ game, period })}`);
// The queue: {status: "waiting", waited_s} | {status: "seated", table_id} | {status: "idle"}.
export const joinQueue = (game, bet) => call("POST", "/api/queue", { game, bet });
export const leaveQueue = () => call("DELETE", "/api/queue");
export const queueStatus = () => call("GET", "/api/queue");
export const fairPlay = (game, days = 30) => call("GET", `/api/admin/fair-play${q({ game, days })}`);
// action: warn, bar-ranked, unbar-ranked, freeze, unfreeze; audited with the reason.
export const adminAct = (userId, action, reason) =>
  call("POST", `/api/admin/players/${encodeURIComponent(userId)}/${encodeURIComponent(action)}`, { reason });
