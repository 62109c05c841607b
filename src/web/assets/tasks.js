// tasks.js: the work layer. The board (#/tasks): tasks in columns by
// status, and a form for a new task. A task (#/tasks/<id>): its status,
// plan revisions with a line diff between each and the one before,
// approving or rejecting the plan that waits, its questions, child tasks,
// the project's repositories and each run with its workspace decision.
// Both follow the live streams and refetch (debounced) when something
// happens.

import { get, post, patch, enc, LiveStream, debounce } from "./api.js";
import {
  h, clear, act, fmtUsageTokens, fmtCost, fmtDuration, fmtTime, timeEl, statusBadge, emptyNote, showError,
} from "./ui.js";
import { renderMarkdown } from "./markdown.js";
import { interactionBlock } from "./interactions.js";
import { loadProfiles } from "./sessions.js";

const STATUSES = ["backlog", "todo", "in_progress", "in_review", "blocked", "done", "cancelled"];
const NEXT = new Map([
  ["backlog", ["todo", "cancelled"]],
  ["todo", ["in_progress", "backlog", "blocked", "cancelled"]],
  ["in_progress", ["in_review", "done", "blocked", "todo", "cancelled"]],
  ["in_review", ["done", "in_progress", "blocked", "cancelled"]],
  ["blocked", ["todo", "in_progress", "cancelled"]],
  ["done", ["todo"]],
  ["cancelled", ["backlog"]],
]);
const label = (s) => String(s).replace(/_/g, " ");

async function projectNames() {
  const names = new Map();
  try {
    const r = await get("/v1/projects?limit=1000");
    for (const p of r.projects || []) names.set(p.id, p);
  } catch (e) {
    if (e.status !== 503) showError(e);
  }
  return names;
}

// ---- the board ----

export async function renderBoard(root) {
  const board = h("div", { class: "board", "data-test": "task-board" });
  const count = h("span", { class: "muted count" });
  const newButton = h("button", { type: "button", class: "primary", "data-test": "new-task", "aria-expanded": "false" }, "New task");
  let projects = new Map();

  const f = {
    title: h("input", { name: "title", id: "task-title", required: true, autocomplete: "off" }),
    description: h("textarea", { name: "description", id: "task-description", rows: "3" }),
    mode: h("select", { name: "mode", id: "task-mode" },
      ["standard", "planning", "ask"].map((m) => h("option", { value: m }, m))),
    project: h("select", { name: "project_id", id: "task-project" }),
    profile: h("select", { name: "profile", id: "task-profile" }),
    message: h("textarea", { name: "message", id: "task-message", rows: "2", placeholder: "Optional: the first message starts the task" }),
  };
  const formError = h("p", { class: "form-error", role: "alert", hidden: true });
  const form = h("form", { class: "card new-task", "data-test": "new-task-form", hidden: true },
    h("h2", null, "New task"),
    h("div", { class: "field" }, h("label", { for: "task-title" }, "Title"), f.title),
    h("div", { class: "field" }, h("label", { for: "task-description" }, "Description"), f.description),
    h("div", { class: "field-row" },
      h("div", { class: "field" }, h("label", { for: "task-mode" }, "Mode"), f.mode),
      h("div", { class: "field" }, h("label", { for: "task-project" }, "Project"), f.project),
      h("div", { class: "field" }, h("label", { for: "task-profile" }, "Profile"), f.profile)),
    h("div", { class: "field" }, h("label", { for: "task-message" }, "First message"), f.message),
    formError,
    h("div", { class: "actions" },
      h("button", { type: "submit", class: "primary" }, "Create task"),
      h("button", { type: "button", class: "ghost", onclick: () => { form.hidden = true; newButton.setAttribute("aria-expanded", "false"); } }, "Cancel")));

  newButton.addEventListener("click", async () => {
    form.hidden = !form.hidden;
    newButton.setAttribute("aria-expanded", String(!form.hidden));
    if (form.hidden) return;
    clear(f.project).appendChild(h("option", { value: "" }, "None"));
    for (const p of projects.values()) f.project.appendChild(h("option", { value: p.id }, p.name));
    clear(f.profile);
    try {
      for (const p of await loadProfiles()) {
        f.profile.appendChild(h("option", { value: p.name, disabled: p.available === false }, p.name));
      }
    } catch (e) { showError(e); }
    f.title.focus();
  });

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    formError.hidden = true;
    act(form.querySelector("button[type=submit]"), async () => {
      const body = { title: f.title.value.trim(), mode: f.mode.value };
      if (f.description.value.trim()) body.description = f.description.value;
      if (f.project.value) body.project_id = f.project.value;
      if (f.profile.value && f.profile.value !== "default") body.profile = f.profile.value;
      if (f.message.value.trim()) body.message = f.message.value;
      try {
        const r = await post("/v1/tasks", body);
        location.hash = `#/tasks/${encodeURIComponent(r.task.id)}`;
      } catch (ex) {
        formError.textContent = ex.message;
        formError.hidden = false;
        throw ex;
      }
    });
  });

  root.appendChild(h("div", { class: "view-head" }, h("h1", null, "Tasks"), h("div", { class: "head-actions" }, count, newButton)));
  root.appendChild(form);
  root.appendChild(board);

  async function load() {
    const [r, p] = await Promise.all([get("/v1/tasks?limit=1000"), projectNames()]);
    projects = p;
    const tasks = Array.isArray(r.tasks) ? r.tasks : [];
    const by = new Map(STATUSES.map((s) => [s, []]));
    for (const t of tasks) (by.get(t.status) || by.get("todo")).push(t);
    const frag = document.createDocumentFragment();
    for (const s of STATUSES) {
      const cards = by.get(s);
      const col = h("section", { class: "column", "data-test": "task-column", "data-status": s, "aria-label": label(s) },
        h("h2", { class: "column-head" }, label(s), h("span", { class: "muted count" }, String(cards.length))));
      const ul = h("ul", { class: "cards" });
      for (const t of cards) {
        const project = t.project_id ? projects.get(t.project_id) : null;
        ul.appendChild(h("li", { class: "task-card card", "data-test": "task-card", "data-task-id": t.id, "data-status": t.status },
          h("a", { href: `#/tasks/${encodeURIComponent(t.id)}`, class: "card-title" }, t.title || t.id),
          h("div", { class: "card-meta small muted" },
            t.mode !== "standard" ? h("span", { class: "chip" }, t.mode) : null,
            t.priority ? h("span", null, `P${t.priority}`) : null,
            project ? h("span", null, project.name) : null,
            t.parent_task_id ? h("span", null, "subtask") : null,
            h("span", null, timeEl(t.updated_at)))));
      }
      if (!cards.length) ul.appendChild(h("li", { class: "empty small" }, "None"));
      col.appendChild(ul);
      frag.appendChild(col);
    }
    clear(board).appendChild(frag);
    count.textContent = `${tasks.length} tasks`;
  }

  try {
    await load();
  } catch (e) {
    if (e.status === 503) {
      board.appendChild(emptyNote("The work layer (tasks and projects) is not enabled on this server."));
      return () => {};
    }
    throw e;
  }
  const refresh = debounce(() => load().catch(showError), 400);
  const stream = new LiveStream(() => "/v1/events", { onEvent: refresh, onOpen: (again) => { if (again) refresh(); }, poll: load });
  return () => stream.close();
}

// ---- line diff ----

// The lines of b against a: [{op: " " | "-" | "+", text}], by longest common subsequence.
export function lineDiff(a, b) {
  const x = String(a ?? "").split("\n");
  const y = String(b ?? "").split("\n");
  // Common head and tail first: plans change in places.
  let start = 0;
  while (start < x.length && start < y.length && x[start] === y[start]) start++;
  let ex = x.length, ey = y.length;
  while (ex > start && ey > start && x[ex - 1] === y[ey - 1]) { ex--; ey--; }
  const xs = x.slice(start, ex), ys = y.slice(start, ey);
  const out = [];
  for (let i = 0; i < start; i++) out.push({ op: " ", text: x[i] });
  const n = xs.length, m = ys.length;
  if (n * m > 4e6) {
    for (const t of xs) out.push({ op: "-", text: t });
    for (const t of ys) out.push({ op: "+", text: t });
  } else {
    const w = m + 1;
    const L = new Uint32Array((n + 1) * w);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        L[i * w + j] = xs[i] === ys[j] ? L[(i + 1) * w + j + 1] + 1 : Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
      }
    }
    let i = 0, j = 0;
    while (i < n && j < m) {
      if (xs[i] === ys[j]) { out.push({ op: " ", text: xs[i] }); i++; j++; }
      else if (L[(i + 1) * w + j] >= L[i * w + j + 1]) out.push({ op: "-", text: xs[i++] });
      else out.push({ op: "+", text: ys[j++] });
    }
    while (i < n) out.push({ op: "-", text: xs[i++] });
    while (j < m) out.push({ op: "+", text: ys[j++] });
  }
  for (let i = ex; i < x.length; i++) out.push({ op: " ", text: x[i] });
  return out;
}

function diffEl(a, b) {
  const lines = lineDiff(a, b);
  const pre = h("pre", { class: "diff", "data-test": "plan-diff" });
  let added = 0, removed = 0;
  for (const l of lines) {
    if (l.op === "+") added++;
    if (l.op === "-") removed++;
    pre.appendChild(h("span", { class: l.op === "+" ? "add" : l.op === "-" ? "del" : "same" },
      h("span", { class: "sign", "aria-label": l.op === "+" ? "added" : l.op === "-" ? "removed" : undefined }, l.op), l.text, "\n"));
  }
  return { pre, added, removed };
}

// ---- one task ----

export async function renderTask(root, id) {
  const body = h("div", { class: "task-view", "data-test": "task-view", "data-task-id": id });
  root.appendChild(body);
  const keep = new Map();  // pending interaction id → its form (kept across refreshes, with what was typed)
  let detail = null;
  let stream = null;
  let closed = false;

  async function load() {
    let d;
    try {
      d = await get(`/v1/tasks/${enc(id)}`);
    } catch (e) {
      if (e.status === 404 && !detail) {
        clear(body).appendChild(h("div", { class: "card" }, h("h1", null, "No such task"),
          h("p", null, h("a", { href: "#/tasks" }, "Back to the board"))));
        return false;
      }
      throw e;
    }
    const t = d.task;
    const [children, project] = await Promise.all([
      get(`/v1/tasks?parent_task_id=${enc(id)}&limit=1000`).then((r) => r.tasks || []).catch((e) => { showError(e); return []; }),
      t.project_id ? get(`/v1/projects/${enc(t.project_id)}`).then((r) => r.project).catch((e) => { showError(e); return null; })
        : Promise.resolve(null),
    ]);
    if (closed) return false;
    detail = d;
    draw(d, children, project);
    return true;
  }

  function draw(d, children, project) {
    const t = d.task;
    const focusedId = document.activeElement && document.activeElement.id;
    const frag = document.createDocumentFragment();
    const statusSelect = h("select", { id: "task-next-status", "aria-label": "Move to" },
      (NEXT.get(t.status) || []).map((s) => h("option", { value: s }, label(s))));
    const moveButton = h("button", { type: "button", class: "ghost" }, "Move");
    moveButton.addEventListener("click", () => act(moveButton, async () => {
      await patch(`/v1/tasks/${enc(id)}`, { status: statusSelect.value });
      await load();
    }));
    frag.appendChild(h("div", { class: "view-head" },
      h("div", { class: "head-title" },
        h("a", { href: "#/tasks", class: "back" }, "← Tasks"),
        h("div", { class: "title-line" }, h("h1", null, t.title || t.id), statusBadge(label(t.status), "task-status")),
        h("div", { class: "meta" },
          h("span", { class: "mono" }, t.id), h("span", null, `mode ${t.mode}`), t.priority ? h("span", null, `priority ${t.priority}`) : null,
          h("span", null, `profile ${t.profile}`), h("span", null, `by ${t.created_by}`),
          h("span", null, fmtUsageTokens(d.usage)), h("span", null, `cost ${fmtCost(d.usage)}`))),
      h("div", { class: "head-actions" },
        h("a", { class: "button ghost", href: `#/sessions/${encodeURIComponent(t.session)}`, "data-test": "task-session" }, "Conversation"),
        (NEXT.get(t.status) || []).length ? h("span", { class: "move" }, statusSelect, moveButton) : null)));
    statusSelect.dataset.status = t.status;
    body.dataset.status = t.status;

    const main = h("div", { class: "task-main" });
    const side = h("aside", { class: "task-side" });

    if (t.description) main.appendChild(h("section", { class: "card" }, h("h2", null, "Description"),
      h("div", { class: "md" }, renderMarkdown(t.description))));

    // What waits for a person: the plan's approval first, then questions.
    const inters = Array.isArray(d.interactions) ? d.interactions : [];
    const confirmation = inters.find((i) => i.kind === "confirmation" && i.status === "pending");
    if (confirmation) main.appendChild(approvalBox(confirmation));
    const questions = inters.filter((i) => i.kind !== "confirmation" && i.status === "pending");
    if (questions.length) {
      const sec = h("section", { class: "task-questions", "data-test": "task-questions" }, h("h2", null, "Questions"));
      for (const q of questions) {
        let form = keep.get(q.id);
        if (!form) { form = interactionBlock(q, () => { keep.delete(q.id); refresh(); }); keep.set(q.id, form); }
        sec.appendChild(form);
      }
      main.appendChild(sec);
    }
    for (const k of [...keep.keys()]) if (!inters.some((i) => i.id === k && i.status === "pending")) keep.delete(k);

    main.appendChild(planSection(d.plan || [], t.accepted_plan));
    main.appendChild(messageBox(t));
    main.appendChild(commentsSection(d.comments || []));

    side.appendChild(runsSection(d.runs || [], d.preparations || []));
    side.appendChild(childrenSection(children));
    side.appendChild(projectSection(t, project));

    frag.appendChild(h("div", { class: "task-layout" }, main, side));
    clear(body).appendChild(frag);
    if (focusedId) { const el = document.getElementById(focusedId); if (el) el.focus(); }
  }

  let approvalReason = "";  // kept while the page refreshes
  function approvalBox(inter) {
    const p = inter.payload && typeof inter.payload === "object" ? inter.payload : {};
    const reason = h("textarea", { name: "reason", id: "reject-reason", rows: "2", placeholder: "What should change (needed to reject)" });
    reason.value = approvalReason;
    reason.addEventListener("input", () => { approvalReason = reason.value; });
    const error = h("p", { class: "form-error", role: "alert", hidden: true });
    const approve = h("button", { type: "button", class: "primary", "data-test": "approve-plan" }, "Approve plan");
    const reject = h("button", { type: "button", class: "danger", "data-test": "reject-plan" }, "Reject plan");
    const fail = (ex) => { error.textContent = ex.message; error.hidden = false; throw ex; };
    approve.addEventListener("click", () => act(approve, async () => {
      error.hidden = true;
      await post(`/v1/tasks/${enc(id)}/approve`, {}).catch(fail);
      approvalReason = "";
      await load();
    }));
    reject.addEventListener("click", () => act(reject, async () => {
      error.hidden = true;
      if (!reason.value.trim()) {
        error.textContent = "Say what should change to reject the plan.";
        error.hidden = false;
        reason.focus();
        return;
      }
      await post(`/v1/tasks/${enc(id)}/reject`, { reason: reason.value.trim() }).catch(fail);
      approvalReason = "";
      await load();
    }));
    return h("section", { class: "card approval", "data-test": "plan-approval", "data-interaction-id": inter.id },
      h("h2", null, `The plan waits for your approval${p.number ? ` (revision ${p.number})` : ""}`),
      h("label", { for: "reject-reason" }, "Reason"), reason, error,
      h("div", { class: "actions" }, approve, reject));
  }

  function planSection(revisions, accepted) {
    const sec = h("section", { class: "plan", "data-test": "plan" }, h("h2", null, "Plan"));
    if (!revisions.length) { sec.appendChild(emptyNote("No plan yet.")); return sec; }
    const sorted = [...revisions].sort((a, b) => a.number - b.number);
    for (let i = sorted.length - 1; i >= 0; i--) {
      const r = sorted[i];
      const prev = i > 0 ? sorted[i - 1] : null;
      const latest = i === sorted.length - 1;
      const parts = [
        h("div", { class: "md plan-content" }, renderMarkdown(r.content)),
      ];
      if (prev) {
        const { pre, added, removed } = diffEl(prev.content, r.content);
        parts.push(h("details", { class: "diff-box", open: latest },
          h("summary", null, `Changes from revision ${prev.number} (+${added} −${removed})`), pre));
      }
      const headBits = [
        h("strong", null, `Revision ${r.number}`),
        r.accepted || r.id === accepted ? h("span", { class: "badge status-succeeded" }, "approved") : null,
        latest ? h("span", { class: "chip" }, "latest") : null,
        h("span", { class: "muted small" }, `by ${r.author} · `, timeEl(r.created_at)),
      ];
      const attrs = { class: "revision card", "data-test": "plan-revision", "data-revision-id": r.id, "data-number": r.number };
      // The latest revision is shown open; older ones fold away.
      sec.appendChild(latest
        ? h("article", attrs, h("div", { class: "rev-head" }, headBits), parts)
        : h("article", attrs, h("details", null, h("summary", { class: "rev-head" }, headBits), parts)));
    }
    return sec;
  }

  function messageBox(t) {
    const text = h("textarea", { name: "text", id: "task-message-text", rows: "2", placeholder: "Message the task's agent" });
    const send = h("button", { type: "submit", class: "primary" }, "Send");
    const form = h("form", { class: "card task-message", "data-test": "task-message" },
      h("label", { for: "task-message-text" }, "Message the agent"), text, h("div", { class: "actions" }, send));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      if (!text.value.trim()) return;
      act(send, async () => {
        await post(`/v1/tasks/${enc(t.id)}/messages`, { text: text.value });
        text.value = "";
        refresh();
      });
    });
    return form;
  }

  function commentsSection(comments) {
    const sec = h("section", { class: "comments" }, h("h2", null, "Comments"));
    for (const c of comments) {
      sec.appendChild(h("div", { class: "comment", "data-test": "comment" },
        h("div", { class: "muted small" }, `${c.author} · `, timeEl(c.created_at)),
        h("div", { class: "md" }, renderMarkdown(c.text))));
    }
    const text = h("textarea", { name: "comment", id: "task-comment", rows: "2" });
    const add = h("button", { type: "submit", class: "ghost" }, "Comment");
    const form = h("form", { class: "comment-form" }, h("label", { for: "task-comment" }, "Add a comment"), text,
      h("div", { class: "actions" }, add));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      if (!text.value.trim()) return;
      act(add, async () => {
        await post(`/v1/tasks/${enc(id)}/comments`, { text: text.value });
        await load();
      });
    });
    sec.appendChild(form);
    return sec;
  }

  function runsSection(runs, preparations) {
    const sec = h("section", { class: "card" }, h("h2", null, "Runs"));
    if (!runs.length) { sec.appendChild(emptyNote("No runs yet.")); return sec; }
    const preps = [...preparations].sort((a, b) => a.seq - b.seq);
    const ol = h("ol", { class: "runs", reversed: true });
    for (const x of [...runs].sort((a, b) => b.started_seq - a.started_seq)) {
      // The preparation recorded last before the run started is the one it ran with.
      let prep = null;
      for (const p of preps) if (p.seq < x.started_seq) prep = p;
      const ws = prep && prep.workspace ? prep.workspace : null;
      const ss = prep && prep.session ? prep.session : null;
      const outcome = x.outcome || "running";
      ol.appendChild(h("li", { class: "run", "data-test": "run", "data-execution-id": x.id },
        h("div", { class: "run-head" }, statusBadge(outcome, "run-outcome"), h("span", { class: "muted small" }, fmtTime(x.started_at))),
        h("div", { class: "run-figures small" },
          h("span", { "data-test": "run-duration" }, x.finished_at ? fmtDuration(x.finished_at - x.started_at) : "running"),
          h("span", { "data-test": "run-tokens" }, fmtUsageTokens(x.usage)),
          h("span", { "data-test": "run-cost" }, fmtCost(x.usage))),
        ws ? h("div", { class: "decision small", "data-test": "workspace-decision", "data-decision": ws.decision },
          h("span", { class: "muted" }, "Workspace: "), h("strong", null, ws.decision),
          Array.isArray(ws.reasons) && ws.reasons.length ? ` — ${ws.reasons.join("; ")}` : "") :
          h("div", { class: "decision small muted", "data-test": "workspace-decision" }, "Workspace: no decision recorded"),
        ss ? h("div", { class: "decision small", "data-test": "session-decision" },
          h("span", { class: "muted" }, "Session: "), h("strong", null, ss.decision),
          Array.isArray(ss.reasons) && ss.reasons.length ? ` — ${ss.reasons.join("; ")}` : "") : null,
        x.error ? h("p", { class: "run-note small" }, x.error) : null));
    }
    sec.appendChild(ol);
    return sec;
  }

  function childrenSection(children) {
    const sec = h("section", { class: "card" }, h("h2", null, "Child tasks"));
    if (!children.length) { sec.appendChild(emptyNote("None.")); return sec; }
    const ul = h("ul", { class: "plain" });
    for (const c of children) {
      ul.appendChild(h("li", { "data-test": "child-task", "data-task-id": c.id },
        statusBadge(label(c.status)), " ", h("a", { href: `#/tasks/${encodeURIComponent(c.id)}` }, c.title || c.id)));
    }
    sec.appendChild(ul);
    return sec;
  }

  function projectSection(t, project) {
    const sec = h("section", { class: "card", "data-test": "project" }, h("h2", null, "Project"));
    if (!t.project_id) { sec.appendChild(emptyNote("Not part of a project.")); return sec; }
    if (!project) { sec.appendChild(emptyNote(`Project ${t.project_id} could not be read.`)); return sec; }
    sec.appendChild(h("p", null, h("strong", null, project.name)));
    if (project.description) sec.appendChild(h("p", { class: "muted small" }, project.description));
    const ul = h("ul", { class: "plain repos" });
    for (const r of project.repositories || []) {
      ul.appendChild(h("li", { "data-test": "repository" },
        h("span", { class: "mono" }, r.name), r.primary ? h("span", { class: "chip" }, "primary") : null,
        h("div", { class: "muted small mono wrap" }, r.url, r.branch ? ` @ ${r.branch}` : "")));
    }
    if (!(project.repositories || []).length) ul.appendChild(h("li", { class: "empty" }, "No repositories."));
    sec.appendChild(h("h3", { class: "small-head" }, "Repositories"));
    sec.appendChild(ul);
    if ((project.setup || []).length) {
      sec.appendChild(h("h3", { class: "small-head" }, "Setup"));
      sec.appendChild(h("pre", { class: "small" }, project.setup.join("\n")));
    }
    return sec;
  }

  const refresh = debounce(() => { if (!closed) load().catch(showError); }, 300);

  if (!(await load())) return () => { closed = true; };
  // Follow the task's session: anything recorded there may change what is shown.
  let after = 0;
  try {
    const s = await get(`/v1/sessions/${enc(detail.task.session)}`);
    after = s.session.last_seq || 0;
  } catch (e) { showError(e); }
  if (!closed) {
    stream = new LiveStream((n) => `/v1/sessions/${enc(detail.task.session)}/events?after=${n}`, {
      lastSeq: () => after,
      onEvent: (ev) => {
        if (typeof ev.seq === "number" && !ev.ephemeral) { if (ev.seq <= after) return; after = ev.seq; refresh(); }
      },
      onOpen: (again) => { if (again) refresh(); },
      // Without a stream: drawn again only when the session has something new.
      poll: async () => {
        const s = await get(`/v1/sessions/${enc(detail.task.session)}`);
        const seq = (s.session && s.session.last_seq) || 0;
        if (seq > after && !closed) { after = seq; await load(); }
      },
    });
  }
  return () => { closed = true; if (stream) stream.close(); };
}
