// Tasks in the browser: a task in planning mode whose agent writes a plan
// and asks for approval; the plan is rejected with a reason from the task
// view, revised by the agent, then approved, and the task runs to done.
//
// Usage: node tasks.test.mjs TETHER_BINARY (or TETHER_BIN=...; see harness.mjs)
import assert from "node:assert/strict";
import { after } from "node:test";

import { Harness, eventually, go, text_of, wait_ms } from "./harness.mjs";

const h = await Harness.start({ file: "tasks" });
after(() => h.stop());
const api = h.server;

// The scripted model's planning script: a draft, then (after the rejection) a
// revision whose numbered steps the implementation performs.
const finish = `Tool: finish ${JSON.stringify({ status: "done", summary: "approved in the browser" })}`;
const planning_script = [
  `Tool: write_plan ${JSON.stringify({ content: "1. parse the input\n2. print it\nDRAFT-PLAN" })}`,
  "Tool: request_plan_approval {}",
  `Tool: write_plan ${JSON.stringify({ content: `1. ${finish}\n2. Reply with exactly: IMPLEMENTED\n3. check it\nREVISED-PLAN` })}`,
  "Tool: request_plan_approval {}",
  "Reply with exactly: PLANNED",
].join("\n");

const detail = (id) => api.call("GET", `/v1/tasks/${id}`);
const pending_confirmation = (d) => d.interactions.find((i) => i.kind === "confirmation" && i.status === "pending");

// A click on what the selector finds now, once it is shown and enabled:
// found, checked and clicked in one task of the page, so a re-render of the
// task view (it re-renders as its events arrive) cannot replace the element
// between puppeteer's steps (it did: "Node is detached from document", "Node
// is either not clickable or not an Element").
async function click(page, selector) {
  await page.waitForFunction(
    (sel) => {
      const el = document.querySelector(sel);
      if (!el || el.disabled || el.getClientRects().length === 0) return false;
      el.click();
      return true;
    },
    { timeout: wait_ms },
    selector,
  );
}

async function click_reject(page, reason) {
  const field = "[data-test=task-view] textarea[name=reason]";
  if (!(await page.$(field)) || !(await page.$eval(field, (e) => e.offsetParent !== null))) {
    await click(page, "[data-test=task-view] button[data-test=reject-plan]");
    await page.waitForSelector(field, { visible: true });
  }
  await page.type(field, reason);
  await click(page, "[data-test=task-view] button[data-test=reject-plan]");
}

h.test("a plan rejected then approved from the task view: the task runs to done", async ({ page, sign_in, shot }) => {
  const created = await api.call("POST", "/v1/tasks", { title: "plan in the browser", mode: "planning", message: planning_script });
  const id = created.task.id;
  await eventually("the first plan waits for approval", async () => pending_confirmation(await detail(id)));
  await sign_in();

  await go(page, "#/tasks", `[data-test=task-board] [data-test=task-card][data-task-id="${id}"]`);
  const column = await page.$eval(`[data-test=task-card][data-task-id="${id}"]`, (c) => c.closest("[data-test=task-column]")?.getAttribute("data-status"));
  assert.equal(column, (await detail(id)).task.status, "the card is in its status's column");
  await click(page, `[data-test=task-card][data-task-id="${id}"] a`);  // its title, the link a person clicks
  await page.waitForSelector("[data-test=task-view]", { visible: true });
  await page.waitForFunction(() => /^#\/tasks\/tsk_/.test(location.hash));
  await page.waitForFunction(() => [...document.querySelectorAll("[data-test=plan-revision]")].some((r) => r.textContent.includes("DRAFT-PLAN")));
  await page.waitForSelector("[data-test=task-view] button[data-test=approve-plan]", { visible: true });
  // The status reads as words ("in progress").
  assert.equal((await text_of(page, "[data-test=task-status]")).replace(/ /g, "_"), "in_progress");

  const first = pending_confirmation(await detail(id));
  await click_reject(page, "it needs a third step");
  const second = await eventually("the revised plan waits for approval", async () => {
    const c = pending_confirmation(await detail(id));
    return c && c.id !== first.id && c;
  });
  assert.match(second.payload.content, /REVISED-PLAN/);
  assert.equal((await detail(id)).plan.length, 2);
  await page.waitForFunction(() => document.querySelectorAll("[data-test=plan-revision]").length === 2, { timeout: wait_ms });
  await page.waitForSelector("[data-test=plan-diff]", { visible: true });
  const diff = await text_of(page, "[data-test=plan-diff]");
  assert.ok(diff.includes("REVISED-PLAN") && diff.includes("DRAFT-PLAN"), `the diff shows what changed: ${diff}`);
  await shot("revised");

  await page.waitForSelector("[data-test=task-view] button[data-test=approve-plan]:not([disabled])", { visible: true });
  await click(page, "[data-test=task-view] button[data-test=approve-plan]");
  const done = await eventually("the task is done", async () => {
    const d = await detail(id);
    return d.task.status === "done" && d;
  }, { timeout: wait_ms * 2 });
  assert.equal(done.task.accepted_plan, second.payload.revision_id);
  assert.deepEqual(done.plan.map((r) => r.accepted), [false, true]);
  assert.equal(done.comments[0]?.text, "approved in the browser");
  await page.waitForFunction(() => document.querySelector("[data-test=task-status]")?.textContent.trim() === "done", { timeout: wait_ms });
  assert.ok(await page.$("[data-test=task-view][data-status=done]"));
  assert.equal(await page.$("[data-test=task-view] button[data-test=approve-plan]:not([disabled])"), null, "nothing left to approve");
});
