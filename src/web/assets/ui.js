// ui.js: small DOM helpers shared by every view. Elements are built with
// createElement and text with text nodes, never from HTML strings, so
// nothing a server, a user or an agent wrote can become markup.

// h("div", {class: "x", "data-test": "y", onclick: fn}, "text", child, [more])
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key.startsWith("on") && typeof value === "function") {
        el.addEventListener(key.slice(2), value);
      } else if (key === "class") {
        el.className = value;
      } else if (key === "text") {
        el.textContent = String(value);
      } else if (key in PROPS) {
        el[key] = value;
      } else {
        el.setAttribute(key, value === true ? "" : String(value));
      }
    }
  }
  append(el, children);
  return el;
}

// Properties set as properties (not attributes): form state.
const PROPS = { value: 1, checked: 1, disabled: 1, selected: 1, hidden: 1 };

export function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// ---- the error banner ----

let bannerTimer = 0;

export function showError(err) {
  const banner = document.getElementById("banner");
  const text = document.getElementById("banner-text");
  if (!banner || !text) return;
  const message = err && err.message ? err.message : String(err);
  text.textContent = err && err.code ? `${message} (${err.code})` : message;
  banner.hidden = false;
  banner.dataset.kind = "error";
  clearTimeout(bannerTimer);
  // Errors stay until dismissed; they are never hidden silently.
}

export function showInfo(message) {
  const banner = document.getElementById("banner");
  const text = document.getElementById("banner-text");
  if (!banner || !text) return;
  text.textContent = message;
  banner.hidden = false;
  banner.dataset.kind = "info";
  clearTimeout(bannerTimer);
  bannerTimer = setTimeout(() => { if (banner.dataset.kind === "info") banner.hidden = true; }, 4000);
}

export function hideBanner() {
  const banner = document.getElementById("banner");
  if (banner) banner.hidden = true;
}

// Runs an async action for a button: disables it meanwhile, reports errors.
export async function act(button, fn) {
  if (button) button.disabled = true;
  try {
    return await fn();
  } catch (e) {
    showError(e);
    return undefined;
  } finally {
    if (button && button.isConnected) button.disabled = false;
  }
}

// ---- formatting ----

export function fmtTokens(n) {
  if (n === null || n === undefined) return "–";
  if (n >= 1e6) return (n / 1e6).toFixed(n >= 1e7 ? 0 : 1) + "M";
  if (n >= 1e3) return (n / 1e3).toFixed(n >= 1e4 ? 0 : 1) + "k";
  return String(n);
}

// A usage object's tokens: "1.6k in · 43 out · 1.2k cached".
export function fmtUsageTokens(u) {
  if (!u) return "–";
  const parts = [`${fmtTokens(u.input_tokens || 0)} in`, `${fmtTokens(u.output_tokens || 0)} out`];
  if (u.cached_input_tokens) parts.push(`${fmtTokens(u.cached_input_tokens)} cached`);
  return parts.join(" · ");
}

// A cost: a number in dollars, or why there is none (never "$0" for unknown).
export function fmtCost(u) {
  if (!u) return "unavailable";
  const c = u.cost_usd;
  if (typeof c === "number" && Number.isFinite(c)) {
    const s = c === 0 ? "$0" : c < 0.01 ? "$" + c.toFixed(4) : "$" + c.toFixed(2);
    return u.cost_status === "partial" ? s + " (partial)" : s;
  }
  if (!u.cost_status) return (u.input_tokens || u.output_tokens) ? "unavailable" : "–";
  return u.cost_status === "unpriced" ? "unpriced" : u.cost_status;
}

export function fmtDuration(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s - m * 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

// One formatter for every date (making one per call is slow).
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

export function fmtTime(ms) {
  if (!ms) return "–";
  return dateFormat.format(new Date(ms));
}

export function fmtAgo(ms) {
  if (!ms) return "–";
  const s = Math.round((Date.now() - ms) / 1000);
  if (s < 5) return "just now";
  if (s < 60) return `${s} s ago`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const hrs = Math.round(m / 60);
  if (hrs < 48) return `${hrs} h ago`;
  return fmtTime(ms);
}

// A <time> element showing "3 min ago" with the full date as its title.
export function timeEl(ms) {
  const t = h("time", { datetime: ms ? new Date(ms).toISOString() : undefined, title: ms ? fmtTime(ms) : undefined },
    fmtAgo(ms));
  return t;
}

export function statusBadge(status, test) {
  return h("span", { class: `badge status-${safeClass(status)}`, "data-test": test }, status);
}

export function safeClass(s) {
  return String(s || "").replace(/[^a-z0-9_-]/gi, "");
}

export function pretty(value) {
  if (typeof value === "string") return value;
  try { return JSON.stringify(value, null, 2); } catch { return String(value); }
}

// Shortens a long text for display, saying how much was left out.
export function clip(text, max = 20000) {
  const s = String(text ?? "");
  if (s.length <= max) return s;
  return s.slice(0, max) + `\n… (${s.length - max} more characters)`;
}

// A labelled definition list: [["Node", value], …].
export function facts(pairs, attrs) {
  const dl = h("dl", Object.assign({ class: "facts" }, attrs || {}));
  for (const [label, value, test] of pairs) {
    dl.appendChild(h("dt", null, label));
    dl.appendChild(h("dd", test ? { "data-test": test } : null, value));
  }
  return dl;
}

export function emptyNote(text) {
  return h("p", { class: "empty" }, text);
}

// Render timing, read by the browser tests (performance entries, never
// shown): `name:render` from the data having arrived to the DOM being
// built, `name:painted` to the first frame after it.
export function measureRender(name, since) {
  performance.measure(`${name}:render`, { start: since });
  requestAnimationFrame(() => setTimeout(() => performance.measure(`${name}:painted`, { start: since }), 0));
}
