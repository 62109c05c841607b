#!/usr/bin/env node
// A fake ACP agent (Agent Client Protocol: JSON-RPC 2.0 on stdio, one
// object per line) for the runtime's own tests; node, no dependencies.
//
// What a turn does is chosen by the prompt's text: the last of its lines
// (trimmed) that reads as one of
//   echo X     replies X
//   recall     replies every earlier prompt of the session, joined by " | "
//              ("(nothing)" when there is none)
//   crash      one chunk, then "fake agent: crashing" on stderr and exit 3
//              mid-turn
//   hang       prints nothing and never answers, not even session/cancel
//   slow N     replies "slept N" after N ms; session/cancel ends it at once
//              with stopReason "cancelled"
// and otherwise replies "ok". A reply is an agent_message_chunk, then the
// prompt's result {stopReason: "end_turn", usage: {inputTokens:
// ceil(prompt chars / 4), outputTokens: ceil(reply chars / 4), totalTokens}}.
//
// Sessions: session/new makes one; the prompts of completed turns are kept
// in $HOME/.fake-acp-sessions.json keyed by session id, so session/load in
// a new process continues it (it replays the history as
// user_message_chunk / agent_message_chunk updates first, and fails -32002
// for a session it does not know). It claims the loadSession capability.
"use strict";

const fs = require("fs");
const path = require("path");
const readline = require("readline");
const crypto = require("crypto");

const store = path.join(process.env.HOME || ".", ".fake-acp-sessions.json");
const running = new Map(); // sessionId -> {id, timer}

function load() {
  try {
    return JSON.parse(fs.readFileSync(store, "utf8"));
  } catch {
    return {};
  }
}

function save(all) {
  fs.writeFileSync(store + ".tmp", JSON.stringify(all));
  fs.renameSync(store + ".tmp", store);
}

function send(msg) {
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
}

function update(sessionId, u) {
  send({ method: "session/update", params: { sessionId, update: u } });
}

function chunk(sessionId, kind, text) {
  update(sessionId, { sessionUpdate: kind, content: { type: "text", text } });
}

function directive(text) {
  const lines = text.split("\n").map((l) => l.trim());
  for (let i = lines.length - 1; i >= 0; --i) {
    const l = lines[i];
    if (/^echo /.test(l) || /^(recall|crash|hang)$/.test(l) || /^slow \d+$/.test(l)) return l;
  }
  return "";
}

function finish(id, sessionId, promptText, reply) {
  running.delete(sessionId);
  const all = load();
  (all[sessionId] = all[sessionId] || []).push(promptText);
  save(all);
  chunk(sessionId, "agent_message_chunk", reply);
  const inputTokens = Math.ceil(promptText.length / 4);
  const outputTokens = Math.ceil(reply.length / 4);
  send({
    id,
    result: { stopReason: "end_turn", usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens } },
  });
}

function prompt(id, p) {
  const sessionId = p.sessionId;
  const all = load();
  if (!all[sessionId]) {
    send({ id, error: { code: -32002, message: "Resource not found: " + sessionId } });
    return;
  }
  const text = (p.prompt || []).map((b) => (b.type === "text" ? b.text : "")).join("");
  const d = directive(text);
  if (d.startsWith("echo ")) return finish(id, sessionId, text, d.slice(5));
  if (d === "recall") return finish(id, sessionId, text, all[sessionId].length ? all[sessionId].join(" | ") : "(nothing)");
  if (d === "crash") {
    chunk(sessionId, "agent_message_chunk", "about to crash");
    process.stderr.write("fake agent: crashing\n", () => process.exit(3));
    return;
  }
  if (d === "hang") return;
  if (d.startsWith("slow ")) {
    const ms = Number(d.slice(5));
    const timer = setTimeout(() => finish(id, sessionId, text, "slept " + ms), ms);
    running.set(sessionId, { id, timer });
    return;
  }
  finish(id, sessionId, text, "ok");
}

function handle(msg) {
  const { id, method } = msg;
  const p = msg.params || {};
  if (method === "initialize") {
    send({
      id,
      result: {
        protocolVersion: 1,
        agentCapabilities: { loadSession: true, promptCapabilities: {} },
        agentInfo: { name: "fake-acp-agent", version: "1.0.0" },
        authMethods: [],
      },
    });
  } else if (method === "session/new") {
    const sessionId = "fake-" + crypto.randomBytes(8).toString("hex");
    const all = load();
    all[sessionId] = [];
    save(all);
    send({ id, result: { sessionId } });
  } else if (method === "session/load") {
    const history = load()[p.sessionId];
    if (!history) {
      send({ id, error: { code: -32002, message: "Resource not found: " + p.sessionId } });
      return;
    }
    for (const earlier of history) chunk(p.sessionId, "user_message_chunk", earlier);
    send({ id, result: {} });
  } else if (method === "session/prompt") {
    prompt(id, p);
  } else if (method === "session/cancel") {
    const turn = running.get(p.sessionId);
    if (!turn) return;
    clearTimeout(turn.timer);
    running.delete(p.sessionId);
    send({ id: turn.id, result: { stopReason: "cancelled" } });
  } else if (id !== undefined && method !== undefined) {
    send({ id, error: { code: -32601, message: "Method not found: " + method } });
  }
}

// FAKE_ACP_START_DELAY_MS: answers nothing for that long after starting (a
// slow start: the lines read meanwhile are answered after it, in order).
const startDelay = Number(process.env.FAKE_ACP_START_DELAY_MS || 0);
const early = [];
let ready = startDelay <= 0;
let closed = false;
if (!ready)
  setTimeout(() => {
    ready = true;
    for (const m of early.splice(0)) handle(m);
    if (closed) process.exit(0);
  }, startDelay);

const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  if (!line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    process.stderr.write("fake agent: not JSON: " + line.slice(0, 100) + "\n");
    return;
  }
  if (ready) handle(msg);
  else early.push(msg);
});
rl.on("close", () => {
  closed = true;
  if (ready) process.exit(0);
});
