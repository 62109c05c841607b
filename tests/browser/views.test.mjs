// The qualification view (a server with a results folder of `tether e2e`
// shows the campaign history and the dashboard in a sandboxed frame; one
// without says so) and the health view (node name and version).
//
// Usage: node views.test.mjs TETHER_BINARY (or TETHER_BIN=...; see harness.mjs)
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after } from "node:test";
import { promisify } from "node:util";

import { Harness, go, repo_root, text_of } from "./harness.mjs";

const h = await Harness.start({ file: "views" });
after(() => h.stop());

// A real results folder: one quick cell of the qualification matrix.
async function make_results() {
  const out = path.join(h.dir, "e2e-results");
  const tmp = path.join(h.dir, "e2e-tmp");
  fs.mkdirSync(tmp, { recursive: true });
  const env = { ...process.env, TMPDIR: tmp };
  delete env.TETHER_CONFIG;
  delete env.TETHER_TOKEN;
  delete env.TETHER_SERVER;
  const args = ["e2e", "run", "--suites", path.join(repo_root, "suites"), "--suite", "core-compatibility",
    "--profile", "native-openai-chat", "--case", "basic-reply", "--out", out, "--jobs", "1"];
  try {
    await promisify(execFile)(h.bin, args, { env, timeout: 120_000 });
  } catch (e) {
    throw new Error(`tether e2e run failed: ${e.message}\n${e.stdout}\n${e.stderr}`);
  }
  return out;
}

h.test("with a results folder the qualification view shows the history and the dashboard", async ({ page, sign_in }) => {
  const results = await make_results();
  const history = JSON.parse(fs.readFileSync(path.join(results, "history.json"), "utf8"));
  const campaign = history.latest;
  assert.ok(campaign, "e2e wrote a campaign");
  const server = await h.start_server({ args: ["--results", results], name: "with-results" });
  const q = await server.call("GET", "/v1/qualification");
  assert.equal(q.configured, true);
  assert.equal(q.history.latest, campaign);

  await sign_in({ server, hash: "#/qualification" });
  await page.waitForSelector("[data-test=qualification]", { visible: true });
  await page.waitForFunction((id) => document.querySelector("[data-test=qualification]").textContent.includes(id), {}, campaign);
  const frame_el = await page.waitForSelector("[data-test=qualification] iframe[data-test=dashboard-frame]", { visible: true });
  const attrs = await frame_el.evaluate((f) => ({ sandbox: f.getAttribute("sandbox"), src: f.getAttribute("src") }));
  assert.notEqual(attrs.sandbox, null, "the frame is sandboxed");
  assert.ok(!/allow-scripts/.test(attrs.sandbox), `no scripts in the frame: ${attrs.sandbox}`);
  assert.match(attrs.src, /^\/v1\/qualification\/dashboard/);
  const frame = await frame_el.contentFrame();
  await frame.waitForFunction((id) => document.body && document.body.textContent.includes(id), { timeout: 30_000 }, campaign);
  assert.ok((await frame.evaluate(() => document.body.textContent)).includes("core-compatibility"));
});

h.test("without a results folder the qualification view says it is not configured", async ({ page, sign_in }) => {
  const q = await h.server.call("GET", "/v1/qualification");
  assert.equal(q.configured, false);
  assert.equal((await h.server.request("GET", "/v1/qualification/dashboard")).status, 404);
  await sign_in({ hash: "#/qualification" });
  await page.waitForSelector("[data-test=qualification]", { visible: true });
  await page.waitForFunction(() => /not configured/i.test(document.querySelector("[data-test=qualification]").textContent));
  assert.equal(await page.$("[data-test=qualification] iframe[data-test=dashboard-frame]"), null);
});

h.test("the health view shows the node name and the version", async ({ page, sign_in }) => {
  const health = await h.server.call("GET", "/v1/health");
  await sign_in();
  await page.click("a[data-test=nav-health]");
  await page.waitForSelector("[data-test=health] [data-test=health-node]", { visible: true });
  await page.waitForFunction(() => location.hash === "#/health");
  await page.waitForFunction((n) => document.querySelector("[data-test=health-node]").textContent.trim() === n, {}, health.node);
  assert.equal(await text_of(page, "[data-test=health-node]"), health.node);
  assert.ok((await text_of(page, "[data-test=health-version]")).includes(health.version), "the version shows");
  // The runtimes the profiles need, from /v1/profiles.
  const { profiles } = await h.server.call("GET", "/v1/profiles");
  const shown = await text_of(page, "[data-test=health]");
  for (const p of profiles) assert.ok(shown.includes(p.name), `profile ${p.name} listed`);
});

h.test("the interface works from the keyboard alone", async ({ page }) => {
  const s = await h.server.new_session("reached by keyboard");
  await page.goto(`${h.server.url}/ui/`);
  await page.waitForSelector("form[data-test=signin] input[name=token]", { visible: true });
  await page.focus("form[data-test=signin] input[name=token]");
  await page.keyboard.type(h.token);
  await page.keyboard.press("Enter");
  await page.waitForSelector(`[data-test=session-row][data-session-id="${s.id}"]`, { visible: true });
  // Tab until the session's link has the focus, then Enter opens it.
  let reached = false;
  for (let i = 0; i < 40 && !reached; ++i) {
    await page.keyboard.press("Tab");
    reached = await page.evaluate((id) => {
      const a = document.activeElement;
      return !!a && !!a.closest(`[data-test=session-row][data-session-id="${id}"]`) && a.matches("a, button");
    }, s.id);
  }
  assert.ok(reached, "Tab reaches the session's row");
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(outline, "none", "the focused element shows its focus");
  await page.keyboard.press("Enter");
  await page.waitForSelector(`[data-test=session-view][data-session-id="${s.id}"]`, { visible: true });
  // The composer takes the focus by Tab too, and Enter sends.
  let composer = false;
  for (let i = 0; i < 40 && !composer; ++i) {
    await page.keyboard.press("Tab");
    composer = await page.evaluate(() => document.activeElement?.matches("form[data-test=composer] textarea[name=text]"));
  }
  assert.ok(composer, "Tab reaches the composer");
  await page.keyboard.type("Reply with exactly: typed without a mouse");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => [...document.querySelectorAll("[data-test=message][data-role=assistant]:not([data-streaming=true]) [data-test=message-text]")]
    .some((e) => e.textContent.trim() === "typed without a mouse"), { timeout: 30_000 });
});
