// sessions.js: the sessions list (#/sessions). Every session with its
// status, profile and runtime, title, last activity, tokens and cost;
// search and a status filter; live updates from the global event stream
// (a debounced refetch); a form to start a new session from a profile.

import { get, post, LiveStream, debounce } from "./api.js";
import { h, clear, act, fmtUsageTokens, fmtCost, timeEl, statusBadge, showError, measureRender } from "./ui.js";

// The profiles a session may name, or just "default" when the server has no list.
export async function loadProfiles() {
  try {
    const r = await get("/v1/profiles");
    return Array.isArray(r.profiles) ? r.profiles : [];
  } catch (e) {
    if (e.status === 404) return [{ name: "default", runtime: "", model: "", available: true, problem: "" }];
    throw e;
  }
}

export async function renderSessions(root) {
  let sessions = [];
  let profiles = [];
  const profileRuntime = new Map();

  const search = h("input", {
    type: "search", "data-test": "session-search", id: "session-search", placeholder: "Search title, id or profile",
    autocomplete: "off",
  });
  const filter = h("select", { "data-test": "status-filter", id: "status-filter" },
    ["all", "idle", "running", "waiting"].map((s) => h("option", { value: s }, s === "all" ? "All statuses" : s)));
  const count = h("span", { class: "muted count", "aria-live": "polite" });
  const list = h("ul", { class: "session-list", "data-test": "session-list", "aria-label": "Sessions" });
  const live = h("span", { class: "live-dot", title: "Live updates", "data-state": "connecting" }, "connecting");

  const newButton = h("button", { type: "button", class: "primary", "data-test": "new-session", "aria-expanded": "false" },
    "New session");
  const profileSelect = h("select", { name: "profile", id: "new-profile" });
  const titleInput = h("input", { name: "title", id: "new-title", type: "text", placeholder: "Optional", autocomplete: "off" });
  const formError = h("p", { class: "form-error", role: "alert", hidden: true });
  const form = h("form", { class: "card new-session", "data-test": "new-session-form", hidden: true },
    h("h2", null, "New session"),
    h("div", { class: "field-row" },
      h("div", { class: "field" }, h("label", { for: "new-profile" }, "Profile"), profileSelect),
      h("div", { class: "field grow" }, h("label", { for: "new-title" }, "Title"), titleInput)),
    formError,
    h("div", { class: "actions" },
      h("button", { type: "submit", class: "primary" }, "Create session"),
      h("button", { type: "button", class: "ghost", onclick: () => toggleForm(false) }, "Cancel")));

  function toggleForm(show) {
    form.hidden = !show;
    newButton.setAttribute("aria-expanded", String(show));
    if (show) {
      fillProfiles();
      titleInput.focus();
    }
  }
  newButton.addEventListener("click", () => toggleForm(form.hidden));

  function fillProfiles() {
    clear(profileSelect);
    const usable = profiles.length ? profiles : [{ name: "default", available: true }];
    for (const p of usable) {
      const label = [p.name, p.runtime && `(${p.runtime})`, p.available === false && "unavailable"].filter(Boolean).join(" ");
      profileSelect.appendChild(h("option", { value: p.name, disabled: p.available === false, title: p.problem || undefined },
        label));
    }
    const firstOk = usable.find((p) => p.available !== false);
    if (firstOk) profileSelect.value = firstOk.name;
  }

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    formError.hidden = true;
    const button = form.querySelector("button[type=submit]");
    act(button, async () => {
      const body = { title: titleInput.value.trim() };
      if (profileSelect.value && profileSelect.value !== "default") body.profile = profileSelect.value;
      try {
        const r = await post("/v1/sessions", body);
        location.hash = `#/sessions/${encodeURIComponent(r.session.id)}`;
      } catch (ex) {
        formError.textContent = ex.message;
        formError.hidden = false;
        throw ex;
      }
    });
  });

  root.appendChild(h("div", { class: "view-head" },
    h("h1", null, "Sessions"), h("div", { class: "head-actions" }, live, newButton)));
  root.appendChild(form);
  root.appendChild(h("div", { class: "toolbar" },
    h("label", { for: "session-search", class: "sr-only" }, "Search sessions"), search,
    h("label", { for: "status-filter", class: "sr-only" }, "Status"), filter, count));
  root.appendChild(list);

  function matches(s, q, status) {
    if (status !== "all" && s.status !== status) return false;
    if (!q) return true;
    const hay = `${s.title} ${s.id} ${s.profile} ${s.runtime}`.toLowerCase();
    return q.split(/\s+/).every((w) => hay.includes(w));
  }

  function row(s) {
    const runtime = s.runtime || profileRuntime.get(s.profile) || "";
    return h("li", { class: "session-row", "data-test": "session-row", "data-session-id": s.id, "data-status": s.status },
      h("div", { class: "row-main" },
        statusBadge(s.status, "session-status"),
        h("a", { class: "row-title", href: `#/sessions/${encodeURIComponent(s.id)}`, "data-test": "session-title" },
          s.title || "Untitled session"),
        s.pending_inputs ? h("span", { class: "chip", title: "Inputs waiting" }, `${s.pending_inputs} queued`) : null),
      h("div", { class: "row-meta" },
        h("span", { class: "mono small muted", title: "Session id" }, s.id),
        h("span", { "data-test": "session-profile", title: "Profile" }, s.profile),
        h("span", { "data-test": "session-runtime", title: "Runtime", class: "muted" }, runtime || "no runs yet"),
        h("span", { "data-test": "session-activity", title: "Last activity" }, timeEl(s.updated_at)),
        h("span", { "data-test": "session-tokens", title: "Tokens" }, fmtUsageTokens(s.usage)),
        h("span", { "data-test": "session-cost", title: "Cost" }, fmtCost(s.usage))));
  }

  function draw() {
    const q = search.value.trim().toLowerCase();
    const status = filter.value;
    const shown = sessions.filter((s) => matches(s, q, status));
    const frag = document.createDocumentFragment();
    for (const s of shown) frag.appendChild(row(s));
    clear(list);
    if (!shown.length) {
      list.appendChild(h("li", { class: "empty" },
        sessions.length ? "No session matches." : "No sessions yet. Start one with “New session”."));
    }
    list.appendChild(frag);
    count.textContent = shown.length === sessions.length ? `${sessions.length} sessions` : `${shown.length} of ${sessions.length}`;
  }

  async function load() {
    const r = await get("/v1/sessions?limit=100");
    sessions = Array.isArray(r.sessions) ? r.sessions : [];
    draw();
  }

  search.addEventListener("input", draw);
  filter.addEventListener("change", draw);

  const [, profs] = await Promise.all([load(), loadProfiles().catch((e) => { showError(e); return []; })]);
  const readAt = performance.now();
  profiles = profs;
  for (const p of profiles) profileRuntime.set(p.name, p.runtime || "");
  draw();
  measureRender("tether:sessions", readAt);

  const refresh = debounce(() => load().catch(showError), 300);
  const stream = new LiveStream(() => "/v1/events", {
    onEvent: refresh,
    onState: (st) => { live.dataset.state = st; live.textContent = st; },
    onOpen: (again) => { if (again) refresh(); },
    poll: load,
  });
  const ticker = setInterval(draw, 30000);
  return () => { stream.close(); clearInterval(ticker); };
}

