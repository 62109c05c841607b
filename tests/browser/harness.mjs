// The browser tests' harness: a real `tether serve` (its own data directory,
// the built-in scripted model, a token in $TETHER_TOKEN, a free port read from
// its `listening on` line) and Debian's headless Chromium driven over the
// DevTools protocol by puppeteer-core (no browser download).
//
//   const h = await Harness.start({ file: "session" });
//   after(() => h.stop());
//   h.test("a rule the test pins", async ({ page, signIn }) => { ... });
//
// Every test gets a fresh browser context (no cookies) and page; at its end a
// screenshot of that page goes to the results directory (whatever the
// outcome), and an uncaught page error or a Content-Security-Policy
// violation during the test fails it. Assertions wait by polling
// (eventually, waitForSelector) with generous deadlines; a time is never an
// assertion.
//
// Everything started here is stopped on every exit path: h.stop() (after()
// hooks), a failed assertion or a test's timeout (node:test runs the after()
// hooks then), SIGINT/SIGTERM/SIGHUP, the process exiting (synchronous kill),
// the harness's own deadline ($TETHER_BROWSER_DEADLINE_S, default 480 s),
// and even a SIGKILL of node: a watchdog shell per server, blocked reading a
// pipe from node, sends the server SIGTERM then SIGKILL when that pipe closes.
//
// Run one file: node tests/browser/session.test.mjs BUILD/src/tether; all
// of them: TETHER_BIN=BUILD/src/tether npm test --prefix tests/browser (or
// ctest -L browser in the build directory).
//
// Environment:
//   TETHER_BIN            the tether binary (else the first argument)
//   TETHER_CHROMIUM       the browser (default /usr/bin/chromium)
//   TETHER_TEST_RESULTS   screenshots, figures and server logs (default
//                         build/test-results/browser in the checkout)
import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import puppeteer from "puppeteer-core";

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo_root = path.resolve(here, "..", "..");

// Deadlines of the waits inside a test; a test's own timeout is longer, so a
// stuck wait fails with its own message first.
export const wait_ms = 30_000;
export const test_timeout_ms = 150_000;

export function tether_binary() {
  const bin = process.env.TETHER_BIN || process.argv[2];
  if (!bin) throw new Error("usage: node FILE.test.mjs TETHER_BINARY (or set TETHER_BIN)");
  const abs = path.resolve(bin);
  fs.accessSync(abs, fs.constants.X_OK);
  return abs;
}

export function results_dir() {
  const dir = process.env.TETHER_TEST_RESULTS || path.join(repo_root, "build", "test-results", "browser");
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls `fn` until it returns something truthy (that value is returned) or
// `timeout` passes (then throws "never: WHAT", with the last value or error).
export async function eventually(what, fn, { timeout = wait_ms, interval = 50 } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`never: ${what} (within ${timeout} ms; last: ${detail})`);
    }
    await sleep(interval);
  }
}

export function slug(name) {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 60);
}

// ---- processes this file started, for the synchronous exit path ----

const live_pids = new Set();
const live_dirs = new Set();

function kill_quietly(pid, signal) {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

function kill_everything_now() {
  for (const pid of live_pids) kill_quietly(pid, "SIGKILL");
  live_pids.clear();
  for (const dir of live_dirs) fs.rmSync(dir, { recursive: true, force: true });
  live_dirs.clear();
}

let exit_hooks_installed = false;
const active_harnesses = new Set();

function install_exit_hooks() {
  if (exit_hooks_installed) return;
  exit_hooks_installed = true;
  process.on("exit", kill_everything_now);
  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143], ["SIGHUP", 129]]) {
    process.on(signal, async () => {
      console.error(`harness: ${signal}: stopping everything`);
      await Promise.race([Promise.allSettled([...active_harnesses].map((h) => h.stop())), sleep(15_000)]);
      kill_everything_now();
      process.exit(code);
    });
  }
  const deadline_s = Number(process.env.TETHER_BROWSER_DEADLINE_S || 480);
  const timer = setTimeout(async () => {
    console.error(`harness: the file's deadline (${deadline_s} s) passed: stopping everything`);
    await Promise.race([Promise.allSettled([...active_harnesses].map((h) => h.stop())), sleep(15_000)]);
    kill_everything_now();
    process.exit(1);
  }, deadline_s * 1000);
  timer.unref();
}

// ---- the server ----

// One `tether serve` with its own data directory under `dir`.
export class Server {
  constructor({ bin, dir, token, args = [], name = "serve", listen = "127.0.0.1:0" }) {
    this.bin = bin;
    this.token = token;
    this.name = name;
    this.data = path.join(dir, `${name}-data`);
    this.log_path = path.join(dir, `${name}.log`);
    this.args = args;
    this.listen = listen;
    this.proc = null;
    this.watchdog = null;
    this.url = null;
  }

  async start() {
    const env = { ...process.env, TETHER_TOKEN: this.token };
    delete env.TETHER_CONFIG;
    delete env.TETHER_SERVER;
    const log = fs.openSync(this.log_path, "a");
    this.proc = spawn(
      this.bin,
      ["serve", "--data", this.data, "--listen", this.listen, ...this.args],
      { env, stdio: ["ignore", "pipe", log] },
    );
    fs.closeSync(log);
    live_pids.add(this.proc.pid);
    this.exited = new Promise((resolve) => this.proc.once("exit", (code, signal) => resolve({ code, signal })));
    this.exited.then(() => live_pids.delete(this.proc.pid));
    // Stops the server if node dies without running any handler (SIGKILL):
    // `read` returns when the pipe from node closes.
    this.watchdog = spawn(
      "sh",
      ["-c", 'read -r _; kill -TERM "$1" 2>/dev/null; sleep 5; kill -KILL "$1" 2>/dev/null', "watchdog", String(this.proc.pid)],
      { stdio: ["pipe", "ignore", "ignore"], detached: true },
    );
    live_pids.add(this.watchdog.pid);
    this.watchdog.unref();
    this.watchdog.stdin.on("error", () => {});

    const line = await new Promise((resolve, reject) => {
      let buf = "";
      const timer = setTimeout(() => reject(new Error(`${this.name} printed no 'listening on' line in 30 s`)), 30_000);
      const on_data = (chunk) => {
        buf += chunk.toString();
        const nl = buf.indexOf("\n");
        if (nl >= 0) {
          clearTimeout(timer);
          this.proc.stdout.off("data", on_data);
          resolve(buf.slice(0, nl));
        }
      };
      this.proc.stdout.on("data", on_data);
      this.exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`${this.name} exited (${code ?? signal}) before listening`));
      });
    }).catch((e) => {
      throw new Error(`${e.message}\n--- ${this.name} log:\n${this.log_tail()}`);
    });
    if (!line.startsWith("listening on ")) throw new Error(`${this.name} printed ${JSON.stringify(line)}\n${this.log_tail()}`);
    this.url = line.slice("listening on ".length).trim();
    this.proc.stdout.resume();  // whatever else it prints is not read
    return this;
  }

  log_tail(n = 30) {
    try {
      return fs.readFileSync(this.log_path, "utf8").split("\n").slice(-n).join("\n");
    } catch {
      return "";
    }
  }

  alive() {
    return this.proc && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  // SIGKILL now (no shutdown at all), then a new process on the same data
  // directory and the same address, as a supervisor would restart it.
  async crash_and_restart() {
    if (this.watchdog) {
      kill_quietly(this.watchdog.pid, "SIGKILL");
      live_pids.delete(this.watchdog.pid);
      this.watchdog = null;
    }
    this.proc.kill("SIGKILL");
    await this.exited;
    this.listen = new URL(this.url).host;
    return this.start();
  }

  // SIGTERM, then SIGKILL after 10 s.
  async stop() {
    if (this.watchdog) {
      kill_quietly(this.watchdog.pid, "SIGKILL");
      live_pids.delete(this.watchdog.pid);
      this.watchdog = null;
    }
    if (!this.alive()) return;
    this.proc.kill("SIGTERM");
    const done = await Promise.race([this.exited.then(() => true), sleep(10_000).then(() => false)]);
    if (!done) {
      console.error(`harness: ${this.name} ignored SIGTERM for 10 s: SIGKILL`);
      this.proc.kill("SIGKILL");
      await this.exited;
    }
  }

  // {status, json, headers} of one API request with the bearer token.
  async request(method, route, body, { headers = {}, auth = true } = {}) {
    const h = { ...headers };
    if (auth) h.Authorization = `Bearer ${this.token}`;
    if (body !== undefined) h["Content-Type"] = "application/json";
    const r = await fetch(this.url + route, {
      method,
      headers: h,
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: "manual",
    });
    const text = await r.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = text;
    }
    return { status: r.status, json, headers: r.headers, text };
  }

  // The JSON of a request that must succeed (2xx).
  async call(method, route, body) {
    const r = await this.request(method, route, body);
    if (r.status < 200 || r.status > 299) throw new Error(`${method} ${route}: ${r.status} ${r.text}`);
    return r.json;
  }

  // ---- API shortcuts the tests share ----
  session(id) {
    return this.call("GET", `/v1/sessions/${id}`).then((j) => j.session);
  }
  messages(id) {
    return this.call("GET", `/v1/sessions/${id}/messages`).then((j) => j.messages);
  }
  inputs(id) {
    return this.call("GET", `/v1/sessions/${id}/inputs`).then((j) => j.inputs);
  }
  executions(id) {
    return this.call("GET", `/v1/sessions/${id}/executions`).then((j) => j.executions);
  }
  async new_session(title) {
    return (await this.call("POST", "/v1/sessions", { title })).session;
  }
  async wait_idle(id, timeout = wait_ms) {
    return eventually(`session ${id} idle`, async () => {
      const s = await this.session(id);
      return s.status === "idle" && s.pending_inputs === 0 && s;
    }, { timeout, interval: 100 });
  }
  async assistant_texts(id) {
    return (await this.messages(id)).filter((m) => m.role === "assistant" && m.text).map((m) => m.text);
  }
}

// ---- the browser ----

export async function launch_browser(profile_dir) {
  const browser = await puppeteer.launch({
    executablePath: process.env.TETHER_CHROMIUM || "/usr/bin/chromium",
    headless: true,
    pipe: true,
    userDataDir: profile_dir,
    // Our own handlers stop the browser (install_exit_hooks).
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
    protocolTimeout: 60_000,
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run", "--mute-audio"],
  });
  return browser;
}

// Runs in every page before its scripts: records CSP violations and when
// <body> first gets data-ready=true (performance.now(), from navigation start).
function page_probe() {
  window.__csp_violations = [];
  document.addEventListener("securitypolicyviolation", (e) => {
    window.__csp_violations.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"} (${e.sourceFile}:${e.lineNumber})`);
  });
  window.__ready_at = null;
  const watch = () => {
    const check = () => {
      if (window.__ready_at === null && document.body && document.body.getAttribute("data-ready") === "true")
        window.__ready_at = performance.now();
    };
    new MutationObserver(check).observe(document.documentElement, { attributes: true, subtree: true, attributeFilter: ["data-ready"] });
    check();
  };
  if (document.documentElement) watch();
  else document.addEventListener("readystatechange", watch, { once: true });
}

// ---- the harness ----

export class Harness {
  // `file` names the screenshots; `server_args` go to the main server.
  static async start({ file, server_args = [], token } = {}) {
    install_exit_hooks();
    const h = new Harness();
    active_harnesses.add(h);
    h.file = file;
    h.bin = tether_binary();
    h.results = results_dir();
    h.dir = fs.mkdtempSync(path.join(os.tmpdir(), "tether-browser-"));
    live_dirs.add(h.dir);
    h.token = token || `browser-test-token-${crypto.randomBytes(16).toString("hex")}`;
    h.servers = [];
    h.browser = null;
    try {
      h.server = await h.start_server({ args: server_args });
      h.browser = await launch_browser(path.join(h.dir, "chromium-profile"));
      const pid = h.browser.process()?.pid;
      if (pid) live_pids.add(pid);
    } catch (e) {
      await h.stop();
      throw e;
    }
    return h;
  }

  // Another `tether serve` (same token), stopped with the harness.
  async start_server({ args = [], name } = {}) {
    const s = new Server({ bin: this.bin, dir: this.dir, token: this.token, args, name: name || `serve${this.servers.length}` });
    this.servers.push(s);
    await s.start();
    return s;
  }

  // A fresh browser context (no cookies, no storage) and a page in it.
  async new_page({ width = 1280, height = 900 } = {}) {
    const context = await this.browser.createBrowserContext();
    const page = await context.newPage();
    await page.setViewport({ width, height });
    page.setDefaultTimeout(wait_ms);
    page.__errors = [];
    page.__console = [];
    page.on("pageerror", (e) => page.__errors.push(`uncaught: ${e.message || e}`));
    page.on("console", (m) => page.__console.push(`${m.type()}: ${m.text()}`));
    await page.evaluateOnNewDocument(page_probe);
    page.__context = context;
    return page;
  }

  // Signs in through the form and waits for the sessions list.
  async sign_in(page, { server = this.server, token = this.token, hash = "" } = {}) {
    await page.goto(`${server.url}/ui/${hash}`);
    await page.waitForSelector("form[data-test=signin] input[name=token]", { visible: true });
    await page.type("form[data-test=signin] input[name=token]", token);
    await page.click("form[data-test=signin] [type=submit]");
    await page.waitForSelector(hash ? "body[data-ready=true]" : "[data-test=session-list]", { visible: true });
    await wait_ready(page);
  }

  // RESULTS/<file>-<test>[-<label>].png
  async screenshot(page, name, label) {
    const file = path.join(this.results, `${this.file}-${slug(name)}${label ? `-${slug(label)}` : ""}.png`);
    await page.screenshot({ path: file, fullPage: false });
    return file;
  }

  // A node:test test with a fresh page (`page`), `sign_in()` for it, a
  // screenshot at its end, and a check that the page raised no error and
  // violated no CSP directive meanwhile.
  test(name, fn, { timeout = test_timeout_ms, allow_page_errors = false } = {}) {
    test(name, { timeout }, async () => {
      const page = await this.new_page();
      const ctx = {
        page,
        sign_in: (opts) => this.sign_in(page, opts),
        shot: (label) => this.screenshot(ctx.page, name, label),
      };
      let failed = null;
      try {
        await fn(ctx);
      } catch (e) {
        failed = e;
      }
      try {
        const file = await this.screenshot(ctx.page, name);
        console.log(`screenshot: ${file}`);
      } catch (e) {
        console.log(`screenshot of "${name}" failed: ${e.message}`);
      }
      if (!failed && !allow_page_errors) {
        const csp = await ctx.page.evaluate(() => window.__csp_violations || []).catch(() => []);
        const errors = [...page.__errors, ...(ctx.page === page ? [] : ctx.page.__errors ?? []), ...csp.map((v) => `CSP: ${v}`)];
        if (errors.length) failed = new Error(`the page reported errors:\n  ${errors.join("\n  ")}`);
      }
      if (failed) {
        const lines = [...new Set([...page.__console, ...(ctx.page.__console || [])])].slice(-30);
        if (lines.length) console.log(`--- browser console (last ${lines.length}):\n${lines.join("\n")}`);
        console.log(`--- server log (${this.server.name}):\n${this.server.log_tail(15)}`);
      }
      for (const p of new Set([page, ctx.page])) await p.__context?.close().catch(() => {});
      if (failed) throw failed;
    });
  }

  async stop() {
    if (this.stopped) return;
    this.stopped = true;
    active_harnesses.delete(this);
    if (this.browser) {
      const proc = this.browser.process();
      await Promise.race([this.browser.close().catch(() => {}), sleep(10_000)]);
      if (proc && proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
      if (proc) live_pids.delete(proc.pid);
    }
    await Promise.allSettled(this.servers.map((s) => s.stop()));
    for (const s of this.servers) {
      try {
        fs.copyFileSync(s.log_path, path.join(this.results, `${this.file}-${s.name}.log`));
      } catch {}
    }
    if (this.dir) {
      fs.rmSync(this.dir, { recursive: true, force: true });
      live_dirs.delete(this.dir);
    }
  }
}

// ---- page helpers ----

export async function wait_ready(page, timeout = wait_ms) {
  await page.waitForSelector("body[data-ready=true]", { timeout });
}

// Navigates the signed-in page to a hash route and waits for `selector`.
export async function go(page, hash, selector) {
  await page.evaluate((h) => {
    window.location.hash = h;
  }, hash);
  if (selector) await page.waitForSelector(selector, { visible: true });
  await wait_ready(page);
}

// Puts `text` into the composer (newlines included) and clicks send.
export async function send(page, text) {
  await page.waitForSelector("form[data-test=composer] textarea[name=text]", { visible: true });
  await page.$eval("form[data-test=composer] textarea[name=text]", (el, v) => {
    el.focus();
    el.value = v;
    el.dispatchEvent(new Event("input", { bubbles: true }));
  }, text);
  await page.waitForFunction(() => {
    const b = document.querySelector("[data-test=send]");
    return b && !b.disabled;
  });
  await page.click("[data-test=send]");
  // The composer empties once the input was accepted.
  await page.waitForFunction(() => document.querySelector("form[data-test=composer] textarea[name=text]").value === "");
}

// The rendered transcript: [{role, seq, streaming, text}].
export function transcript(page) {
  return page.$$eval("[data-test=transcript] [data-test=message]", (els) =>
    els.map((el) => ({
      role: el.getAttribute("data-role"),
      seq: el.getAttribute("data-seq"),
      streaming: el.getAttribute("data-streaming") === "true",
      text: (el.querySelector("[data-test=message-text]")?.textContent ?? "").trim(),
    })),
  );
}

// Waits until a durable (not streaming) assistant message reads exactly `text`.
export async function wait_assistant_text(page, text, timeout = wait_ms) {
  await page.waitForFunction((want) => {
    for (const el of document.querySelectorAll("[data-test=transcript] [data-test=message][data-role=assistant]")) {
      if (el.getAttribute("data-streaming") === "true") continue;
      if ((el.querySelector("[data-test=message-text]")?.textContent ?? "").trim() === want) return true;
    }
    return false;
  }, { timeout, polling: 50 }, text);
}

export async function text_of(page, selector) {
  return page.$eval(selector, (el) => el.textContent.trim());
}

// Opens the session's view in a signed-in page.
export async function open_session(page, id) {
  await go(page, `#/sessions/${id}`, `[data-test=session-view][data-session-id="${id}"]`);
}
