// KaLaro web client: hash router, the signed-in shell (balance, nav, socket) and views.
//
// Routes: #/sign-in, #/ (tables), #/tables/<id>, #/join/<id>?code=… (an invite link:
// remembers the code, then opens the table), #/wallet, #/hands, #/hands/<game>/<hand>,
// #/profile (mine), #/players/<id>?name=… (anyone's stats), #/leaderboard,
// #/admin, #/admin/fair-play, #/how-to-play, and the pages mailed links open: #/verify?token=…,
// #/reset (ask for a link) and #/reset?token=… (choose a new password).
// Hash routing means the gateway's static file server needs no rewrite rules.

import * as api from "./api.js";
import { credits, toast } from "./dom.js";
import { GameSocket } from "./socket.js";
import * as signIn from "./views/sign-in.js";
import * as dashboard from "./views/dashboard.js";
import * as table from "./views/table.js";
import * as wallet from "./views/wallet.js";
import * as admin from "./views/admin.js";
import * as howTo from "./views/how-to-play.js";
import { parseJoin } from "./views/hosting.js";
import { watchTableNotices } from "./views/table-notices.js";
import * as hands from "./views/history.js";
import * as replay from "./views/replay.js";
import * as profile from "./views/profile.js";
import * as verifyEmail from "./views/verify-email.js";
import * as resetPassword from "./views/reset-password.js";
import * as leaderboard from "./views/leaderboard.js";
import * as fairPlay from "./views/fair-play.js";
import { followSeated } from "./views/quick-play.js";

// Open without signing in: mailed links are followed from any browser.
const PUBLIC_VIEWS = new Set([signIn, howTo, verifyEmail, resetPassword]);

const BALANCE_POLL_MS = 15000;

const app = {
  config: { google_client_id: "", welcome_grant: 0 },
  socket: null,
  balance: null,
  cleanup: null,
  balanceTimer: 0,
  balanceListeners: new Set(),

  navigate(path) {
    if (location.hash === `#${path}`) route();
    else location.hash = path;
  },

  /** Fetch the balance and show it in the header; views may listen for changes. */
  async refreshBalance() {
    if (!api.currentSession()) return null;
    try {
      const b = await api.balance();
      app.balance = b;
      document.getElementById("balance-amount").textContent = credits(b.available);
      document.getElementById("balance").setAttribute(
        "aria-label", `Available ${credits(b.available)} credits (balance ${credits(b.balance)}, held ${credits(b.held)})`,
      );
      for (const fn of app.balanceListeners) fn(b);
      return b;
    } catch {
      return app.balance;
    }
  },

  onBalance(fn) {
    app.balanceListeners.add(fn);
    return () => app.balanceListeners.delete(fn);
  },
};

function ensureSocket() {
  if (app.socket) return app.socket;
  const socket = new GameSocket();
  const conn = document.getElementById("conn");
  socket.on("status", (status) => {
    conn.dataset.status = status;
    conn.title = { open: "Connected", reconnecting: "Reconnecting…", connecting: "Connecting…" }[status] || status;
    conn.setAttribute("aria-label", conn.title);
  });
  socket.on("too-many-sockets", () => {
    toast("This account has too many KaLaro tabs or devices open. Close one; this tab keeps trying.", "error");
  });
  socket.on("signed-out", () => {
    toast("Your session ended. Please sign in again.", "error");
    app.navigate("/sign-in");
  });
  // Removed from a table, or the table ended: say so and go back to the lobby.
  watchTableNotices(socket, app, () => api.currentUser()?.user_id);
  followSeated(socket, app, toast); // the ranked queue seated us: to the table (issue 34)
  socket.connect();
  app.socket = socket;
  return socket;
}

function shell(signedIn) {
  const bar = document.getElementById("topbar");
  bar.hidden = !signedIn;
  if (!signedIn) {
    clearInterval(app.balanceTimer);
    app.balanceTimer = 0;
    if (app.socket) app.socket.close();
    app.socket = null;
    return;
  }
  const user = api.currentUser();
  document.getElementById("who").textContent = user?.display_name || "";
  document.getElementById("nav-admin").hidden = !api.hasRole("admin");
  if (!app.balanceTimer) {
    app.refreshBalance();
    app.balanceTimer = setInterval(() => app.refreshBalance(), BALANCE_POLL_MS);
  }
  ensureSocket();
}

function parse(hash) {
  const path = hash.replace(/^#/, "") || "/";
  const join = parseJoin(path.replace(/^\//, ""));
  if (join) {
    // The code stays in this tab only; the address bar shows the plain table link.
    if (join.code) api.rememberInvite(join.tableId, join.code);
    history.replaceState(null, "", `#/tables/${encodeURIComponent(join.tableId)}`);
    return { view: table, name: "tables", params: { tableId: join.tableId } };
  }
  const [page, query = ""] = path.replace(/^\//, "").split("?");
  const token = new URLSearchParams(query).get("token") || "";
  if (page === "verify") return { view: verifyEmail, name: "verify", params: { token } };
  if (page === "reset") return { view: resetPassword, name: "reset", params: { token } };
  const parts = path.split("/").filter(Boolean);
  if (parts[0] === "sign-in") return { view: signIn, name: "sign-in" };
  if (parts[0] === "tables" && parts[1]) return { view: table, name: "tables", params: { tableId: decodeURIComponent(parts[1]) } };
  if (parts[0] === "wallet") return { view: wallet, name: "wallet" };
  if (parts[0] === "hands" && parts[2]) return { view: replay, name: "hands", params: { game: decodeURIComponent(parts[1]), handId: decodeURIComponent(parts[2]) } };
  if (parts[0] === "hands") return { view: hands, name: "hands" };
  if (parts[0] === "profile") return { view: profile, name: "profile", params: {} };
  if (parts[0] === "players" && parts[1]) {
    const [id, search = ""] = parts[1].split("?");
    const mine = decodeURIComponent(id) === api.currentUser()?.user_id;
    return { view: profile, name: mine ? "profile" : "players", params: { userId: decodeURIComponent(id), name: new URLSearchParams(search).get("name") || "" } };
  }
  if (parts[0] === "leaderboard") return { view: leaderboard, name: "leaderboard" };
  if (parts[0] === "admin" && parts[1] === "fair-play") return { view: fairPlay, name: "admin" };
  if (parts[0] === "admin") return { view: admin, name: "admin" };
  if (parts[0] === "how-to-play") return { view: howTo, name: "how" };
  return { view: dashboard, name: "tables" };
}

async function route() {
  let target = parse(location.hash);
  const signedIn = Boolean(api.currentSession());
  if (!signedIn && !PUBLIC_VIEWS.has(target.view)) {
    sessionStorage.setItem("kalaro.after-sign-in", location.hash || "#/");
    target = { view: signIn, name: "sign-in" };
    if (location.hash !== "#/sign-in") history.replaceState(null, "", "#/sign-in");
  }
  if (signedIn && target.view === signIn) {
    target = { view: dashboard, name: "tables" };
    history.replaceState(null, "", "#/");
  }
  if (typeof app.cleanup === "function") {
    try { app.cleanup(); } catch (err) { console.error(err); }
  }
  app.cleanup = null;
  shell(signedIn);
  for (const link of document.querySelectorAll("[data-nav]")) {
    if (link.dataset.nav === target.name) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  const root = document.getElementById("app");
  root.replaceChildren();
  root.dataset.view = target.name;
  // A new page starts at its top: a lobby scrolled to reach a button must not leave
  // the table it opened scrolled past its board.
  window.scrollTo(0, 0);
  try {
    app.cleanup = await target.view.render(root, { ...app, params: target.params || {}, socket: signedIn ? ensureSocket() : null });
  } catch (err) {
    console.error(err);
    toast(err.message || "Something went wrong.", "error");
  }
}

/** After signing in: go where the player was headed. */
app.afterSignIn = () => {
  const next = sessionStorage.getItem("kalaro.after-sign-in") || "#/";
  sessionStorage.removeItem("kalaro.after-sign-in");
  location.hash = next === "#/sign-in" ? "#/" : next;
  if (location.hash === next) route();
};

async function start() {
  document.getElementById("sign-out").addEventListener("click", async () => {
    await api.signOut();
    app.navigate("/sign-in");
  });
  // Tapping the link of the page you are on reloads it (fresh lists, fresh roles).
  for (const link of document.querySelectorAll("[data-nav]")) {
    link.addEventListener("click", (event) => {
      if (link.getAttribute("href") === (location.hash || "#/")) {
        event.preventDefault();
        route();
      }
    });
  }
  api.onSession((session) => {
    if (!session && document.getElementById("app").dataset.view !== "sign-in") {
      shell(false);
      app.navigate("/sign-in");
    }
  });
  try {
    app.config = await api.config();
  } catch {
    /* keep defaults: no Google button */
  }
  window.addEventListener("hashchange", route);
  await route();
}

window.kalaro = app; // handy in the console and for browser tests
start();
