// misc.js: the qualification page (#/qualification: the campaign history of
// GET /v1/qualification and the `tether e2e` dashboard in a sandboxed
// iframe) and the health page (#/health: node, version, store, runtimes
// from GET /v1/profiles and a few live figures from /metrics, refreshed
// every few seconds).

import { get, enc } from "./api.js";
import { h, clear, fmtTokens, fmtDuration, fmtTime, statusBadge, emptyNote, facts, showError } from "./ui.js";
import { loadProfiles } from "./sessions.js";

// ---- qualification ----

function campaignCost(c) {
  if (typeof c.costUsd === "number") return c.costUsd < 0.01 ? `$${c.costUsd.toFixed(4)}` : `$${c.costUsd.toFixed(2)}`;
  return "cost unavailable";
}

export async function renderQualification(root) {
  const sec = h("section", { class: "qualification", "data-test": "qualification" }, h("div", { class: "view-head" }, h("h1", null, "Qualification")));
  root.appendChild(sec);
  let q;
  try {
    q = await get("/v1/qualification");
  } catch (e) {
    if (e.status === 404) {
      sec.appendChild(h("div", { class: "card notice-card", "data-test": "qualification-unconfigured" },
        h("p", null, "This server does not offer qualification results.")));
      return () => {};
    }
    throw e;
  }
  if (!q.configured) {
    sec.appendChild(h("div", { class: "card notice-card", "data-test": "qualification-unconfigured" },
      h("h2", null, "Qualification is not configured"),
      h("p", null, "This server has no qualification results folder. Run ", h("code", null, "tether e2e"),
        " and point the server's configuration at its results folder to see the campaigns here.")));
    return () => {};
  }
  const campaigns = q.history && Array.isArray(q.history.campaigns) ? [...q.history.campaigns].reverse() : [];
  if (!campaigns.length) {
    sec.appendChild(h("div", { class: "card notice-card", "data-test": "qualification-empty" },
      h("p", null, "The results folder holds no campaign yet.")));
    return () => {};
  }
  const latest = q.history.latest || campaigns[0].id;
  const latestGreen = q.history.latestGreen || null;
  // No allow-scripts (the page has none, and its CSP forbids them);
  // allow-same-origin so its links to campaigns and artifacts carry the
  // sign-in cookie.
  const frame = h("iframe", {
    class: "dashboard-frame", "data-test": "dashboard-frame", sandbox: "allow-same-origin", title: "Qualification dashboard",
    src: "/v1/qualification/dashboard", referrerpolicy: "no-referrer",
  });
  const frameLabel = h("p", { class: "muted small" }, `Dashboard of the latest campaign (${latest})`);
  const list = h("ul", { class: "campaigns", "data-test": "campaign-list", "aria-label": "Campaigns" });
  const buttons = [];
  for (const c of campaigns) {
    const t = c.totals || {};
    const show = h("button", { type: "button", class: "ghost small", "aria-pressed": String(c.id === latest) }, "Show");
    buttons.push(show);
    show.addEventListener("click", () => {
      frame.src = `/v1/qualification/dashboard?campaign=${enc(c.id)}`;
      frameLabel.textContent = `Dashboard of campaign ${c.id}`;
      for (const b of buttons) b.setAttribute("aria-pressed", String(b === show));
    });
    list.appendChild(h("li", { class: "campaign", "data-test": "campaign", "data-campaign-id": c.id },
      h("div", { class: "row-main" },
        statusBadge(c.status || "unknown"),
        h("span", { class: "mono" }, c.id),
        c.id === latestGreen ? h("span", { class: "chip" }, "latest green") : null),
      h("div", { class: "row-meta small" },
        h("span", null, c.startedAt ? fmtTime(Date.parse(c.startedAt)) : "–"),
        h("span", null, `${t.passed ?? "?"} of ${t.selected ?? "?"} passed`),
        t.failed ? h("span", null, `${t.failed} failed`) : null,
        t.incomplete ? h("span", null, `${t.incomplete} incomplete`) : null,
        h("span", null, `${fmtTokens((c.inputTokens || 0) + (c.outputTokens || 0))} tokens`),
        h("span", null, campaignCost(c)),
        c.agentTimeMs ? h("span", null, `agent time ${fmtDuration(c.agentTimeMs)}`) : null,
        show)));
  }
  sec.appendChild(h("div", { class: "qual-layout" },
    h("section", { class: "card" }, h("h2", null, "Campaigns"), list),
    h("section", { class: "card frame-card" }, h("h2", null, "Dashboard"), frameLabel, frame)));
  return () => {};
}

// ---- health ----

// Prometheus text → Map(name → [{labels, value}]).
export function parseMetrics(text) {
  const out = new Map();
  for (const line of String(text).split("\n")) {
    if (!line || line[0] === "#") continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const v = Number(m[3]);
    if (!out.has(m[1])) out.set(m[1], []);
    out.get(m[1]).push({ labels: m[2] || "", value: v });
  }
  return out;
}

function metric(map, name) {
  const rows = map.get(name);
  if (!rows) return null;
  return rows.reduce((a, r) => a + (Number.isFinite(r.value) ? r.value : 0), 0);
}

function bytes(n) {
  if (n === null) return "–";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

const FIGURES = [
  ["Open connections", "tether_http_connections", String, "metric-connections"],
  ["Active sessions", "tether_active_sessions", String, "metric-active-sessions"],
  ["Stream subscribers", "tether_sse_subscribers", String, "metric-sse-subscribers"],
  ["Queued for slow readers", "tether_sse_queued_bytes", bytes, "metric-sse-queued"],
  ["Store tail buffers", "tether_tail_buffered_bytes", bytes, "metric-tail-buffered"],
  ["Runs finished", "tether_executions_total", String, "metric-executions"],
  ["HTTP requests", "tether_http_requests_total", String, "metric-requests"],
  ["Refused connections", "tether_http_connections_refused_total", String, "metric-refused"],
];

export async function renderHealth(root) {
  const sec = h("section", { class: "health", "data-test": "health" },
    h("div", { class: "view-head" }, h("h1", null, "Health")));
  root.appendChild(sec);
  const nodeEl = h("span", { "data-test": "health-node", class: "mono" }, "–");
  const versionEl = h("span", { "data-test": "health-version" }, "–");
  const statusEl = h("span", { "data-test": "health-status" }, "–");
  const storeEl = h("span", { "data-test": "health-store" }, "–");
  const updated = h("p", { class: "muted small", "aria-live": "off" });
  const figures = h("dl", { class: "figures", "data-test": "health-metrics" });
  const runtimes = h("tbody");
  const figureEls = new Map();
  for (const [label, name, , test] of FIGURES) {
    const dd = h("dd", { "data-test": test, "data-metric": name }, "–");
    figureEls.set(name, dd);
    figures.appendChild(h("div", { class: "figure" }, h("dt", null, label), dd));
  }
  const outcomes = h("p", { class: "muted small", "data-test": "metric-outcomes" });

  sec.appendChild(h("div", { class: "health-layout" },
    h("section", { class: "card" }, h("h2", null, "Node"),
      facts([["Node", nodeEl], ["Version", versionEl], ["Status", statusEl], ["Store", storeEl]])),
    h("section", { class: "card" }, h("h2", null, "Live figures"), figures, outcomes, updated),
    h("section", { class: "card wide" }, h("h2", null, "Runtimes"),
      h("div", { class: "table-wrap" }, h("table", { class: "runtimes", "data-test": "health-runtimes" },
        h("thead", null, h("tr", null, h("th", { scope: "col" }, "Profile"), h("th", { scope: "col" }, "Runtime"),
          h("th", { scope: "col" }, "Model"), h("th", { scope: "col" }, "Available"))),
        runtimes)))));

  async function refresh() {
    const [health, text] = await Promise.all([get("/v1/health"), get("/metrics", { text: true })]);
    nodeEl.textContent = health.node || "–";
    versionEl.textContent = health.version || "–";
    statusEl.textContent = health.status || "–";
    const m = parseMetrics(text);
    const degraded = metric(m, "tether_store_degraded");
    const failures = metric(m, "tether_store_write_failures_total");
    storeEl.textContent = degraded === null ? "unknown"
      : degraded > 0 ? `degraded${failures ? ` (${failures} write failures)` : ""}`
        : `ok${failures ? ` (${failures} write failures so far)` : ""}`;
    storeEl.dataset.state = degraded > 0 ? "degraded" : "ok";
    for (const [, name, fmt] of FIGURES) {
      const v = metric(m, name);
      figureEls.get(name).textContent = v === null ? "–" : fmt(v);
    }
    const byOutcome = (m.get("tether_executions_total") || [])
      .map((r) => `${(/outcome="([^"]*)"/.exec(r.labels) || [])[1] || "?"} ${r.value}`);
    outcomes.textContent = byOutcome.length ? `Runs by outcome: ${byOutcome.join(", ")}` : "";
    updated.textContent = `Updated ${new Date().toLocaleTimeString()}`;
  }

  async function loadRuntimes() {
    const profiles = await loadProfiles();
    clear(runtimes);
    for (const p of profiles) {
      runtimes.appendChild(h("tr", { "data-test": "runtime", "data-profile": p.name },
        h("td", null, p.name), h("td", null, p.runtime || "–"), h("td", { class: "wrap" }, p.model || "–"),
        h("td", null, p.available === false ? h("span", { class: "bad" }, `no: ${p.problem || "unavailable"}`) : "yes")));
    }
    if (!profiles.length) runtimes.appendChild(h("tr", null, h("td", { colspan: "4" }, emptyNote("No profiles."))));
  }

  await Promise.all([refresh(), loadRuntimes().catch(showError)]);
  let failing = false;
  const timer = setInterval(() => {
    refresh().then(() => { failing = false; }).catch((e) => { if (!failing) showError(e); failing = true; });
  }, 3000);
  return () => clearInterval(timer);
}
