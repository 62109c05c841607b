// Signing in and out of the web interface, what the page keeps of the
// token, and the CSRF rule for cookie-authenticated requests.
//
// Usage: node auth.test.mjs TETHER_BINARY (or TETHER_BIN=...; see harness.mjs)
import assert from "node:assert/strict";
import fs from "node:fs";
import { after } from "node:test";

import { Harness, text_of } from "./harness.mjs";

const h = await Harness.start({ file: "auth" });
after(() => h.stop());

const contract_csp =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

h.test("the interface is served from the binary with the contract's headers", async ({ page }) => {
  const root = await h.server.request("GET", "/", undefined, { auth: false });
  assert.equal(root.status, 302);
  assert.equal(new URL(root.headers.get("location"), h.server.url).pathname, "/ui/");
  const index = await h.server.request("GET", "/ui/", undefined, { auth: false });
  assert.equal(index.status, 200);
  assert.match(index.headers.get("content-type"), /^text\/html/);
  assert.equal(index.headers.get("content-security-policy"), contract_csp);
  assert.equal(index.headers.get("x-content-type-options"), "nosniff");
  assert.equal(index.headers.get("referrer-policy"), "no-referrer");
  const etag = index.headers.get("etag");
  assert.ok(etag, "index.html has an ETag");
  const again = await h.server.request("GET", "/ui/", undefined, { auth: false, headers: { "If-None-Match": etag } });
  assert.equal(again.status, 304);
  await page.goto(`${h.server.url}/`);
  await page.waitForSelector("form[data-test=signin]", { visible: true });
  assert.equal(new URL(page.url()).pathname, "/ui/");
});

h.test("a wrong token shows the error and signs nobody in", async ({ page }) => {
  await page.goto(`${h.server.url}/ui/`);
  await page.waitForSelector("form[data-test=signin] input[name=token]", { visible: true });
  assert.equal(await page.$eval("form[data-test=signin] input[name=token]", (el) => el.type), "password");
  assert.equal(await page.$("[data-test=session-list]"), null, "nothing but the form before signing in");
  await page.type("form[data-test=signin] input[name=token]", "not-the-token");
  await page.click("form[data-test=signin] [type=submit]");
  await page.waitForFunction(() => {
    const e = document.querySelector("[data-test=signin-error]");
    return e && e.offsetParent !== null && e.textContent.trim().length > 0;
  });
  assert.equal(await page.$("[data-test=session-list]"), null);
  assert.ok(await page.$("form[data-test=signin]"));
  const cookies = await page.__context.cookies();
  assert.equal(cookies.filter((c) => c.name === "tether_session").length, 0, "no session cookie for a wrong token");
  const status = await page.evaluate(() => fetch("/v1/sessions").then((r) => r.status));
  assert.equal(status, 401);
});

h.test("the right token shows the sessions list and is kept nowhere the page can read", async ({ page, sign_in }) => {
  await h.server.new_session("listed before sign-in");
  await sign_in();
  await page.waitForSelector("[data-test=session-list] [data-test=session-row]", { visible: true });
  const where = await page.evaluate(() => {
    const dump = (s) => Array.from({ length: s.length }, (_, i) => s.key(i) + "=" + s.getItem(s.key(i))).join("\n");
    return {
      cookie: document.cookie,
      local: dump(localStorage),
      session: dump(sessionStorage),
      url: location.href,
      history: JSON.stringify(history.state),
    };
  });
  for (const [k, v] of Object.entries(where)) assert.ok(!String(v).includes(h.token), `the token is in ${k}`);
  const html = await page.evaluate(() => document.documentElement.outerHTML);
  assert.ok(!html.includes(h.token), "the token is in the page (the field is emptied after sign-in)");
  assert.ok(!fs.readFileSync(h.server.log_path, "utf8").includes(h.token), "the token is in the server's log");
  assert.ok(!page.url().includes(h.token));
  assert.ok(!where.cookie.includes("tether_session"), "the session cookie is not readable by scripts");
  const cookie = (await page.__context.cookies()).find((c) => c.name === "tether_session");
  assert.ok(cookie, "a tether_session cookie is set");
  assert.equal(cookie.httpOnly, true, "HttpOnly");
  assert.equal(cookie.sameSite, "Strict");
  assert.equal(cookie.path, "/");
  assert.ok(!cookie.value.includes(h.token), "the cookie is not the token");
  // The page's own view of the session: GET /v1/auth/session with the cookie.
  const session = await page.evaluate(() => fetch("/v1/auth/session").then(async (r) => [r.status, await r.json()]));
  assert.equal(session[0], 200);
  assert.match(session[1].csrf, /^[0-9a-f]+$/);
});

h.test("sign-out returns to the form and the old cookie no longer works", async ({ page, sign_in }) => {
  await sign_in();
  const cookie = (await page.__context.cookies()).find((c) => c.name === "tether_session");
  assert.ok(cookie);
  await page.click("button[data-test=signout]");
  await page.waitForSelector("form[data-test=signin] input[name=token]", { visible: true });
  assert.equal(await page.$("[data-test=session-list]"), null);
  assert.equal((await page.__context.cookies()).filter((c) => c.name === "tether_session").length, 0, "the cookie is cleared");
  const from_page = await page.evaluate(async () => {
    const a = await fetch("/v1/sessions");
    const b = await fetch("/v1/auth/session");
    return [a.status, b.status];
  });
  assert.deepEqual(from_page, [401, 401], "the API refuses the signed-out page");
  // A copy of the cookie taken before signing out is refused too.
  const replay = await h.server.request("GET", "/v1/sessions", undefined, {
    auth: false,
    headers: { Cookie: `tether_session=${cookie.value}` },
  });
  assert.equal(replay.status, 401, "a signed-out session cookie is refused by the server");
  // Signing in again works.
  await page.type("form[data-test=signin] input[name=token]", h.token);
  await page.click("form[data-test=signin] [type=submit]");
  await page.waitForSelector("[data-test=session-list]", { visible: true });
});

h.test("a cookie-authenticated POST needs the CSRF header; the bearer token needs none", async ({ page, sign_in }) => {
  await sign_in();
  const got = await page.evaluate(async () => {
    const post = (headers) =>
      fetch("/v1/sessions", {
        method: "POST",
        headers: { "Content-Type": "application/json", ...headers },
        body: JSON.stringify({ title: "csrf probe" }),
      }).then(async (r) => ({ status: r.status, body: await r.json().catch(() => null) }));
    const without = await post({});
    const wrong = await post({ "X-Tether-CSRF": "00" });
    const { csrf } = await fetch("/v1/auth/session").then((r) => r.json());
    const with_it = await post({ "X-Tether-CSRF": csrf });
    return { without, wrong, with_it };
  });
  assert.equal(got.without.status, 403);
  assert.equal(got.without.body?.error?.code, "forbidden");
  assert.equal(got.wrong.status, 403);
  assert.equal(got.with_it.status, 201);
  const id = got.with_it.body.session.id;
  assert.equal((await h.server.session(id)).title, "csrf probe");
  // Only one session came of the three POSTs.
  const probes = (await h.server.call("GET", "/v1/sessions?limit=100")).sessions.filter((s) => s.title === "csrf probe");
  assert.equal(probes.length, 1);
  // The bearer token works without a cookie or CSRF header.
  const bearer = await h.server.request("POST", "/v1/sessions", { title: "bearer probe" });
  assert.equal(bearer.status, 201);
  // A GET with the cookie needs no CSRF header.
  assert.equal(await page.evaluate(() => fetch("/v1/sessions?limit=1").then((r) => r.status)), 200);
  // The list is on the page before its first read answers: wait for the row itself.
  await page.reload();
  const row = `[data-test=session-list] [data-test=session-row][data-session-id="${id}"]`;
  await page.waitForSelector(row, { visible: true });
  assert.match(await text_of(page, `${row} [data-test=session-title]`), /csrf probe/);
});
