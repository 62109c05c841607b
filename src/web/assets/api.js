// api.js: talking to the Tether server. JSON requests with the sign-in
// cookie (sent by the browser) and the CSRF header on every request that
// changes something; the CSRF token lives in memory only, the server token
// is never kept at all. Also the live streams (EventSource) with resume.

let csrf = "";
let onSignedOut = () => {};

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || `HTTP ${status}`);
    this.status = status;
    this.code = code || "";
  }
}

export function setSignedOutHandler(fn) { onSignedOut = fn; }

async function readError(res) {
  let code = "", message = "";
  try {
    const body = await res.json();
    if (body && body.error) {
      code = String(body.error.code || "");
      message = String(body.error.message || "");
    }
  } catch { /* not JSON */ }
  return new ApiError(res.status, code, message || `${res.status} ${res.statusText || "error"}`);
}

// request("POST", "/v1/sessions", {title}) → the parsed JSON body.
export async function request(method, path, body, options = {}) {
  const headers = { Accept: "application/json" };
  if (method !== "GET" && method !== "HEAD") {
    if (csrf) headers["X-Tether-CSRF"] = csrf;
  }
  const init = { method, headers, credentials: "same-origin", cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, "network", `Cannot reach the server (${e.message || e})`);
  }
  if (!res.ok) {
    const err = await readError(res);
    if (res.status === 401 && !options.quiet401) {
      csrf = "";
      onSignedOut(err);
    }
    throw err;
  }
  if (options.text) return res.text();
  if (res.status === 204) return {};
  const type = res.headers.get("Content-Type") || "";
  if (!type.includes("json")) return {};
  return res.json();
}

export const get = (path, options) => request("GET", path, undefined, options);
export const post = (path, body = {}) => request("POST", path, body);
export const patch = (path, body = {}) => request("PATCH", path, body);
export const del = (path) => request("DELETE", path);

export const enc = encodeURIComponent;

// ---- sign-in ----

// Whether the cookie is valid; keeps the CSRF token when it is.
export async function checkSession() {
  try {
    const s = await get("/v1/auth/session", { quiet401: true });
    csrf = String(s.csrf || "");
    return true;
  } catch (e) {
    if (e.status === 401) { csrf = ""; return false; }
    throw e;
  }
}

export async function signIn(token) {
  const s = await request("POST", "/v1/auth/login", { token }, { quiet401: true });
  csrf = String(s.csrf || "");
}

export async function signOut() {
  try {
    await request("POST", "/v1/auth/logout", {}, { quiet401: true });
  } finally {
    csrf = "";
  }
}

// ---- live streams ----

// Types of events a stream may carry (model/events.h). EventSource only
// delivers named events to listeners of that name, so each is listened to.
export const EVENT_TYPES = [
  "session.created", "session.updated", "session.reset", "session.forked", "input.admitted", "input.promoted", "input.cancelled",
  "input.returned", "execution.started", "execution.recovered", "execution.finished", "step.started", "step.ended",
  "step.failed", "step.retry_scheduled", "text.delta", "text.ended", "reasoning.delta", "reasoning.ended", "tool.called",
  "tool.progress", "tool.succeeded", "tool.failed", "interaction.requested", "interaction.resolved",
  "runtime.bound", "synthetic", "compaction.ended", "env.lease.requested", "env.lease.acquired",
  "env.lease.released", "env.workspace.synced", "agent.state.saved", "agent.state.unavailable", "task.created",
  "task.updated", "task.status_changed",
  "task.commented", "document.revised", "document.accepted", "task.prepared",
];

// At most STREAM_SLOTS streams are open at once in this browser, across all
// of its tabs on this server: a browser opens at most six HTTP/1.1
// connections to one host, and a stream holds one for as long as it lives,
// so a seventh tab each holding one would never load, nor could any tab
// send a request. A slot is a Web Lock (tether-stream-N), which the browser
// releases by itself when a tab closes or crashes. A stream without a slot
// polls instead (`poll`, every POLL_MS, shown as "polling") and takes the
// first slot that frees. A tab hidden for HIDDEN_GRACE_MS gives its slot up
// ("paused") and catches up when shown again. Where Web Locks do not exist
// (a page served over plain HTTP on an address other than loopback is not
// a secure context) every stream opens, as if slots were unlimited.
export const STREAM_SLOTS = 4;
const POLL_MS = 1500;
const HIDDEN_GRACE_MS = 10000;

// A function that frees the slot taken, or null when all are taken.
async function takeSlot() {
  const locks = globalThis.navigator && navigator.locks;
  if (!locks) return () => {};
  for (let i = 0; i < STREAM_SLOTS; i++) {
    let release = null;
    const held = new Promise((r) => { release = r; });
    const got = await new Promise((resolve) => {
      locks.request(`tether-stream-${i}`, { ifAvailable: true }, (lock) => {
        resolve(lock !== null);
        return lock === null ? undefined : held;
      }).catch(() => resolve(false));
    });
    if (got) return release;
  }
  return null;
}

// A followed stream: new LiveStream(url => "/v1/…?after=" + n, {onEvent, onState, onOpen, poll, lastSeq}).
// The browser's EventSource reconnects by itself with Last-Event-ID; when it
// gives up (an HTTP error), the stream is opened again after the last seq
// seen, a little later, until closed. onOpen(missed) is called each time the
// stream opens, `missed` true when events may have gone by unseen (after an
// error, a pause or polling). `poll` is an async catch-up without a stream.
export class LiveStream {
  constructor(makeUrl, { onEvent, onState, onOpen, poll, lastSeq = () => 0 }) {
    this.makeUrl = makeUrl;
    this.onEvent = onEvent;
    this.onState = onState || (() => {});
    this.onOpen = onOpen || (() => {});
    this.poll = poll || (async () => {});
    this.lastSeq = lastSeq;
    this.closed = false;
    this.es = null;
    this.release = null;   // frees this stream's slot
    this.connecting = false;
    this.retry = 0;
    this.timer = 0;
    this.hideTimer = 0;
    this.hadError = false;
    this.onVisibility = () => {
      clearTimeout(this.hideTimer);
      if (document.hidden) this.hideTimer = setTimeout(() => this.pause(), HIDDEN_GRACE_MS);
      else if (this.state === "paused") { this.setState("connecting"); this.connect(); }
    };
    document.addEventListener("visibilitychange", this.onVisibility);
    this.connect();
    if (document.hidden) this.hideTimer = setTimeout(() => this.pause(), HIDDEN_GRACE_MS);  // opened in the background
  }

  // Opens the stream when a slot is free, or polls once and tries again later.
  async connect() {
    if (this.closed || this.es || this.connecting) return;
    this.connecting = true;
    const gone = () => this.closed || this.state === "paused";  // meanwhile
    try {
      if (!this.release) this.release = await takeSlot();
      if (gone()) { this.freeSlot(); return; }
      if (this.release) { this.open(); return; }
      if (this.state !== "polling") this.setState("polling");
      this.hadError = true;
      try { await this.poll(); } catch { /* the next poll or the stream catches up */ }
      if (gone()) return;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.connect(), POLL_MS);
    } finally {
      this.connecting = false;
    }
  }

  open() {
    if (this.closed) return;
    const es = new EventSource(this.makeUrl(this.lastSeq()));
    this.es = es;
    const handler = (m) => {
      if (this.es !== es) return;
      let ev;
      try { ev = JSON.parse(m.data); } catch { return; }
      if (this.state !== "live") this.setState("live");  // some servers send the head with the first event
      if (ev && typeof ev === "object") this.onEvent(ev, m.type);
    };
    for (const t of EVENT_TYPES) es.addEventListener(t, handler);
    es.onmessage = handler;  // unnamed frames, if any
    es.addEventListener("open", () => {
      if (this.es !== es) return;
      this.retry = 0;
      this.setState("live");
      this.onOpen(this.hadError);
      this.hadError = false;
    });
    es.addEventListener("error", (m) => {
      if (this.es !== es) return;
      this.hadError = true;
      if (m && typeof m.data === "string" && m.data) {
        // The server's own error event (e.g. lagged): start over after the last seq.
        this.drop();
        this.reopenLater(200);
        return;
      }
      if (es.readyState === EventSource.CLOSED) {
        this.drop();
        this.setState("offline");
        this.reopenLater();
      } else {
        this.setState("reconnecting");
      }
    });
  }

  setState(st) {
    this.state = st;
    this.onState(st);
  }

  // Closes the EventSource (the slot is kept).
  drop() {
    if (this.es) this.es.close();
    this.es = null;
  }

  freeSlot() {
    if (this.release) this.release();
    this.release = null;
  }

  // Hidden: the stream and its slot go; shown again, connect() catches up.
  pause() {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.drop();
    this.freeSlot();
    this.hadError = true;
    this.setState("paused");
  }

  async reopenLater(delay) {
    if (this.closed) return;
    this.retry = Math.min(this.retry + 1, 6);
    const wait = delay ?? Math.min(500 * 2 ** this.retry, 15000);
    clearTimeout(this.timer);
    this.timer = setTimeout(async () => {
      if (this.closed || this.state === "paused") return;
      // A stream refused because the sign-in ended: back to the sign-in form.
      try { if (!(await checkSession())) { onSignedOut(new ApiError(401, "unauthorized", "Signed out")); return; } }
      catch { /* server down: try again */ }
      this.connect();
    }, wait);
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.hideTimer);
    document.removeEventListener("visibilitychange", this.onVisibility);
    this.drop();
    this.freeSlot();
  }
}

// Calls fn at most once per `ms`, trailing.
export function debounce(fn, ms) {
  let t = 0;
  return () => {
    if (t) return;
    t = setTimeout(() => { t = 0; fn(); }, ms);
  };
}
