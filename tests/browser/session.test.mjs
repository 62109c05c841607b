// A session driven from the browser: created from the UI, streamed answers,
// stop, questions, steering, reset, fork, a reload mid-turn, agent text that tries
// to inject markup, and the view at phone width and in the dark theme. The
// built-in scripted model answers (its grammar: "Reply with exactly: X",
// "Stream slowly: MS", "Ask: Q | A | B", "Wait for file F").
//
// Usage: node session.test.mjs TETHER_BINARY (or TETHER_BIN=...; see harness.mjs)
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after } from "node:test";

import { Harness, eventually, open_session, send, text_of, transcript, wait_assistant_text, wait_ms } from "./harness.mjs";

const h = await Harness.start({ file: "session" });
after(() => h.stop());
const api = h.server;

// A reply long enough to stream for a while at 4 characters a delta.
const long_reply = (tag, words = 40) => `${tag} ` + Array.from({ length: words }, (_, i) => `word${i}`).join(" ");

async function signed_in_session(ctx, title) {
  await ctx.sign_in();
  const s = await api.new_session(title);
  await open_session(ctx.page, s.id);
  return s;
}

const streaming_selector = "[data-test=transcript] [data-test=message][data-role=assistant][data-streaming=true]";

h.test("a session created from the UI opens, and a streamed answer becomes the durable message", async ({ page, sign_in }) => {
  await sign_in();
  await page.click("button[data-test=new-session]");
  await page.waitForSelector("form[data-test=new-session-form]", { visible: true });
  const profiles = await page.$$eval("form[data-test=new-session-form] select[name=profile] option", (os) => os.map((o) => o.value));
  assert.ok(profiles.includes("default"), `the profile choice offers default: ${profiles}`);
  await page.select("form[data-test=new-session-form] select[name=profile]", "default");
  await page.type("form[data-test=new-session-form] input[name=title]", "made in the browser");
  await page.click("form[data-test=new-session-form] [type=submit]");
  await page.waitForFunction(() => /^#\/sessions\/ses_/.test(location.hash));
  const id = decodeURIComponent(new URL(page.url()).hash.slice("#/sessions/".length));
  await page.waitForSelector(`[data-test=session-view][data-session-id="${id}"]`, { visible: true });
  const s = await api.session(id);
  assert.equal(s.title, "made in the browser");
  assert.equal(s.profile, "default");

  // Typed as a person would: Shift+Enter for the newline, Enter sends.
  const want = long_reply("STREAMED", 60);
  await page.focus("form[data-test=composer] textarea[name=text]");
  await page.keyboard.type("Stream slowly: 40");
  await page.keyboard.down("Shift");
  await page.keyboard.press("Enter");
  await page.keyboard.up("Shift");
  await page.keyboard.type(`Reply with exactly: ${want}`);
  await page.keyboard.press("Enter");

  // The streaming element shows up while the durable answer does not exist yet.
  await page.waitForSelector(streaming_selector, { visible: true });
  const during = await transcript(page);
  assert.ok(!during.some((m) => m.role === "assistant" && !m.streaming && m.text === want), "the final text is not there yet");
  await page.waitForFunction((sel) => (document.querySelector(sel)?.textContent ?? "").includes("STREAMED"), { polling: 20 }, streaming_selector);
  assert.equal(await text_of(page, "[data-test=session-state]"), "running");

  await wait_assistant_text(page, want);
  await page.waitForFunction((sel) => !document.querySelector(sel), {}, streaming_selector);
  const inputs = await api.inputs(id);
  assert.equal(inputs.length, 1);
  assert.equal(inputs[0].text, `Stream slowly: 40\nReply with exactly: ${want}`, "Shift+Enter made a newline, Enter sent");
  await api.wait_idle(id);
  assert.deepEqual(await api.assistant_texts(id), [want]);
  await page.waitForFunction(() => document.querySelector("[data-test=session-state]")?.textContent.trim() === "idle");
  await page.waitForSelector("[data-test=run] [data-test=run-outcome]");
  assert.match(await text_of(page, "[data-test=run] [data-test=run-outcome]"), /succeeded/);
});

h.test("the stop button interrupts a slow turn", async (ctx) => {
  const { page } = ctx;
  const s = await signed_in_session(ctx, "stop me");
  await send(page, `Stream slowly: 150\nReply with exactly: ${long_reply("NEVER-FINISHED", 200)}`);
  await page.waitForSelector(streaming_selector, { visible: true });
  await page.waitForFunction(() => {
    const b = document.querySelector("button[data-test=stop]");
    return b && !b.disabled;
  });
  await page.click("button[data-test=stop]");
  const x = await eventually("the turn finishes", async () => {
    const xs = await api.executions(s.id);
    return xs.length === 1 && xs[0].status === "finished" && xs[0];
  });
  assert.equal(x.outcome, "interrupted");
  await page.waitForFunction(() => document.querySelector("[data-test=session-state]")?.textContent.trim() === "idle");
  await page.waitForFunction(() =>
    [...document.querySelectorAll("[data-test=run-outcome]")].some((e) => /interrupted/.test(e.textContent)),
  );
  await page.waitForFunction(() => document.querySelector("button[data-test=stop]")?.disabled !== false);
  assert.ok(!(await api.assistant_texts(s.id)).some((t) => t.includes("word199")), "the full answer never came");
});

h.test("a question answered by clicking an option: the agent uses the answer", async (ctx) => {
  const { page } = ctx;
  const s = await signed_in_session(ctx, "question");
  await send(page, "Ask: Which colour shall the bike be? | Crimson | Teal\nReply with the answer.");
  await page.waitForSelector("form[data-test=question]", { visible: true });
  await page.waitForFunction(() => document.querySelector("[data-test=session-state]")?.textContent.trim() === "waiting");
  const [pending] = (await api.call("GET", `/v1/sessions/${s.id}/interactions`)).interactions.filter((i) => i.status === "pending");
  assert.ok(pending, "a pending question");
  assert.equal(await page.$eval("form[data-test=question]", (f) => f.getAttribute("data-interaction-id")), pending.id);
  assert.match(await text_of(page, "form[data-test=question]"), /Which colour shall the bike be\?/);
  await ctx.shot("asked");
  await page.click('form[data-test=question] input[value="Teal"]');
  await page.click("form[data-test=question] button[data-test=answer]");
  await wait_assistant_text(page, "Teal");
  const answered = (await api.call("GET", `/v1/sessions/${s.id}/interactions`)).interactions.find((i) => i.id === pending.id);
  assert.equal(answered.status, "answered");
  await api.wait_idle(s.id);
  assert.ok((await api.assistant_texts(s.id)).at(-1).includes("Teal"));
  // The answered question shows its answer and asks no more.
  await page.waitForFunction(() =>
    !document.querySelector("form[data-test=question] button[data-test=answer]:not([disabled])") &&
    document.querySelector("[data-test=transcript]").textContent.includes("Teal"),
  );
});

h.test("a message sent while a turn runs is steered into that turn", async (ctx) => {
  const { page } = ctx;
  const s = await signed_in_session(ctx, "steer");
  await send(page, "Wait for file go\nReply with exactly: FIRST");
  const running = await eventually("the turn runs", async () => (await api.executions(s.id)).find((x) => x.status === "running"));
  await page.waitForFunction(() => document.querySelector("[data-test=session-state]")?.textContent.trim() === "running");
  await send(page, "Reply with exactly: STEERED");
  const steered = await eventually("the follow-up is recorded", async () => (await api.inputs(s.id)).find((i) => i.text === "Reply with exactly: STEERED"));
  assert.equal(steered.delivery, "steer", "sending during a turn steers by default");
  fs.writeFileSync(path.join(s.workspace, "go"), "");
  const promoted = await eventually("the follow-up is promoted", async () => {
    const i = (await api.inputs(s.id)).find((x) => x.id === steered.id);
    return i.execution && i.promoted_seq !== null && i;
  });
  assert.equal(promoted.execution, running.id, "the follow-up ran in the turn that was running");
  await wait_assistant_text(page, "STEERED");
  await api.wait_idle(s.id);
  assert.equal((await api.executions(s.id)).length, 1, "one execution for both inputs");
});

h.test("reset starts a new generation, keeps the history and shows a notice", async (ctx) => {
  const { page } = ctx;
  const s = await signed_in_session(ctx, "reset");
  await send(page, "Remember the phrase: MARMALADE-SKY\nReply with exactly: REMEMBERED");
  await wait_assistant_text(page, "REMEMBERED");
  await api.wait_idle(s.id);
  const before = (await transcript(page)).filter((m) => !m.streaming).length;
  await page.click("button[data-test=reset]");
  await page.waitForSelector("button[data-test=reset-confirm]", { visible: true });
  await page.click("button[data-test=reset-confirm]");
  await eventually("the generation moves on", async () => (await api.session(s.id)).generation === 1);
  await page.waitForSelector("[data-test=transcript] [data-test=message][data-role=synthetic], [data-test=transcript] [data-test=notice], [data-test=session-view] [data-test=notice]", { visible: true });
  const after_reset = await transcript(page);
  assert.ok(after_reset.some((m) => m.role === "assistant" && m.text === "REMEMBERED"), "the old answer still shows");
  assert.ok(after_reset.filter((m) => !m.streaming && m.role !== "synthetic").length >= before, "history kept");
  // The new context does not know the phrase.
  await send(page, "Recall the phrase.");
  await wait_assistant_text(page, "NO_PHRASE");
  const msgs = await api.messages(s.id);
  assert.equal(msgs.filter((m) => m.role === "assistant").at(-1).generation, 1);
});

h.test("Fork opens the fork at the last run; Fork here on a run forks at its end", async (ctx) => {
  const { page } = ctx;
  const s = await signed_in_session(ctx, "to fork");
  assert.ok(await page.$eval("button[data-test=fork]", (b) => b.disabled), "no run yet: nothing to fork");
  await send(page, "Remember the phrase: FIRST-KITE");
  await wait_assistant_text(page, "Noted.");
  await api.wait_idle(s.id);
  await send(page, "Remember the phrase: SECOND-KITE");
  await eventually("two runs listed", async () => (await page.$$("[data-test=run]")).length === 2);
  await api.wait_idle(s.id);

  // The runs list is newest first: its last entry is the first run.
  await page.waitForFunction(() => document.querySelectorAll("[data-test=fork-run]:not([hidden])").length === 2);
  const buttons = await page.$$("[data-test=fork-run]");
  await buttons[1].click();
  await page.waitForFunction((from) => /^#\/sessions\/ses_/.test(location.hash) && !location.hash.includes(from), {}, s.id);
  const fork = decodeURIComponent(new URL(page.url()).hash.slice("#/sessions/".length));
  await page.waitForSelector(`[data-test=session-view][data-session-id="${fork}"]`, { visible: true });
  await page.waitForSelector("[data-test=notice][data-kind=fork] [data-test=forked-from-link]", { visible: true });
  const view = await api.session(fork);
  assert.equal(view.forked_from.session, s.id);
  await send(page, "Recall the phrase.");
  await wait_assistant_text(page, "FIRST-KITE");

  // Back in the source: its log links the fork; Fork takes the last run.
  await open_session(page, s.id);
  await page.waitForSelector(`[data-test=fork-link]`, { visible: true });
  await page.waitForFunction(() => !document.querySelector("button[data-test=fork]").disabled);
  await page.click("button[data-test=fork]");
  await page.waitForFunction((from, first) => /^#\/sessions\/ses_/.test(location.hash) && !location.hash.includes(from) &&
    !location.hash.includes(first), {}, s.id, fork);
  const latest = decodeURIComponent(new URL(page.url()).hash.slice("#/sessions/".length));
  await page.waitForSelector(`[data-test=session-view][data-session-id="${latest}"]`, { visible: true });
  await send(page, "Recall the phrase.");
  await wait_assistant_text(page, "SECOND-KITE");
});

h.test("a reload mid-turn resumes the stream without duplicated text", async (ctx) => {
  const { page } = ctx;
  const s = await signed_in_session(ctx, "reload");
  const want = long_reply("RESUMED", 80);
  let resumed_streaming = false;
  await send(page, `Stream slowly: 40\nReply with exactly: ${want}`);
  await page.waitForFunction((sel) => (document.querySelector(sel)?.textContent ?? "").includes("word"), { polling: 20 }, streaming_selector);
  const seq_before = Number(await page.$eval("[data-test=session-view]", (v) => v.getAttribute("data-last-seq")));
  assert.ok(seq_before > 0, "the view exposes data-last-seq");
  await page.reload();
  await page.waitForSelector(`[data-test=session-view][data-session-id="${s.id}"]`, { visible: true });
  // Still mid-turn after the reload: the answer streams on in the new page.
  if ((await api.executions(s.id)).some((x) => x.status === "running")) {
    await page.waitForSelector(streaming_selector, { visible: true });
    resumed_streaming = true;
  }
  await wait_assistant_text(page, want, wait_ms * 2);
  await api.wait_idle(s.id);
  // Give the live stream every durable event of the turn, then count.
  const last_seq = (await api.session(s.id)).last_seq;
  await page.waitForFunction((n) => Number(document.querySelector("[data-test=session-view]").getAttribute("data-last-seq")) >= n, {}, last_seq);
  const t = await transcript(page);
  assert.equal(t.filter((m) => m.role === "assistant" && m.text === want).length, 1, "the answer shows exactly once");
  assert.equal(t.filter((m) => m.streaming).length, 0, "no streaming leftover");
  const seqs = t.map((m) => m.seq).filter((x) => x !== null);
  assert.equal(new Set(seqs).size, seqs.length, `a durable seq shows twice: ${seqs}`);
  const whole = await text_of(page, "[data-test=transcript]");
  assert.equal(whole.split(want).length - 1, 2, "the text appears in the user's message and the answer only");
  if (!resumed_streaming) console.log("note: the turn ended before the reloaded page was back; only the replay was checked");
});

h.test("agent text cannot inject markup or script", async (ctx) => {
  const { page } = ctx;
  const s = await signed_in_session(ctx, "xss");
  const payload = `<script>window.__xss=1</script> <img src=x onerror="window.__xss=2"> [click](javascript:window.__xss=3)`;
  await send(page, `Reply with exactly: ${payload}`);
  await api.wait_idle(s.id);
  assert.deepEqual(await api.assistant_texts(s.id), [payload]);
  const sel = "[data-test=transcript] [data-test=message][data-role=assistant]:not([data-streaming=true]) [data-test=message-text]";
  await page.waitForFunction((q) => (document.querySelector(q)?.textContent ?? "").includes("__xss=3"), {}, sel);
  const seen = await page.$$eval("[data-test=transcript] [data-test=message-text]", (els) => ({
    scripts: els.reduce((n, e) => n + e.querySelectorAll("script").length, 0),
    images: els.reduce((n, e) => n + e.querySelectorAll("img").length, 0),
    handlers: els.reduce((n, e) => n + [...e.querySelectorAll("*")].filter((x) => [...x.attributes].some((a) => a.name.startsWith("on"))).length, 0),
    links: els.flatMap((e) => [...e.querySelectorAll("a")].map((a) => a.getAttribute("href"))),
  }));
  assert.equal(seen.scripts, 0, "no <script> from the text");
  assert.equal(seen.images, 0, "no <img> from the text");
  assert.equal(seen.handlers, 0, "no event-handler attribute from the text");
  for (const href of seen.links) assert.ok(!/^\s*javascript:/i.test(href ?? ""), `a javascript: link: ${href}`);
  const shown = await text_of(page, sel);
  assert.ok(shown.includes("window.__xss=1"), `the script's text is shown: ${shown}`);
  assert.ok(shown.includes("window.__xss=2"), "the image tag's text is shown");
  assert.ok(shown.includes("click"), "the link text is shown");
  // Clicking what reads "click" runs nothing.
  const clicked = await page.evaluate((q) => {
    const root = document.querySelector(q);
    const a = [...root.querySelectorAll("a")].find((x) => x.textContent.includes("click"));
    (a || root).click();
    return Boolean(a);
  }, sel);
  if (clicked) {
    const target = await page.$eval(`${sel} a`, (a) => [a.rel, a.target]).catch(() => null);
    if (target) assert.ok(target[0].includes("noopener"), "links carry rel=noopener");
  }
  const visible = await page.$eval(sel, (e) => e.offsetParent !== null && e.getBoundingClientRect().height > 0);
  assert.ok(visible, "the text is visible");
  assert.equal(await page.evaluate(() => typeof window.__xss), "undefined", "nothing ran");
  assert.equal(await page.evaluate(() => document.querySelectorAll("script:not([src])").length), 0, "no inline script in the page");
});

h.test("the session view at phone width and in the dark theme", async (ctx) => {
  const { page } = ctx;
  const s = await signed_in_session(ctx, "narrow and dark");
  await send(page, "Reply with exactly: Fits on a phone. **Bold** and `code` and a [link](https://example.com/).");
  await api.wait_idle(s.id);
  await wait_assistant_text(page, "Fits on a phone. Bold and code and a link.");
  const link = await page.$eval("[data-test=message][data-role=assistant] [data-test=message-text] a", (a) => [a.href, a.rel, a.target]);
  assert.deepEqual(link, ["https://example.com/", "noopener noreferrer", "_blank"]);

  await page.setViewport({ width: 390, height: 844, deviceScaleFactor: 2 });
  await page.waitForSelector("form[data-test=composer] textarea[name=text]", { visible: true });
  const fits = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
  assert.ok(fits.scroll <= fits.width + 1, `no sideways scrolling at 390 px (${fits.scroll} > ${fits.width})`);
  const composer = await page.$eval("form[data-test=composer]", (f) => f.getBoundingClientRect().toJSON());
  assert.ok(composer.left >= 0 && composer.right <= 391, `the composer fits: ${JSON.stringify(composer)}`);
  await ctx.shot("phone-390");

  await page.setViewport({ width: 1280, height: 900 });
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
  const luminance = await page.evaluate(() => {
    const rgb = (c) => (c.match(/[\d.]+/g) || []).slice(0, 3).map(Number);
    const bg = (el) => {
      for (let e = el; e; e = e.parentElement) {
        const c = getComputedStyle(e).backgroundColor;
        if (c && !/rgba\(0, 0, 0, 0\)|transparent/.test(c)) return rgb(c);
      }
      return [255, 255, 255];
    };
    const [r, g, b] = bg(document.querySelector("[data-test=transcript]"));
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
  });
  assert.ok(luminance < 0.5, `the dark theme has a dark background (luminance ${luminance.toFixed(2)})`);
  await ctx.shot("dark");
});

h.test("a server killed mid-turn and restarted: the page stays signed in and the answer arrives once", async ({ page, sign_in }) => {
  const crash = await h.start_server({ name: "crash" });
  await sign_in({ server: crash });
  const s = await crash.new_session("survives kill -9");
  await open_session(page, s.id);
  const want = long_reply("SURVIVED", 60);
  await send(page, `Stream slowly: 60\nReply with exactly: ${want}`);
  await page.waitForFunction((sel) => (document.querySelector(sel)?.textContent ?? "").includes("word"), { polling: 20 }, streaming_selector);
  await crash.crash_and_restart();
  // The node takes its own session over with a restart notice and finishes
  // the turn; the page's stream reconnects after the last event it saw.
  await wait_assistant_text(page, want, 60_000);
  await page.waitForFunction((sel) => !document.querySelector(sel), {}, streaming_selector);
  await crash.wait_idle(s.id);
  const xs = await crash.executions(s.id);
  assert.equal(xs.length, 1, "one execution, taken over");
  assert.equal(xs[0].outcome, "succeeded");
  const shown = await transcript(page);
  assert.equal(shown.filter((m) => m.role === "assistant" && m.text === want).length, 1, "the answer once");
  const seqs = shown.map((m) => m.seq).filter((x) => x);
  assert.equal(new Set(seqs).size, seqs.length, `a durable seq shows twice: ${seqs}`);
  assert.ok(shown.some((m) => m.role === "synthetic" && /restart/i.test(m.text)), "the restart notice is shown");
  assert.deepEqual(await crash.assistant_texts(s.id), [want]);
  assert.equal(await page.evaluate(() => document.querySelector("form[data-test=signin]")?.offsetParent ?? null), null,
    "still signed in: the cookie outlived the process");
  assert.equal(await page.evaluate(() => fetch("/v1/auth/session").then((r) => r.status)), 200);
});

h.test("an input queued behind a running turn is shown pending and can be cancelled", async (ctx) => {
  const { page } = ctx;
  const s = await signed_in_session(ctx, "cancel the queued one");
  await send(page, `Stream slowly: 100\nReply with exactly: ${long_reply("FIRST", 60)}`);
  await page.waitForSelector(streaming_selector, { visible: true });
  await page.select("form[data-test=composer] select[name=delivery]", "queue");
  await send(page, "Reply with exactly: SHOULD-NEVER-RUN");
  await page.waitForSelector("[data-test=pending-input] button[data-test=cancel-input]", { visible: true });
  const queued = (await api.inputs(s.id)).find((i) => i.text === "Reply with exactly: SHOULD-NEVER-RUN");
  assert.equal(queued.delivery, "queue");
  assert.equal(queued.status, "pending");
  await page.click("[data-test=pending-input] button[data-test=cancel-input]");
  await page.waitForFunction(() => !document.querySelector("[data-test=pending-input]"));
  await api.wait_idle(s.id);
  const after = (await api.inputs(s.id)).find((i) => i.id === queued.id);
  assert.equal(after.status, "cancelled");
  assert.deepEqual(await api.assistant_texts(s.id), [long_reply("FIRST", 60)], "the cancelled input never ran");
  assert.equal((await api.executions(s.id)).length, 1);
});
