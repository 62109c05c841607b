// session.js: one session (#/sessions/<id>). The transcript is built from
// the session's event log: the durable events are read in JSON pages
// (GET /v1/sessions/{id}/events, up to 10000 a page), rendered in one
// DocumentFragment, then the live stream is followed after the last seq
// rendered. Durable events are applied once each, in seq order (a repeat is
// skipped; a gap is filled from the JSON pages before going on); deltas
// (text.delta, reasoning.delta, tool.progress) are shown while they stream
// and replaced by the durable event that ends them. Also: the composer
// (steer or queue), stop, reset, fork (at the last turn, or at a run's end
// from the runs list: POST …/fork, then the fork's own view), pending
// inputs, questions and runs.

import { get, post, del, enc, LiveStream } from "./api.js";
import {
  h, clear, act, fmtUsageTokens, fmtCost, fmtDuration, fmtTime, statusBadge, pretty, clip, showError, safeClass, measureRender,
} from "./ui.js";
import { renderMarkdown } from "./markdown.js";
import { interactionBlock, resolvedBlock } from "./interactions.js";

const PAGE = 10000;
const RUNS_SHOWN = 30;

export async function renderSession(root, id) {
  // ---- state ----
  let lastSeq = 0;
  let title = "";
  let profile = "";
  let runtime = "";
  let generation = 0;
  let building = true;          // the first render: append to a fragment
  let frag = document.createDocumentFragment();
  const inputs = new Map();     // input id → {text, delivery}
  const pending = new Map();    // input id → {text, delivery, seq}
  const tools = new Map();      // call id → {el parts, started}
  const inters = new Map();     // interaction id → {kind, payload, status, result, el}
  const execs = new Map();      // execution id → run record
  const open = new Set();       // executions not finished
  let streaming = null;         // {el, text} of the answer being written
  let thinking = null;          // {el, text} of reasoning being written
  let closed = false;

  // ---- skeleton ----
  const stateBadge = h("span", { class: "badge status-idle", "data-test": "session-state" }, "idle");
  const titleEl = h("h1", { class: "session-title" }, "Session");
  const metaProfile = h("span");
  const metaRuntime = h("span");
  const metaUsage = h("span", { "data-test": "session-usage" });
  const metaCost = h("span", { "data-test": "session-cost" });
  const live = h("span", { class: "live-dot", "data-state": "connecting" }, "connecting");
  const stopButton = h("button", { type: "button", class: "danger", "data-test": "stop", disabled: true }, "Stop");
  const resetButton = h("button", { type: "button", class: "ghost", "data-test": "reset", "aria-expanded": "false" },
    "New context");
  const resetConfirm = h("button", { type: "button", class: "danger", "data-test": "reset-confirm" }, "Reset context");
  const resetCancel = h("button", { type: "button", class: "ghost" }, "Keep");
  const forkButton = h("button", { type: "button", class: "ghost", "data-test": "fork", disabled: true,
    title: "A new session with this conversation, workspace and agent session as they were at the end of the last run" },
  "Fork");
  const resetBox = h("div", { class: "inline-confirm", role: "group", "aria-label": "Confirm reset", hidden: true },
    h("span", null, "Start a new context? The agent forgets this conversation; the history stays here."),
    resetConfirm, resetCancel);

  const transcript = h("div", {
    class: "transcript", "data-test": "transcript", role: "log", "aria-live": "polite", "aria-relevant": "additions",
    "aria-label": "Transcript",
  });
  const pendingBox = h("div", { class: "pending", "data-test": "pending-inputs", hidden: true });
  const waitingHint = h("p", { class: "waiting-hint", hidden: true },
    "The agent is waiting for your answer to its question above.");

  const textarea = h("textarea", {
    name: "text", id: "composer-text", rows: "3", required: true, placeholder: "Message the agent (Enter sends, Shift+Enter for a new line)",
  });
  const delivery = h("select", { name: "delivery", id: "composer-delivery" },
    h("option", { value: "steer" }, "Send now"),
    h("option", { value: "queue" }, "Queue after this turn"));
  const sendButton = h("button", { type: "submit", class: "primary", "data-test": "send" }, "Send");
  const composerHint = h("span", { class: "muted small composer-hint" }, "Sending starts a turn.");
  const composer = h("form", { class: "composer", "data-test": "composer", "aria-label": "Message the agent" },
    h("label", { for: "composer-text", class: "sr-only" }, "Message"),
    textarea,
    h("div", { class: "composer-bar" },
      h("label", { for: "composer-delivery", class: "sr-only" }, "Delivery"), delivery, composerHint, sendButton));

  const runsList = h("ol", { class: "runs", "data-test": "runs", reversed: true });
  const runsEmpty = h("p", { class: "empty" }, "No runs yet.");
  const runOrder = [];  // every run, oldest first; the newest RUNS_SHOWN are drawn at first
  const olderRuns = h("button", { type: "button", class: "ghost small", hidden: true }, "Show older runs");

  const view = h("section", { class: "session-view", "data-test": "session-view", "data-session-id": id, "data-last-seq": "0" },
    h("div", { class: "view-head" },
      h("div", { class: "head-title" },
        h("a", { href: "#/sessions", class: "back" }, "← Sessions"),
        h("div", { class: "title-line" }, titleEl, stateBadge),
        h("div", { class: "meta" }, h("span", { class: "mono" }, id), metaProfile, metaRuntime, metaUsage, metaCost, live)),
      h("div", { class: "head-actions" }, stopButton, forkButton, resetButton)),
    resetBox,
    h("div", { class: "session-layout" },
      h("div", { class: "session-main" }, transcript, waitingHint, pendingBox, composer),
      h("aside", { class: "session-side", "aria-label": "Runs" }, h("h2", null, "Runs"), runsEmpty, runsList, olderRuns)));

  // ---- header and controls ----

  function status() {
    if (open.size) return "running";
    for (const i of inters.values()) if (i.status === "pending") return "waiting";
    return "idle";
  }

  function drawState() {
    const s = status();
    stateBadge.textContent = s;
    stateBadge.className = `badge status-${s}`;
    view.dataset.status = s;
    stopButton.disabled = s !== "running";
    forkButton.disabled = ![...execs.values()].some((x) => x.finishedSeq);
    waitingHint.hidden = s !== "waiting";
    composerHint.textContent = s === "running"
      ? (delivery.value === "queue" ? "Queued: runs after this turn." : "Steers the running turn.")
      : "Starts a turn.";
    titleEl.textContent = title || "Untitled session";
    metaProfile.textContent = `profile ${profile || "default"}`;
    metaRuntime.textContent = runtime ? `runtime ${runtime}` : "no runs yet";
    const total = { input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, cost_usd: null, cost_status: "" };
    let priced = 0, unpriced = 0;
    for (const x of execs.values()) {
      if (!x.usage) continue;
      total.input_tokens += x.usage.input_tokens || 0;
      total.output_tokens += x.usage.output_tokens || 0;
      total.cached_input_tokens += x.usage.cached_input_tokens || 0;
      if (typeof x.usage.cost_usd === "number") { total.cost_usd = (total.cost_usd || 0) + x.usage.cost_usd; priced++; }
      else if (x.usage.input_tokens || x.usage.output_tokens) unpriced++;
    }
    total.cost_status = priced && unpriced ? "partial" : unpriced ? "unpriced" : priced ? "reported" : "";
    metaUsage.textContent = fmtUsageTokens(total);
    metaCost.textContent = `cost ${fmtCost(total)}`;
  }

  delivery.addEventListener("change", drawState);

  // After the request the button follows the state again (the run may have ended meanwhile).
  stopButton.addEventListener("click", () => act(stopButton, () => post(`/v1/sessions/${enc(id)}/interrupt`)).then(drawState));
  // The fork opens in its own view; `at` absent: the last finished run.
  async function forkAt(button, at) {
    await act(button, async () => {
      const made = await post(`/v1/sessions/${enc(id)}/fork`, at ? { at } : {});
      location.hash = `#/sessions/${enc(made.session.id)}`;
    });
  }
  forkButton.addEventListener("click", () => forkAt(forkButton));
  resetButton.addEventListener("click", () => {
    resetBox.hidden = !resetBox.hidden;
    resetButton.setAttribute("aria-expanded", String(!resetBox.hidden));
    if (!resetBox.hidden) resetConfirm.focus();
  });
  resetCancel.addEventListener("click", () => { resetBox.hidden = true; resetButton.setAttribute("aria-expanded", "false"); resetButton.focus(); });
  resetConfirm.addEventListener("click", () => act(resetConfirm, async () => {
    await post(`/v1/sessions/${enc(id)}/reset`);
    resetBox.hidden = true;
    resetButton.setAttribute("aria-expanded", "false");
  }));

  composer.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = textarea.value;
    if (!text.trim()) { textarea.focus(); return; }
    act(sendButton, async () => {
      await post(`/v1/sessions/${enc(id)}/inputs`, { text, delivery: delivery.value });
      // Keep what was typed while the message was being sent.
      if (textarea.value.startsWith(text)) textarea.value = textarea.value.slice(text.length).replace(/^\n/, "");
      textarea.focus();
    });
  });
  textarea.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing && !e.altKey && !e.ctrlKey && !e.metaKey) {
      e.preventDefault();
      composer.requestSubmit();
    }
  });

  // ---- transcript items ----

  let pinned = true;  // following the end of the transcript
  const onScroll = () => {
    const doc = document.documentElement;
    pinned = doc.scrollHeight - (window.scrollY + window.innerHeight) < 120;
  };
  window.addEventListener("scroll", onScroll, { passive: true });
  let scrollQueued = false;
  function stick() {
    if (building || !pinned || scrollQueued) return;
    scrollQueued = true;
    requestAnimationFrame(() => {
      scrollQueued = false;
      window.scrollTo(0, document.documentElement.scrollHeight);
    });
  }

  function add(el) {
    if (building) frag.appendChild(el);
    else { transcript.appendChild(el); stick(); }
    return el;
  }

  function messageEl(role, seq, text, attrs) {
    const label = { user: "You", assistant: "Agent", synthetic: "Tether", tool: "Tool" }[role] || role;
    const body = h("div", { class: "msg-text md", "data-test": "message-text" });
    if (role === "synthetic") body.textContent = text;
    else body.appendChild(renderMarkdown(text));
    return h("article", Object.assign({ class: `msg msg-${role}`, "data-test": "message", "data-role": role, "data-seq": seq }, attrs || {}),
      h("div", { class: "msg-head" }, h("span", { class: "who" }, label)), body);
  }

  function notice(kind, text, seq) {
    return add(h("div", { class: `notice notice-${safeClass(kind)}`, "data-test": "notice", "data-kind": kind, "data-seq": seq, role: "note" },
      text));
  }

  function summaryOf(name, input) {
    if (input && typeof input === "object") {
      const c = input.command ?? input.cmd;
      if (typeof c === "string") return c;
      if (Array.isArray(c)) return c.join(" ");
      if (typeof input.path === "string") return input.path;
      if (typeof input.file_path === "string") return input.file_path;
      if (typeof input.question === "string") return input.question;
    }
    const s = typeof input === "string" ? input : JSON.stringify(input ?? "");
    return s && s !== "{}" ? s : "";
  }

  function toolCalled(ev) {
    const d = ev.data;
    const name = String(d.name ?? "tool");
    const statusEl = h("span", { class: "badge status-running", "data-test": "tool-status" }, "running");
    const duration = h("span", { class: "muted small", "data-test": "tool-duration" }, "");
    const out = h("pre", { class: "tool-out", "data-test": "tool-output", hidden: true });
    const outLabel = h("h4", { hidden: true }, "Output");
    const details = h("details", { class: "tool-call", "data-test": "tool-call", "data-call-id": d.call_id, "data-status": "running" },
      h("summary", null,
        h("span", { class: "tool-name mono", "data-test": "tool-name" }, name),
        h("span", { class: "tool-summary mono" }, clip(summaryOf(name, d.input), 160).split("\n")[0]),
        statusEl, duration),
      h("div", { class: "tool-body" },
        h("h4", null, "Input"),
        h("pre", { class: "tool-in", "data-test": "tool-input" }, clip(pretty(d.input), 20000)),
        d.kind && d.kind !== "local" ? h("p", { class: "muted small" }, `Run by: ${d.kind}`) : null,
        outLabel, out));
    const wrap = add(h("div", { class: "msg msg-tool", "data-test": "message", "data-role": "tool", "data-seq": ev.seq }, details));
    tools.set(d.call_id, { details, statusEl, duration, out, outLabel, started: ev.time, progress: "", wrap });
  }

  function toolEnded(ev, ok) {
    const t = tools.get(ev.data.call_id);
    if (!t) return;
    const s = ok ? "succeeded" : "failed";
    t.statusEl.textContent = s;
    t.statusEl.className = `badge status-${s}`;
    t.details.dataset.status = s;
    t.duration.textContent = fmtDuration(ev.time - t.started);
    t.outLabel.textContent = ok ? "Output" : "Error";
    t.outLabel.hidden = false;
    t.out.hidden = false;
    t.out.dataset.test = ok ? "tool-output" : "tool-error";
    t.out.classList.toggle("error", !ok);
    const text = ok ? String(ev.data.content ?? "") : String(ev.data.error ?? "");
    t.out.textContent = clip(text + (ok && ev.data.output_path ? `\n(full output: ${ev.data.output_path})` : ""), 20000);
  }

  function toolProgress(ev) {
    const t = tools.get(ev.data && ev.data.call_id);
    if (!t || t.details.dataset.status !== "running") return;
    t.progress = clip(t.progress + String(ev.data.text ?? ""), 20000);
    t.outLabel.textContent = "Output so far";
    t.outLabel.hidden = false;
    t.out.hidden = false;
    t.out.textContent = t.progress;
  }

  function streamDelta(ev) {
    const text = String(ev.data && ev.data.text || "");
    if (!text) return;
    if (!streaming) {
      const body = h("div", { class: "msg-text streaming-text", "data-test": "message-text" });
      const node = document.createTextNode("");
      body.appendChild(node);
      const el = h("article", { class: "msg msg-assistant", "data-test": "message", "data-role": "assistant", "data-streaming": "true", "aria-busy": "true" },
        h("div", { class: "msg-head" }, h("span", { class: "who" }, "Agent"), h("span", { class: "typing" }, "writing…")), body);
      transcript.appendChild(el);
      streaming = { el, node };
    }
    streaming.node.appendData(text);
    stick();
  }

  function reasoningDelta(ev) {
    const text = String(ev.data && ev.data.text || "");
    if (!text) return;
    if (!thinking) {
      const pre = h("div", { class: "reasoning-text" });
      const node = document.createTextNode("");
      pre.appendChild(node);
      const el = h("details", { class: "reasoning", open: true, "data-streaming": "true" }, h("summary", null, "Thinking…"), pre);
      transcript.appendChild(el);
      thinking = { el, node };
    }
    thinking.node.appendData(text);
    stick();
  }

  function reasoningEl(text) {
    return h("details", { class: "reasoning", "data-test": "reasoning" }, h("summary", null, "Reasoning"),
      h("div", { class: "reasoning-text" }, clip(text, 50000)));
  }

  // ---- pending inputs ----

  let pendingQueued = false;
  function drawPending() {
    if (building) return;
    if (pendingQueued) return;
    pendingQueued = true;
    queueMicrotask(() => {
      pendingQueued = false;
      clear(pendingBox);
      pendingBox.hidden = pending.size === 0;
      if (!pending.size) return;
      pendingBox.appendChild(h("h2", { class: "small-head" }, "Waiting to be delivered"));
      for (const [iid, p] of pending) {
        const cancel = h("button", { type: "button", class: "ghost small", "data-test": "cancel-input" }, "Cancel");
        cancel.addEventListener("click", () => act(cancel, () => del(`/v1/sessions/${enc(id)}/inputs/${enc(iid)}`)));
        pendingBox.appendChild(h("div", { class: "pending-input", "data-test": "pending-input", "data-input-id": iid },
          h("span", { class: "chip" }, p.delivery === "queue" ? "queued" : "steer"),
          h("span", { class: "pending-text" }, clip(p.text, 300)), cancel));
      }
    });
  }

  // ---- runs ----

  function runEl(x) {
    const outcome = x.outcome || "running";
    x.outcomeEl = h("span", { class: `badge status-${safeClass(outcome)}`, "data-test": "run-outcome" }, outcome);
    x.durEl = h("span", { "data-test": "run-duration" }, x.finished ? fmtDuration(x.finished - x.started) : "running");
    x.tokEl = h("span", { "data-test": "run-tokens" }, x.usage ? fmtUsageTokens(x.usage) : "–");
    x.costEl = h("span", { "data-test": "run-cost" }, x.usage ? fmtCost(x.usage) : "–");
    x.noteEl = h("p", { class: "run-note small", hidden: true });
    x.forkEl = h("button", { type: "button", class: "ghost small", "data-test": "fork-run", hidden: !x.finishedSeq,
      title: "Fork the session as it was when this run ended" }, "Fork here");
    x.forkEl.addEventListener("click", () => forkAt(x.forkEl, x.finishedSeq));
    x.el = h("li", { class: "run", "data-test": "run", "data-execution-id": x.id },
      h("div", { class: "run-head" }, x.outcomeEl, h("time", { class: "muted small", title: fmtTime(x.started) }, fmtTime(x.started))),
      h("div", { class: "run-figures small" }, x.durEl, x.tokEl, x.costEl),
      h("div", { class: "muted small" }, [x.runtime, x.model].filter(Boolean).join(" · ")),
      x.noteEl, x.forkEl);
    return x.el;
  }

  function runUpdate(x) {
    if (!x.el) return;
    const outcome = x.outcome || "running";
    x.outcomeEl.textContent = outcome;
    x.outcomeEl.className = `badge status-${safeClass(outcome)}`;
    x.durEl.textContent = x.finished ? fmtDuration(x.finished - x.started) : "running";
    x.tokEl.textContent = x.usage ? fmtUsageTokens(x.usage) : "–";
    x.costEl.textContent = x.usage ? fmtCost(x.usage) : "–";
    const note = [x.reason && `reason: ${x.reason}`, x.error].filter(Boolean).join(" — ");
    x.noteEl.textContent = note;
    x.forkEl.hidden = !x.finishedSeq;
    x.noteEl.hidden = !note;
  }

  // ---- applying events ----

  function apply(ev) {
    const d = ev.data && typeof ev.data === "object" ? ev.data : {};
    switch (ev.type) {
      case "session.created":
        title = String(d.title ?? "");
        profile = String(d.profile || "default");
        break;
      case "session.updated":
        title = String(d.title ?? "");
        break;
      case "session.forked":
        if (d.fork === id) {
          const from = h("a", { href: `#/sessions/${enc(String(d.from))}`, "data-test": "forked-from-link" }, String(d.from));
          add(h("div", { class: "notice notice-fork", "data-test": "notice", "data-kind": "fork", "data-seq": ev.seq, role: "note" },
            "Forked from ", from, ` at seq ${d.at}: the conversation above is a copy; the workspace is as it was then.`));
        } else {
          const link = h("a", { href: `#/sessions/${enc(String(d.fork))}`, "data-test": "fork-link" }, String(d.fork));
          add(h("div", { class: "notice notice-fork", "data-test": "notice", "data-kind": "fork", "data-seq": ev.seq, role: "note" },
            `Forked at seq ${d.at} into `, link, "."));
        }
        break;
      case "session.reset":
        generation = Number(d.generation) || generation + 1;
        notice("reset", `New context (generation ${generation}): the agent starts afresh; the history above is kept.`, ev.seq);
        break;
      case "input.admitted":
        inputs.set(d.input_id, { text: String(d.prompt ?? ""), delivery: d.delivery, seq: ev.seq });
        pending.set(d.input_id, { text: String(d.prompt ?? ""), delivery: d.delivery, seq: ev.seq });
        drawPending();
        break;
      case "input.promoted": {
        const input = inputs.get(d.input_id);
        pending.delete(d.input_id);
        drawPending();
        add(messageEl("user", ev.seq, input ? input.text : "", { "data-message-id": d.input_id }));
        break;
      }
      case "input.cancelled":
        pending.delete(d.input_id);
        drawPending();
        break;
      case "input.returned": {
        // A failed execution gave it back: it waits again, in its admission place.
        const input = inputs.get(d.input_id);
        const sel = `article[data-role="user"][data-message-id="${CSS.escape(String(d.input_id))}"]`;
        const el = (frag && frag.querySelector(sel)) || transcript.querySelector(sel);
        if (el) el.remove();
        pending.set(d.input_id, { text: input ? input.text : "", delivery: input ? input.delivery : "steer", seq: input ? input.seq : ev.seq });
        drawPending();
        break;
      }
      case "execution.started": {
        const x = { id: d.execution_id, started: ev.time, runtime: String(d.runtime ?? ""), model: String(d.model ?? ""), outcome: null, usage: null };
        execs.set(x.id, x);
        open.add(x.id);
        if (x.runtime) runtime = x.runtime;
        runsEmpty.hidden = true;
        runOrder.push(x);
        if (!building) runsList.prepend(runEl(x));
        break;
      }
      case "execution.recovered":
        open.add(d.execution_id);
        notice("restart", `The run was picked up again on ${d.node || "a node"} (attempt ${d.attempt ?? "?"}).`, ev.seq);
        break;
      case "execution.finished": {
        const x = execs.get(d.execution_id);
        open.delete(d.execution_id);
        if (x) {
          x.outcome = String(d.outcome || "");
          x.finished = ev.time;
          x.usage = d.usage || null;
          x.reason = String(d.reason || "");
          x.error = String(d.error || "");
          x.finishedSeq = ev.seq;
          runUpdate(x);
        }
        if (d.outcome === "failed") notice("error", `The run failed${d.error ? `: ${d.error}` : ""}.`, ev.seq);
        else if (d.outcome === "interrupted") notice("interrupted", `The run was stopped${d.reason ? ` (${d.reason})` : ""}.`, ev.seq);
        dropStreams();
        break;
      }
      case "step.retry_scheduled":
        notice("retry", `The model request failed${d.error ? ` (${d.error})` : ""}; retrying (attempt ${d.attempt ?? "?"}).`, ev.seq);
        break;
      case "text.ended": {
        const el = messageEl("assistant", ev.seq, String(d.text ?? ""), { "data-message-id": d.message_id });
        if (streaming && streaming.el.isConnected) { streaming.el.replaceWith(el); stick(); }
        else add(el);
        streaming = null;
        break;
      }
      case "reasoning.ended": {
        const el = reasoningEl(String(d.text ?? ""));
        if (thinking && thinking.el.isConnected) thinking.el.replaceWith(el);
        else add(el);
        thinking = null;
        break;
      }
      case "tool.called":
        toolCalled(ev);
        break;
      case "tool.succeeded":
        toolEnded(ev, true);
        break;
      case "tool.failed":
        toolEnded(ev, false);
        break;
      case "interaction.requested": {
        const inter = { id: d.interaction_id, kind: String(d.kind || ""), payload: d.payload, status: "pending", result: null };
        inters.set(inter.id, inter);
        inter.el = add(interactionBlock(inter, (result, done) => { inter.el = done; inter.status = "answered-locally"; drawState(); }));
        break;
      }
      case "interaction.resolved": {
        const inter = inters.get(d.interaction_id);
        if (!inter) break;
        inter.status = String(d.status || "answered");
        inter.result = d.result;
        // The block shown for it (in the transcript, or in the fragment of the first render).
        const current = inter.el && inter.el.parentNode ? inter.el
          : transcript.querySelector(`[data-interaction-id="${CSS.escape(inter.id)}"]`);
        const el = resolvedBlock(inter);
        if (current) current.replaceWith(el);
        else add(el);
        inter.el = el;
        break;
      }
      case "synthetic":
        add(messageEl("synthetic", ev.seq, String(d.text ?? ""), { "data-reason": String(d.reason || "") }));
        break;
      case "compaction.ended":
        notice("compaction", "Earlier context was compacted into a summary.", ev.seq);
        break;
      case "env.lease.acquired":
        notice("environment", `Runs in ${d.environment}: lease ${d.outcome}${d.warm ? " (kept warm)" : ""}.`, ev.seq);
        break;
      case "env.lease.released":
        notice("environment", `The lease in ${d.environment} was released (${d.reason}).`, ev.seq);
        break;
      case "task.status_changed":
        notice("task", `Task: ${d.from} → ${d.to}${d.reason ? ` (${d.reason})` : ""}`, ev.seq);
        break;
      case "document.revised":
        notice("task", `The plan was revised by ${d.author || "someone"}.`, ev.seq);
        break;
      case "document.accepted":
        notice("task", "The plan was approved.", ev.seq);
        break;
      default:
        break;  // other events change nothing shown here
    }
  }

  // The answer or reasoning being streamed is given up (a turn ended without it, or deltas were missed).
  function dropStreams() {
    if (streaming) { streaming.el.remove(); streaming = null; }
    if (thinking) { thinking.el.remove(); thinking = null; }
  }

  // ---- reading the log ----

  async function readAfter(after) {
    const events = [];
    for (;;) {
      const page = await get(`/v1/sessions/${enc(id)}/events?after=${after}&limit=${PAGE}`);
      const list = Array.isArray(page.events) ? page.events : [];
      for (const ev of list) events.push(ev);
      if (list.length) after = list[list.length - 1].seq;
      if (!page.more || !list.length) break;
    }
    return events;
  }

  function applyDurable(ev) {
    if (typeof ev.seq !== "number" || ev.seq <= lastSeq) return;  // seen already
    try { apply(ev); } catch (e) { console.error("event", ev.type, e); }
    lastSeq = ev.seq;
  }

  function finishBatch() {
    view.dataset.lastSeq = String(lastSeq);
    drawState();
  }

  // Live events go through one queue: a gap in the seqs is read from the log first.
  const queue = [];
  let pumping = false;
  async function pump() {
    if (pumping) return;
    pumping = true;
    try {
      while (queue.length && !closed) {
        const ev = queue.shift();
        if (ev.ephemeral === true || typeof ev.seq !== "number") {
          if (ev.type === "text.delta") streamDelta(ev);
          else if (ev.type === "reasoning.delta") reasoningDelta(ev);
          else if (ev.type === "tool.progress") toolProgress(ev);
          continue;
        }
        if (ev.seq > lastSeq + 1) {
          try {
            for (const missed of await readAfter(lastSeq)) if (missed.seq < ev.seq) applyDurable(missed);
          } catch (e) { showError(e); }
        }
        applyDurable(ev);
        if (!queue.length) finishBatch();
      }
      finishBatch();
    } finally {
      pumping = false;
    }
  }

  // ---- first render ----

  const [summary, events] = await Promise.all([
    get(`/v1/sessions/${enc(id)}`).catch((e) => { if (e.status === 404) return null; throw e; }),
    readAfter(0).catch((e) => { if (e.status === 404) return null; throw e; }),
  ]);
  if (!summary || !events) {
    root.appendChild(h("div", { class: "card" }, h("h1", null, "No such session"),
      h("p", null, "There is no session ", h("code", null, id), ". "), h("a", { href: "#/sessions" }, "Back to the sessions")));
    return () => {};
  }
  const readAt = performance.now();
  const s = summary.session || {};
  title = s.title || "";
  profile = s.profile || "default";
  runtime = s.runtime || "";
  for (const ev of events) applyDurable(ev);
  building = false;
  transcript.appendChild(frag);
  frag = null;
  let emptyNote = null;
  if (!transcript.firstChild) {
    emptyNote = transcript.appendChild(h("p", { class: "empty transcript-empty" }, "Nothing here yet: send the first message."));
  }
  // The newest runs; older ones on request.
  const runsFrag = document.createDocumentFragment();
  for (let i = runOrder.length - 1; i >= Math.max(0, runOrder.length - RUNS_SHOWN); i--) runsFrag.appendChild(runEl(runOrder[i]));
  runsList.appendChild(runsFrag);
  for (const x of runOrder) runUpdate(x);
  if (runOrder.length > RUNS_SHOWN) {
    olderRuns.hidden = false;
    olderRuns.textContent = `Show ${runOrder.length - RUNS_SHOWN} older runs`;
    olderRuns.addEventListener("click", () => {
      const more = document.createDocumentFragment();
      for (let i = runOrder.length - RUNS_SHOWN - 1; i >= 0; i--) { more.appendChild(runEl(runOrder[i])); runUpdate(runOrder[i]); }
      runsList.appendChild(more);
      olderRuns.hidden = true;
    }, { once: true });
  }
  finishBatch();
  drawPending();
  root.appendChild(view);
  window.scrollTo(0, document.documentElement.scrollHeight);
  measureRender("tether:session", readAt);

  function take(events) {
    if (!events.length) return;
    if (emptyNote) { emptyNote.remove(); emptyNote = null; }
    for (const ev of events) queue.push(ev);
    pump();
  }
  const stream = new LiveStream((after) => `/v1/sessions/${enc(id)}/events?after=${after}`, {
    lastSeq: () => lastSeq,
    onEvent: (ev) => take([ev]),
    onState: (st) => { live.dataset.state = st; live.textContent = st; },
    onOpen: (again) => { if (again) dropStreams(); },
    // Without a stream (every slot taken): the durable events, read after the last one shown.
    poll: async () => take(await readAfter(lastSeq)),
  });

  return () => {
    closed = true;
    stream.close();
    window.removeEventListener("scroll", onScroll);
  };
}

