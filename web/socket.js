// The table WebSocket (/ws): subscribe to tables, receive their frames, send moves.
//
// - Reconnects by itself after a dropped connection (backoff up to 8 s), with a fresh
//   access token, and re-subscribes every table it watched; the server answers each
//   subscribe with the table and a complete view, so nothing needs replaying.
// - Pings every `heartbeat_seconds` (20 s, from the welcome frame); the server drops a
//   silent socket after three heartbeats, and a socket that hears nothing back for two
//   heartbeats is presumed dead and replaced.
// - Every view is complete and versioned: the newest version wins, older frames that
//   arrive late are dropped, a gap needs no repair.

import * as api from "./api.js";

/** A subscribe frame; a private table's invite code goes with it when this tab knows it. */
function subscribeFrame(tableId) {
  const code = api.inviteFor(tableId);
  return code ? { type: "subscribe", table_id: tableId, invite_code: code } : { type: "subscribe", table_id: tableId };
}

const REQUEST_TIMEOUT_MS = 10000;
const MAX_BACKOFF_MS = 8000;

export class GameSocket {
  constructor() {
    this.ws = null;
    this.tables = new Set(); // table ids to (re)subscribe on every connection
    this.latest = new Map(); // table id -> newest view frame seen
    this.pending = new Map(); // ref -> {resolve, reject, timer}
    this.handlers = new Map(); // frame type -> Set of listeners
    this.nextRef = 1;
    this.closing = false;
    this.backoff = 500;
    this.heartbeatMs = 20000;
    this.pingTimer = 0;
    this.lastHeard = 0;
    this.reconnectTimer = 0;
    this.status = "idle";
    this.refreshToken = false; // the server refused our token: refresh before reconnecting
    this.crowded = false; // refused for too many sockets: said once until a welcome
    this.onOnline = () => this.reconnectNow();
  }

  on(type, fn) {
    if (!this.handlers.has(type)) this.handlers.set(type, new Set());
    this.handlers.get(type).add(fn);
    return () => this.handlers.get(type)?.delete(fn);
  }

  emit(type, payload) {
    for (const fn of this.handlers.get(type) || []) {
      try {
        fn(payload);
      } catch (err) {
        console.error(`socket ${type} listener failed`, err);
      }
    }
  }

  setStatus(status) {
    if (this.status === status) return;
    this.status = status;
    this.emit("status", status);
  }

  async connect() {
    this.closing = false;
    window.addEventListener("online", this.onOnline);
    if (this.ws && this.ws.readyState <= WebSocket.OPEN) return;
    this.setStatus(this.status === "idle" ? "connecting" : "reconnecting");
    let token;
    try {
      token = await api.accessToken({ force: this.refreshToken });
      this.refreshToken = false;
    } catch (err) {
      if (err.status === 401) {
        this.setStatus("signed-out");
        this.emit("signed-out", err);
        return;
      }
      this.scheduleReconnect();
      return;
    }
    if (this.closing) return;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    // The token goes in the subprotocol offer, never in the URL (URLs end up in logs).
    const ws = new WebSocket(`${scheme}://${location.host}/ws`, ["kalaro.bearer", token]);
    this.ws = ws;
    ws.addEventListener("message", (event) => this.onMessage(ws, event));
    ws.addEventListener("close", (event) => this.onClose(ws, event));
    ws.addEventListener("error", () => { /* a close event always follows */ });
  }

  close() {
    this.closing = true;
    window.removeEventListener("online", this.onOnline);
    clearTimeout(this.reconnectTimer);
    clearInterval(this.pingTimer);
    this.tables.clear();
    this.latest.clear();
    if (this.ws) this.ws.close(1000, "bye");
    this.ws = null;
    this.setStatus("idle");
  }

  /** Drop the connection as a network failure would (used by tests and "retry now"). */
  drop() {
    if (this.ws) this.ws.close(4000, "dropped");
  }

  reconnectNow() {
    if (this.closing) return;
    clearTimeout(this.reconnectTimer);
    this.backoff = 500;
    if (!this.ws || this.ws.readyState > WebSocket.OPEN) this.connect();
  }

  scheduleReconnect() {
    if (this.closing) return;
    clearTimeout(this.reconnectTimer);
    const delay = this.backoff * (0.75 + Math.random() * 0.5);
    this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
  }

  onClose(ws, event) {
    if (ws !== this.ws) return;
    clearInterval(this.pingTimer);
    this.ws = null;
    for (const [ref, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(Object.assign(new Error("The connection dropped; please try again."), { code: "disconnected" }));
      this.pending.delete(ref);
    }
    if (this.closing) return;
    if (event.code === 4401) this.refreshToken = true;
    this.setStatus("reconnecting");
    this.scheduleReconnect();
  }

  onMessage(ws, event) {
    if (ws !== this.ws) return;
    this.lastHeard = Date.now();
    let frame;
    try {
      frame = JSON.parse(event.data);
    } catch {
      return;
    }
    switch (frame.type) {
      case "welcome":
        this.onWelcome(frame);
        break;
      case "view":
        if (!this.isNewest(frame)) return;
        break;
      case "error":
        // Refused at connect (expired token): the close (4401) that follows reconnects.
        if (frame.code === "token_expired" || frame.code === "invalid_token") this.refreshToken = true;
        // Refused at connect: the account holds its share of sockets (close 1008 follows,
        // and the socket keeps trying with backoff). Said once until a welcome.
        if (frame.code === "rate_limited" && this.status !== "open" && !this.crowded) {
          this.crowded = true;
          this.emit("too-many-sockets", frame);
        }
        break;
      default:
        break;
    }
    this.settle(frame);
    this.emit(frame.type, frame);
  }

  onWelcome(frame) {
    this.backoff = 500;
    this.crowded = false;
    this.heartbeatMs = Math.max(5, frame.heartbeat_seconds || 20) * 1000;
    clearInterval(this.pingTimer);
    this.pingTimer = setInterval(() => this.heartbeat(), this.heartbeatMs);
    this.setStatus("open");
    for (const tableId of this.tables) this.send(subscribeFrame(tableId));
  }

  heartbeat() {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return;
    if (Date.now() - this.lastHeard > 2 * this.heartbeatMs + 5000) {
      this.ws.close(4000, "no heartbeat"); // presumed dead: the close handler reconnects
      return;
    }
    this.send({ type: "ping" });
  }

  /** Newest version wins: drop a view older than (or as old as) the one we hold. */
  isNewest(frame) {
    const held = this.latest.get(frame.table_id);
    if (held && held.hand_id === frame.hand_id && frame.version <= held.version) return false;
    this.latest.set(frame.table_id, frame);
    return true;
  }

  latestView(tableId) {
    return this.latest.get(tableId) || null;
  }

  settle(frame) {
    const ref = frame.ref;
    if (ref === undefined || ref === null || !this.pending.has(ref)) return;
    const p = this.pending.get(ref);
    this.pending.delete(ref);
    clearTimeout(p.timer);
    if (frame.type === "error") {
      p.reject(Object.assign(new Error(frame.message), { code: frame.code }));
    } else {
      p.resolve(frame);
    }
  }

  send(frame) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(frame));
    return true;
  }

  request(frame) {
    return new Promise((resolve, reject) => {
      const ref = this.nextRef++;
      if (!this.send({ ...frame, ref })) {
        reject(Object.assign(new Error("Not connected right now; reconnecting…"), { code: "disconnected" }));
        return;
      }
      const timer = setTimeout(() => {
        this.pending.delete(ref);
        reject(Object.assign(new Error("The server did not answer in time."), { code: "timeout" }));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(ref, { resolve, reject, timer });
    });
  }

  subscribe(tableId) {
    this.tables.add(tableId);
    if (this.status === "open") this.send(subscribeFrame(tableId));
  }

  unsubscribe(tableId) {
    this.tables.delete(tableId);
    this.latest.delete(tableId);
    this.send({ type: "unsubscribe", table_id: tableId });
  }

  /** Re-subscribe: the server re-seats this socket (after sitting down) and sends a view. */
  resubscribe(tableId) {
    this.tables.add(tableId);
    this.send(subscribeFrame(tableId));
  }

  resync(tableId) {
    this.send({ type: "resync", table_id: tableId });
  }

  /** Send one action exactly as the server listed it, against the newest version seen. */
  async act(tableId, action) {
    const view = this.latest.get(tableId);
    if (!view) throw Object.assign(new Error("No hand to play yet."), { code: "no_view" });
    try {
      return await this.request({ type: "act", table_id: tableId, version: view.version, action });
    } catch (err) {
      if (err.code !== "disconnected" && err.code !== "timeout") this.resync(tableId);
      throw err;
    }
  }

  chat(tableId, text) {
    return this.request({ type: "chat", table_id: tableId, text });
  }
}
