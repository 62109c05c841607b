// app.js: the shell of Tether's web interface. Sign-in and sign-out, the
// theme switch, the error banner and the hash router that mounts one view
// at a time (#/sessions, #/sessions/<id>, #/tasks, #/tasks/<id>,
// #/qualification, #/health). Each view is an async function that renders
// into a container and returns a cleanup function (streams, timers).

import { checkSession, signIn, signOut, setSignedOutHandler } from "./api.js";
import { clear, hideBanner, showError } from "./ui.js";
import { renderSessions } from "./sessions.js";
import { renderSession } from "./session.js";
import { renderBoard, renderTask } from "./tasks.js";
import { renderQualification, renderHealth } from "./misc.js";

const page = document.getElementById("page");
const signinView = document.getElementById("signin-view");
const nav = document.getElementById("nav");
const signoutButton = document.getElementById("signout");

let signedIn = false;
let cleanup = null;
let generation = 0;

// ---- theme ----

const THEMES = ["auto", "light", "dark"];
const THEME_KEY = "tether-theme";

function storedTheme() {
  try {
    const t = localStorage.getItem(THEME_KEY);
    return THEMES.includes(t) ? t : "auto";
  } catch { return "auto"; }
}

function applyTheme(t) {
  if (t === "auto") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = t;
  const b = document.getElementById("theme-toggle");
  b.textContent = `Theme: ${t}`;
  b.title = "Switch between the system's theme, light and dark";
}

document.getElementById("theme-toggle").addEventListener("click", () => {
  const next = THEMES[(THEMES.indexOf(storedTheme()) + 1) % THEMES.length];
  try { localStorage.setItem(THEME_KEY, next); } catch { /* private mode */ }
  applyTheme(next);
});
applyTheme(storedTheme());

document.getElementById("banner-close").addEventListener("click", hideBanner);

// ---- routing ----

function parseRoute() {
  const hash = location.hash.replace(/^#\/?/, "");
  const parts = hash.split("/").filter(Boolean).map((p) => {
    try { return decodeURIComponent(p); } catch { return p; }
  });
  const [section = "sessions", id] = parts;
  return { section, id };
}

const VIEWS = new Map([
  ["sessions", (el, r) => (r.id ? renderSession(el, r.id) : renderSessions(el))],
  ["tasks", (el, r) => (r.id ? renderTask(el, r.id) : renderBoard(el))],
  ["qualification", (el) => renderQualification(el)],
  ["health", (el) => renderHealth(el)],
]);

function unmount() {
  if (cleanup) {
    try { cleanup(); } catch (e) { console.error(e); }
  }
  cleanup = null;
}

async function route() {
  const mine = ++generation;
  document.body.dataset.ready = "false";
  unmount();
  if (!signedIn) return;
  const r = parseRoute();
  const view = VIEWS.get(r.section);
  for (const a of nav.querySelectorAll("a[data-nav]")) {
    if (a.dataset.nav === r.section) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  clear(page);
  const container = document.createElement("div");
  container.className = "view";
  page.appendChild(container);
  if (!view) {
    container.textContent = "No such page. ";
    const a = document.createElement("a");
    a.href = "#/sessions";
    a.textContent = "Go to the sessions";
    container.appendChild(a);
    document.body.dataset.ready = "true";
    return;
  }
  let done = null;
  try {
    done = await view(container, r);
  } catch (e) {
    if (mine === generation) {
      showError(e);
      const p = document.createElement("p");
      p.className = "load-error";
      p.textContent = `Could not load this page: ${e.message || e}`;
      container.appendChild(p);
    }
  }
  if (mine !== generation) {
    // Navigated away while loading: this view is already gone.
    if (typeof done === "function") done();
    return;
  }
  cleanup = typeof done === "function" ? done : null;
  document.body.dataset.ready = "true";
}

window.addEventListener("hashchange", route);
// Leaving the page closes its live streams at once (a browser may keep the
// page, and with it the streams' connections, for a while); coming back to a
// kept page opens them again.
window.addEventListener("pagehide", () => { generation++; unmount(); });
window.addEventListener("pageshow", (e) => { if (e.persisted && signedIn) route(); });

// ---- sign-in ----

function showSignedIn() {
  signedIn = true;
  signinView.hidden = true;
  nav.hidden = false;
  signoutButton.hidden = false;
  page.hidden = false;
}

function showSignIn(message) {
  signedIn = false;
  generation++;
  unmount();
  clear(page);
  page.hidden = true;
  nav.hidden = true;
  signoutButton.hidden = true;
  signinView.hidden = false;
  const err = document.getElementById("signin-error");
  if (message) {
    err.textContent = message;
    err.hidden = false;
  } else {
    err.hidden = true;
  }
  document.getElementById("signin-token").focus();
  document.body.dataset.ready = "true";
}

setSignedOutHandler(() => {
  if (signedIn) showSignIn("Your sign-in has ended. Sign in again.");
});

document.getElementById("signin-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const form = e.currentTarget;
  const input = form.elements.namedItem("token");
  const button = form.querySelector("button[type=submit]");
  const err = document.getElementById("signin-error");
  err.hidden = true;
  button.disabled = true;
  try {
    await signIn(input.value);
    input.value = "";
    hideBanner();
    showSignedIn();
    if (!location.hash || location.hash === "#" || location.hash === "#/") location.hash = "#/sessions";
    await route();
  } catch (ex) {
    err.textContent = ex.status === 401 ? "That token is not the server's token." : (ex.message || String(ex));
    err.hidden = false;
    input.select();
  } finally {
    button.disabled = false;
  }
});

signoutButton.addEventListener("click", async () => {
  try { await signOut(); } catch (e) { showError(e); }
  showSignIn();
});

async function start() {
  let ok = false;
  try {
    ok = await checkSession();
  } catch (e) {
    showError(e);
  }
  if (ok) {
    showSignedIn();
    if (!location.hash) history.replaceState(null, "", "#/sessions");
    await route();
  } else {
    showSignIn();
  }
}

start();
