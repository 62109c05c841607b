// How long the browser takes to show a long transcript and a full sessions
// list. Reported, not pass/fail: the figures are printed and written to
// perf.json in the results directory. What is asserted is only that the
// views render their data.
//
// The data is made honestly through the API: 500 inputs "Reply with
// exactly: R<i>" posted at once to one session (the scripted model answers
// each instantly; they run one after another), i.e. 1,000 messages, and 100
// sessions for the list.
//
// Usage: node perf.test.mjs TETHER_BINARY (or TETHER_BIN=...; see harness.mjs)
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before } from "node:test";

import { Harness, wait_ms } from "./harness.mjs";

const h = await Harness.start({ file: "perf" });
after(() => h.stop());
const api = h.server;
const pairs = 500;
const sessions = 100;
const rounds = 3;
let big;
const figures = {
  messages: pairs * 2, sessions, rounds, transcript_ms: [], session_list_ms: [],
  transcript_render_ms: [], transcript_painted_ms: [], session_list_render_ms: [], session_list_painted_ms: [],
};

// At most `n` requests in flight.
async function in_parallel(items, n, fn) {
  const queue = [...items];
  await Promise.all(Array.from({ length: n }, async () => {
    while (queue.length) await fn(queue.shift());
  }));
}

before(async () => {
  const t0 = Date.now();
  big = await api.new_session("a thousand messages");
  await in_parallel([...Array(pairs).keys()], 16, (i) =>
    api.call("POST", `/v1/sessions/${big.id}/inputs`, { text: `Reply with exactly: R${i}`, delivery: "queue" }));
  await api.wait_idle(big.id, 180_000);
  await in_parallel([...Array(sessions - 1).keys()], 16, (i) => api.new_session(`listed ${i}`));
  const msgs = await api.messages(big.id);
  assert.equal(msgs.length, pairs * 2, "1,000 messages");
  figures.setup_ms = Date.now() - t0;
});

// ms from navigation start to body[data-ready=true] (page_probe in the harness).
async function ready_ms(page) {
  await page.waitForFunction(() => window.__ready_at !== null && window.__ready_at !== undefined, { timeout: wait_ms * 2, polling: 10 });
  return page.evaluate(() => window.__ready_at);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// The page's own measures (ui.js measureRender): from its data having
// arrived to the DOM built (render) and to the next frame (painted).
async function render_ms(page, name) {
  await page.waitForFunction((n) => performance.getEntriesByName(`${n}:painted`).length > 0, { timeout: wait_ms, polling: 10 }, name);
  return page.evaluate((n) => ({
    render: Math.round(performance.getEntriesByName(`${n}:render`)[0].duration),
    painted: Math.round(performance.getEntriesByName(`${n}:painted`)[0].duration),
  }), name);
}

h.test("a session of 1,000 messages and a list of 100 sessions render", async ({ page, sign_in }) => {
  await sign_in();
  for (let r = 0; r < rounds; ++r) {
    // A new document each time (not a hash change): navigation start is the zero.
    await page.goto("about:blank");
    await page.goto(`${api.url}/ui/#/sessions/${big.id}`);
    const t = await ready_ms(page);
    await page.waitForSelector(`[data-test=session-view][data-session-id="${big.id}"]`);
    const shown = await page.$$eval("[data-test=transcript] [data-test=message]", (els) => ({
      count: els.length,
      last: els.at(-1)?.querySelector("[data-test=message-text]")?.textContent.trim(),
    }));
    const last = (await api.messages(big.id)).at(-1).text;
    assert.equal(shown.last, last, "the newest message is rendered at the end");
    figures.transcript_ms.push(Math.round(t));
    figures.transcript_dom_messages = shown.count;
    const tr = await render_ms(page, "tether:session");
    figures.transcript_render_ms.push(tr.render);
    figures.transcript_painted_ms.push(tr.painted);

    await page.goto("about:blank");
    await page.goto(`${api.url}/ui/#/sessions`);
    const l = await ready_ms(page);
    const rows = await page.$$eval("[data-test=session-list] [data-test=session-row]", (els) => els.length);
    assert.ok(rows >= Math.min(sessions, 100), `the list shows the sessions (${rows})`);
    figures.session_list_ms.push(Math.round(l));
    figures.session_list_rows = rows;
    const lr = await render_ms(page, "tether:sessions");
    figures.session_list_render_ms.push(lr.render);
    figures.session_list_painted_ms.push(lr.painted);
  }
  figures.transcript_median_ms = median(figures.transcript_ms);
  figures.session_list_median_ms = median(figures.session_list_ms);
  figures.transcript_painted_median_ms = median(figures.transcript_painted_ms);
  figures.session_list_painted_median_ms = median(figures.session_list_painted_ms);
  await page.goto("about:blank");
  await page.goto(`${api.url}/ui/#/sessions/${big.id}`);
  await ready_ms(page);
  const file = path.join(h.results, "perf.json");
  fs.writeFileSync(file, JSON.stringify(figures, null, 2) + "\n");
  console.log(
    `render: transcript of ${figures.messages} messages ${figures.transcript_ms.join(" / ")} ms ` +
      `(median ${figures.transcript_median_ms}, ${figures.transcript_dom_messages} in the DOM); ` +
      `sessions list of ${figures.session_list_rows} rows ${figures.session_list_ms.join(" / ")} ms ` +
      `(median ${figures.session_list_median_ms}); navigation to body[data-ready=true]. From the data's arrival to the ` +
      `painted frame: transcript ${figures.transcript_painted_ms.join(" / ")} ms, list ` +
      `${figures.session_list_painted_ms.join(" / ")} ms; written to ${file}`,
  );
});
