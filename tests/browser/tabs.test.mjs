// Many tabs of one browser on one server. A browser opens at most six
// HTTP/1.1 connections to a host and every open event stream holds one, so
// the interface keeps at most four streams across its tabs (api.js,
// STREAM_SLOTS): the other tabs poll, a hidden tab gives its stream up after
// a while and catches up when shown again. Without that, the seventh tab
// never loads.
//
// Usage: node tabs.test.mjs TETHER_BINARY (or TETHER_BIN=...; see harness.mjs)
import assert from "node:assert/strict";
import { after } from "node:test";

import { Harness, eventually, wait_ready } from "./harness.mjs";

const h = await Harness.start({ file: "tabs" });
after(() => h.stop());
const api = h.server;

const SLOTS = 4;  // api.js STREAM_SLOTS
const TABS = 8;   // the sessions list and seven sessions

// The state a tab's live indicator shows (live, polling, paused, …).
const state_of = (p) => p.evaluate(() => document.querySelector(".live-dot")?.dataset.state ?? "none");

// The text of the tab's transcript (read from node: a hidden tab runs no
// animation frames, so page.waitForFunction's default polling would stall).
const transcript_of = (p) =>
  p.$$eval("[data-test=transcript] [data-test=message]", (els) =>
    els.map((el) => `${el.dataset.role}:${el.querySelector("[data-test=message-text]")?.textContent.trim()}`));

async function sse_streams() {
  const r = await api.request("GET", "/metrics");
  const m = /^tether_sse_subscribers (\d+)/m.exec(r.text);
  assert.ok(m, "the metrics name the open streams");
  return Number(m[1]);
}

h.test("eight tabs all load and stay current while at most four hold a stream", async (ctx) => {
  const { page } = ctx;
  await ctx.sign_in();
  const errors = [];
  const tabs = [page];
  const sessions = [];
  for (let i = 1; i < TABS; i++) {
    const s = await api.new_session(`tab ${i}`);
    sessions.push(s);
    const p = await page.__context.newPage();
    p.on("pageerror", (e) => errors.push(`tab ${i}: ${e.message || e}`));
    await p.setViewport({ width: 1280, height: 900 });
    await p.goto(`${api.url}/ui/#/sessions/${s.id}`);
    await p.waitForSelector(`[data-test=session-view][data-session-id="${s.id}"]`);
    await wait_ready(p);
    tabs.push(p);
  }

  // Every tab follows its view; at most SLOTS of them by a stream.
  const states = await Promise.all(tabs.map(state_of));
  const streaming = states.filter((s) => s === "live").length;
  assert.ok(streaming >= 1 && streaming <= SLOTS, `live tabs: ${states}`);
  assert.ok(states.every((s) => ["live", "polling", "paused"].includes(s)), `states: ${states}`);
  assert.equal(states[TABS - 1], "polling", "the newest tab found every slot taken");
  await eventually(`at most ${SLOTS} streams open on the server`, async () => (await sse_streams()) <= SLOTS);

  // An answer reaches every tab, streamed or polled, once each.
  for (const [i, s] of sessions.entries()) {
    await api.call("POST", `/v1/sessions/${s.id}/inputs`, { text: `Reply with exactly: answer ${i + 1}` });
  }
  for (const [i, s] of sessions.entries()) {
    const p = tabs[i + 1];
    const want = [`user:Reply with exactly: answer ${i + 1}`, `assistant:answer ${i + 1}`];
    await eventually(`tab ${i + 1} shows its answer`, async () =>
      JSON.stringify(await transcript_of(p)) === JSON.stringify(want));
    await api.wait_idle(s.id);
  }

  // The newest tab is the one in front: the hidden ones give their streams
  // up, and it takes one.
  const front = tabs[TABS - 1];
  await front.bringToFront();
  await eventually("the tab in front streams", async () => (await state_of(front)) === "live");
  const hidden = tabs[1];
  await eventually("a hidden tab has given its stream up", async () => (await state_of(hidden)) === "paused");
  assert.ok((await sse_streams()) <= SLOTS);

  // While paused it misses an answer; shown again, it catches up, once.
  await api.call("POST", `/v1/sessions/${sessions[0].id}/inputs`, { text: "Reply with exactly: while hidden" });
  await api.wait_idle(sessions[0].id);
  await hidden.bringToFront();
  await eventually("the tab shown again catches up", async () =>
    JSON.stringify(await transcript_of(hidden)) === JSON.stringify([
      "user:Reply with exactly: answer 1", "assistant:answer 1",
      "user:Reply with exactly: while hidden", "assistant:while hidden",
    ]));
  await eventually("the tab shown again streams", async () => (await state_of(hidden)) === "live");

  assert.deepEqual(errors, [], "no tab raised an error");
  ctx.page = hidden;  // the harness's screenshot: of the tab in front (a hidden one draws nothing)
}, { timeout: 240_000 });
